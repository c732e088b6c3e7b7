// Why zoobench reads torch.save files itself (docs/design.md, "Reading torch.save files"):
// LibTorch's own reader, torch::pickle_load (and torch::jit::pickle_load, the function it
// calls), against zoobench's load_torch_save on every case of torch_save_cases.py, as Python's
// torch.save writes them with the default pickle protocol 2 and with protocol 4, and the
// shapes torch 2.x writes. Each case is what zoobench must read somewhere: inputs.pt (a tuple
// of tensors), `zoobench same`'s reference and result files (any nesting of dicts, lists and
// tuples of tensors and scalars, a model's outputs, gradients and state dicts).
//
// zoobench's reader must read every case to exactly what Python describes. For LibTorch's the
// test prints one line per case (reads / reads differently / fails, with the first differing
// line or the error) and asserts which cases it cannot read: on LibTorch 1.13 the whole table
// in docs/design.md, on 2.x the cases no LibTorch reads.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/serialize.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "testing/testing.h"
#include "unit/serialization/torch_save_cases.h"
#include "zoobench/serialization/torch_save.h"
#include "zoobench/util/compat.h"
#include "zoobench/util/files.h"

namespace zoobench::serialization {
namespace {

using torch_save_cases::describe;
using torch_save_cases::run_cases_function;

enum class Outcome { kReads, kReadsDifferently, kFails };

std::string outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::kReads:
      return "reads";
    case Outcome::kReadsDifferently:
      return "reads differently";
    case Outcome::kFails:
      return "fails";
  }
  return "?";
}

struct CaseOutcome {
  Outcome outcome = Outcome::kFails;
  std::string detail;  // the error's first line, or the first line that differs from Python's
};

std::string first_line_of(const std::string& text) { return text.substr(0, text.find('\n')); }

// The first line where `got` differs from `expected`, as "got ... (Python: ...)".
std::string first_difference(const std::string& got, const std::string& expected) {
  std::istringstream got_lines(got), expected_lines(expected);
  std::string g, e;
  while (true) {
    const bool more_got = static_cast<bool>(std::getline(got_lines, g));
    const bool more_expected = static_cast<bool>(std::getline(expected_lines, e));
    if (!more_got && !more_expected) return "";
    if (!more_got) g = "(nothing)";
    if (!more_expected) e = "(nothing)";
    if (g != e || !more_got || !more_expected) {
      return g.substr(0, 160) + "   (Python: " + e.substr(0, 160) + ")";
    }
  }
}

using Reader = c10::IValue (*)(const std::vector<char>&);

CaseOutcome outcome_of(Reader read, const std::vector<char>& bytes, const std::string& expected) {
  try {
    const std::string got = describe(read(bytes));
    if (got == expected) return {Outcome::kReads, ""};
    return {Outcome::kReadsDifferently, first_difference(got, expected)};
  } catch (const std::exception& e) {
    return {Outcome::kFails, first_line_of(e.what())};
  }
}

std::vector<char> bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// What LibTorch's reader cannot read (it throws, or returns something else than Python's
// torch.load) on every LibTorch zoobench builds against: found here on 1.13, and the same
// checks are in 2.x's torch/csrc/jit/serialization/{unpickler,pickle}.cpp.
bool unreadable_on_every_libtorch(const std::string& name) {
  // "Only Pickle protocol 2 is supported": torch.save(..., pickle_protocol=4).
  if (name.rfind("protocol4/", 0) == 0) return true;
  static const std::set<std::string> kCases = {
      // Tensors that share a storage (views of one tensor) come back each with its own copy:
      // pickle_load has no storage context, so every reference reads the record again.
      "protocol2/views",
      "protocol2/shared_twice",
      // collections.OrderedDict (every state_dict) becomes None: an internal assert.
      "protocol2/ordered",
      "protocol2/state_dict",
      // torch.Size and dtypes: "unknown torch global".
      "protocol2/size",
      "protocol2/dtype",
      // Python ints beyond 32 bits that pickle writes in fewer than 8 bytes (LONG1).
      "protocol2/ints",
      // complex (__builtin__.complex under protocol 2) and bytes (_codecs.encode).
      "protocol2/complex",
      "protocol2/bytes",
      // The shapes torch 2.x writes for some tensors (_rebuild_tensor_v3, UntypedStorage).
      "torch2/torch2",
  };
  return kCases.count(name) > 0;
}

