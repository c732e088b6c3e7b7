// Pickles IValues the way Python's torch.save does (protocol 2, tensors through
// torch._utils._rebuild_tensor_v2 and typed storage names), using only globals that
// torch.load's weights_only unpickler accepts.
#include <ATen/ATen.h>
#include <fmt/format.h>

#include <cstring>
#include <stdexcept>
#include <unordered_map>

#include "zoobench/serialization/pickle.h"

namespace zoobench::serialization::detail {
namespace {

class Pickler {
 public:
  explicit Pickler(std::vector<StorageRecord>& storages) : storages_(storages) {}

  std::string run(const c10::IValue& value) {
    out_ += "\x80\x02";  // PROTO 2
    push(value);
    out_ += '.';  // STOP
    return std::move(out_);
  }

 private:
  void push(const c10::IValue& value) {
    if (value.isNone()) {
      out_ += 'N';
    } else if (value.isBool()) {
      out_ += value.toBool() ? '\x88' : '\x89';
    } else if (value.isInt()) {
      push_int(value.toInt());
    } else if (value.isDouble()) {
      push_double(value.toDouble());
    } else if (value.isString()) {
      push_string(value.toStringRef());
    } else if (value.isTensor()) {
      push_tensor(value.toTensor());
    } else if (value.isTuple()) {
      push_tuple(value.toTupleRef().elements().asArrayRef());
    } else if (value.isList()) {
      out_ += ']';  // EMPTY_LIST
      auto elements = value.toListRef();
      if (!elements.empty()) {
        out_ += '(';
        for (const auto& element : elements) push(element);
        out_ += 'e';  // APPENDS
      }
    } else if (value.isGenericDict()) {
      out_ += '}';  // EMPTY_DICT
      const auto dict = value.toGenericDict();
      if (!dict.empty()) {
        out_ += '(';
        for (const auto& entry : dict) {
          if (!entry.key().isString() && !entry.key().isInt()) {
            throw std::runtime_error(fmt::format(
                "save_for_python: a dict key of type {} (only str and int keys are written)",
                entry.key().tagKind()));
          }
          push(entry.key());
          push(entry.value());
        }
        out_ += 'u';  // SETITEMS
      }
    } else if (value.isDevice()) {
      push_global("torch", "device");
      push_string(value.toDevice().str());
      out_ += "\x85R";  // TUPLE1 REDUCE
    } else if (value.isComplexDouble()) {
      c10::complex<double> z = value.toComplexDouble();
      push_global("builtins", "complex");
      push_double(z.real());
      push_double(z.imag());
      out_ += "\x86R";  // TUPLE2 REDUCE
    } else {
      throw std::runtime_error(
          fmt::format("save_for_python: cannot write a {} value", value.tagKind()));
    }
  }

  void push_int(int64_t v) {
    if (v >= 0 && v < 256) {
      out_ += 'K';
      out_ += static_cast<char>(v);
    } else if (v >= 0 && v < 65536) {
      out_ += 'M';
      append_le(static_cast<uint16_t>(v));
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
      out_ += 'J';
      append_le(static_cast<int32_t>(v));
    } else {
      out_ += "\x8a\x08";  // LONG1, 8 bytes of two's complement
      append_le(v);
    }
  }

  void push_double(double v) {
    out_ += 'G';
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    for (int shift = 56; shift >= 0; shift -= 8) out_ += static_cast<char>((bits >> shift) & 0xFF);
  }

  void push_string(const std::string& s) {
    out_ += 'X';
    append_le(static_cast<uint32_t>(s.size()));
    out_ += s;
  }

  void push_global(const std::string& module, const std::string& name) {
    out_ += 'c';
    out_ += module + "\n" + name + "\n";
  }

  void push_tuple(c10::ArrayRef<c10::IValue> elements) {
    if (elements.empty()) {
      out_ += ')';
      return;
    }
    out_ += '(';
    for (const auto& element : elements) push(element);
    out_ += 't';
  }

  void push_ints(c10::IntArrayRef ints) {
    out_ += '(';
    for (int64_t v : ints) push_int(v);
    out_ += 't';
  }

  void push_tensor(const at::Tensor& tensor) {
    if (!tensor.has_storage() || tensor.is_sparse() || tensor.is_quantized()) {
      throw std::runtime_error("save_for_python: only dense tensors with storage are written");
    }
    const c10::Storage& storage = tensor.storage();
    const c10::ScalarType dtype = tensor.scalar_type();
    auto [found, inserted] = keys_.try_emplace(storage.unsafeGetStorageImpl(), storages_.size());
    if (inserted) {
      storages_.push_back({std::to_string(storages_.size()), storage, dtype});
    } else if (storages_[found->second].dtype != dtype) {
      // torch.load cannot rebuild one storage as two dtypes either.
      throw std::runtime_error("save_for_python: two tensors view one storage as different dtypes");
    }
    const StorageRecord& record = storages_[found->second];

    push_global("torch._utils", "_rebuild_tensor_v2");
    out_ += '(';
    // The persistent id: ('storage', torch.<Type>Storage, key, location, numel).
    out_ += '(';
    push_string("storage");
    push_global("torch", storage_type_of_dtype(dtype));
    push_string(record.key);
    push_string(storage.device().is_cuda()
                    ? "cuda:" + std::to_string(std::max<int>(0, storage.device().index()))
                    : "cpu");
    push_int(static_cast<int64_t>(storage.nbytes() / c10::elementSize(dtype)));
    out_ += "tQ";  // TUPLE BINPERSID
    push_int(tensor.storage_offset());
    push_ints(tensor.sizes());
    push_ints(tensor.strides());
    out_ += tensor.requires_grad() ? '\x88' : '\x89';
    push_global("collections", "OrderedDict");
    out_ += ")R";  // the (empty) backward hooks
    out_ += "tR";
  }

  template <typename T>
  void append_le(T v) {
    char bytes[sizeof(T)];
    std::memcpy(bytes, &v, sizeof(T));
    out_.append(bytes, sizeof(T));
  }

  std::string out_;
  std::vector<StorageRecord>& storages_;
  std::unordered_map<const c10::StorageImpl*, size_t> keys_;
};

}  // namespace

std::string pickle(const c10::IValue& value, std::vector<StorageRecord>& storages) {
  return Pickler(storages).run(value);
}

}  // namespace zoobench::serialization::detail
