// The C++ side of torch_save_cases.py (see torch_save_cases.h).
#include "unit/serialization/torch_save_cases.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>

#include "testing/testing.h"

namespace zoobench::serialization::torch_save_cases {
namespace {

int64_t bits_of(double v) {
  int64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return bits;
}

std::string hex_of(const void* data, size_t size) {
  std::string hex;
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) hex += fmt::format("{:02x}", bytes[i]);
  return hex;
}

// The C++ twin of torch_save_cases.describe.
class Describer {
 public:
  std::string operator()(const c10::IValue& value) {
    visit(value, "obj");
    return out_;
  }

 private:
  void visit(const c10::IValue& v, const std::string& path) {
    if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      const void* ptr = t.storage().data_ptr().get();
      std::string sid = "none";
      if (ptr != nullptr) {
        auto [it, inserted] = storages_.try_emplace(ptr, std::to_string(storages_.size()));
        sid = it->second;
      }
      at::Tensor flat = t.contiguous();
      out_ += fmt::format(
          "{} tensor {} sizes=[{}] strides=[{}] offset={} requires_grad={} storage={} data={}\n",
          path, c10::toString(t.scalar_type()), fmt::join(t.sizes(), ", "),
          fmt::join(t.strides(), ", "), t.storage_offset(), t.requires_grad() ? 1 : 0, sid,
          hex_of(flat.data_ptr(), flat.numel() * flat.element_size()));
    } else if (v.isBool()) {
      out_ += fmt::format("{} bool {}\n", path, v.toBool() ? 1 : 0);
    } else if (v.isInt()) {
      out_ += fmt::format("{} int {}\n", path, v.toInt());
    } else if (v.isDouble()) {
      out_ += fmt::format("{} float {}\n", path, bits_of(v.toDouble()));
    } else if (v.isComplexDouble()) {
      auto z = v.toComplexDouble();
      out_ += fmt::format("{} complex {} {}\n", path, bits_of(z.real()), bits_of(z.imag()));
    } else if (v.isString()) {
      const std::string& s = v.toStringRef();
      out_ += fmt::format("{} str {}\n", path, hex_of(s.data(), s.size()));
    } else if (v.isNone()) {
      out_ += fmt::format("{} none\n", path);
    } else if (v.isDevice()) {
      out_ += fmt::format("{} device {}\n", path, v.toDevice().str());
    } else if (v.isTuple() || v.isList()) {
      auto elements = v.isTuple() ? v.toTupleRef().elements().asArrayRef() : v.toListRef();
      out_ += fmt::format("{} {} {}\n", path, v.isTuple() ? "tuple" : "list", elements.size());
      for (size_t i = 0; i < elements.size(); ++i)
        visit(elements[i], fmt::format("{}[{}]", path, i));
    } else if (v.isGenericDict()) {
      auto dict = v.toGenericDict();
      out_ += fmt::format("{} dict {}\n", path, dict.size());
      for (const auto& entry : dict) {
        std::string key = entry.key().isString() ? "'" + entry.key().toStringRef() + "'"
                                                 : std::to_string(entry.key().toInt());
        visit(entry.value(), fmt::format("{}[{}]", path, key));
      }
    } else {
      ADD_FAILURE() << "cannot describe " << v.tagKind() << " at " << path;
    }
  }

  std::string out_;
  std::map<const void*, std::string> storages_;
};

}  // namespace

std::string cases_script() {
  return zoobench::testing::repo_root() + "/tests/unit/serialization/torch_save_cases.py";
}

void run_cases_function(const std::string& function, const std::string& args) {
  zoobench::testing::run_python(
      fmt::format("import sys\nsys.path.insert(0, '{}')\nimport torch_save_cases\n"
                  "torch_save_cases.{}({})\n",
                  std::filesystem::path(cases_script()).parent_path().string(), function, args));
}

std::string describe(const c10::IValue& value) { return Describer()(value); }

}  // namespace zoobench::serialization::torch_save_cases