// And what LibTorch 1.13's reader cannot read besides (2.x reads them): a dict or list of one
// element (pickle's SETITEM and APPEND opcodes: "Unknown opcode for unpickling at 0x73") and
// nn.Parameter (torch._utils._rebuild_parameter).
const std::set<std::string> kAlsoUnreadableOnLibTorch1 = {
    "protocol2/one_item_dict",
    "protocol2/one_item_list",
    "protocol2/nested",
    "protocol2/parameter",
};

// Error messages can hold raw bytes ("found protocol = \x04").
std::string printable(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    out += std::isprint(c) ? std::string(1, static_cast<char>(c)) : fmt::format("\\x{:02x}", c);
  }
  return out;
}

TEST(PickleLoadAgainstZoobenchReader, ZoobenchReadsEveryCaseLibTorchsReaderMissesSome) {
  testing::ScratchDir dir;
  for (const char* folder : {"protocol2", "protocol4", "torch2"}) {
    std::filesystem::create_directories(dir.file(folder));
  }
  run_cases_function("write_cases", fmt::format("'{}'", dir.file("protocol2")));
  run_cases_function("write_cases", fmt::format("'{}', protocol=4", dir.file("protocol4")));
  run_cases_function("write_torch2_cases", fmt::format("'{}'", dir.file("torch2")));

  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.path())) {
    if (entry.path().extension() == ".pt") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 61u);

  // 1.13 is where the table in docs/design.md was measured: there every case must come out as
  // the table says; on 2.x the cases no LibTorch reads must still fail.
  constexpr bool kLibTorch1 = !ZOOBENCH_TORCH_AT_LEAST(2, 0);
  std::ostringstream table;
  table << "torch::pickle_load on LibTorch " << compat::torch_version() << ":\n";
  for (const auto& file : files) {
    const std::string name = file.parent_path().filename().string() + "/" + file.stem().string();
    SCOPED_TRACE(name);
    auto text = file;
    text.replace_extension(".txt");
    const std::string expected = read_text_file(text.string());
    try {
      EXPECT_EQ(describe(load_torch_save(file.string())), expected) << "zoobench's reader";
    } catch (const std::exception& e) {
      ADD_FAILURE() << "zoobench's reader: " << e.what();
    }

    const std::vector<char> bytes = bytes_of(file.string());
    const CaseOutcome outcome = outcome_of(&torch::pickle_load, bytes, expected);
    const CaseOutcome jit_outcome = outcome_of(&torch::jit::pickle_load, bytes, expected);
    EXPECT_EQ(outcome.outcome, jit_outcome.outcome) << "torch::pickle_load calls the jit's";
    table << "  " << name << ": " << outcome_name(outcome.outcome)
          << (outcome.detail.empty() ? "" : ": " + printable(outcome.detail)) << "\n";

    const bool read = outcome.outcome == Outcome::kReads;
    if (unreadable_on_every_libtorch(name) ||
        (kLibTorch1 && kAlsoUnreadableOnLibTorch1.count(name) > 0)) {
      EXPECT_FALSE(read) << "LibTorch's reader reads it now: update docs/design.md and this test";
    } else if (kLibTorch1) {
      EXPECT_TRUE(read) << "LibTorch 1.13's reader: " << outcome_name(outcome.outcome) << ": "
                        << outcome.detail;
    }
  }
  std::cout << table.str();
}

}  // namespace
}  // namespace zoobench::serialization
