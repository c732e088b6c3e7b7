// Pickle programs a hostile or broken file may hold: containers inside themselves, nesting far
// deeper than anything PyTorch writes, shared parts that expand into astronomic copies, and
// such structures cut off mid-way. Each must end as an error that names the file and the byte,
// quickly and without a crash (these used to overflow the stack: SIGSEGV).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "testing/testing.h"
#include "zoobench/serialization/pickle.h"
#include "zoobench/serialization/torch_save.h"

namespace zoobench::serialization {
namespace {

const std::string kProto2 = "\x80\x02";

std::string binput(int index) { return std::string("q") + static_cast<char>(index); }
std::string binget(int index) { return std::string("h") + static_cast<char>(index); }
std::string long_index(char op, uint32_t index) {
  std::string out(1, op);
  for (int i = 0; i < 4; ++i) out += static_cast<char>((index >> (8 * i)) & 0xff);
  return out;
}

c10::Storage no_storage(const detail::PersistentStorage&) {
  throw std::runtime_error("no storages in these programs");
}

// The error `program` ends with; fails the test when it reads, or takes over `seconds`.
std::string error_of(const std::string& program, double seconds = 10) {
  const auto start = std::chrono::steady_clock::now();
  try {
    detail::unpickle(program, no_storage, "'hostile.pt'");
    ADD_FAILURE() << "the program was read";
  } catch (const std::exception& e) {
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(took, seconds) << e.what();
    std::string message = e.what();
    EXPECT_NE(message.find("'hostile.pt'"), std::string::npos) << message;
    EXPECT_NE(message.find("(byte "), std::string::npos) << message;
    return message;
  }
  return "";
}

// A list wrapped `levels` times around itself through the memo: [[[...]]], one more level per
// EMPTY_LIST BINGET APPEND BINPUT, with a constant stack (so no stack bound catches it).
std::string nested_lists(int levels) {
  std::string program = kProto2 + "]" + binput(0);
  for (int i = 0; i < levels; ++i) program += "]" + binget(0) + "a" + binput(0);
  return program;
}

TEST(HostilePickle, AListOrDictInsideItselfIsRefused) {
  // a = []; a.append(a)
  EXPECT_NE(error_of(kProto2 + "]" + binput(0) + binget(0) + "a.").find("contains itself"),
            std::string::npos);
  // d = {}; d['k'] = d
  EXPECT_NE(
      error_of(kProto2 + "}" + binput(0) + std::string("X\x01\x00\x00\x00k", 6) + binget(0) + "s.")
          .find("contains itself"),
      std::string::npos);
  // a = []; b = [a]; a.append(b): the cycle goes through another list
  EXPECT_NE(error_of(kProto2 + "]" + binput(0) + "]" + binput(1) + binget(0) + "aa.")
                .find("contains itself"),
            std::string::npos);
}

TEST(HostilePickle, NestingBeyondTheLimitIsRefusedAndWithinItRead) {
  EXPECT_NE(error_of(nested_lists(30'000) + binget(0) + ".").find("nested deeper than 1000"),
            std::string::npos);
  // Tuples, wrapped the same way: refused as they are made.
  std::string tuples = kProto2 + ")" + binput(0);
  for (int i = 0; i < 30'000; ++i) tuples += binget(0) + "\x85" + binput(0);
  EXPECT_NE(error_of(tuples + binget(0) + ".").find("nested deeper than 1000"), std::string::npos);
  // Lists made first and nested into each other afterwards (their depth grows after they are
  // nested, which only a walk of the finished object sees).
  std::string chain = kProto2;
  const uint32_t lists = 5'000;
  for (uint32_t i = 0; i < lists; ++i) chain += "]" + long_index('r', i) + "0";
  for (uint32_t i = 0; i + 1 < lists; ++i)
    chain += long_index('j', i) + long_index('j', i + 1) + "a0";
  EXPECT_NE(error_of(chain + long_index('j', 0) + ".").find("nested deeper than 1000"),
            std::string::npos);

  // 999 levels (Python's own recursion limit writes up to about that) are read.
  c10::IValue deep = detail::unpickle(nested_lists(998) + binget(0) + ".", no_storage, "'ok.pt'");
  int depth = 0;
  for (c10::IValue v = deep; v.isList() && !v.toListRef().empty(); v = v.toListRef()[0]) ++depth;
  EXPECT_EQ(depth, 998);
}

TEST(HostilePickle, SharedPartsThatExpandBeyondTheLimitAreRefused) {
  // t0 = (); t(i+1) = (t(i), t(i)): 60 levels are 2^60 leaves once copied; 200 bytes.
  std::string program = kProto2 + ")" + binput(0);
  for (int i = 0; i < 60; ++i) program += binget(0) + binget(0) + "\x86" + binput(0);
  EXPECT_NE(error_of(program + binget(0) + ".").find("more than 10000000 values"),
            std::string::npos);
  // The same with lists.
  std::string lists = kProto2 + "]" + binput(0);
  for (int i = 0; i < 60; ++i) lists += "]" + binget(0) + "a" + binget(0) + "a" + binput(0);
  // (each new list is [prev] and then [prev, prev]: APPEND twice)
  EXPECT_NE(error_of(lists + binget(0) + ".").find("more than 10000000 values"), std::string::npos);
  // A little sharing is fine and stays shared: ((x, x), (x, x)) with x = (1,).
  c10::IValue shared = detail::unpickle(kProto2 + "K\x01\x85" + binput(0) + binget(0) + binget(0) +
                                            "\x86" + binput(1) + binget(1) + binget(1) + "\x86.",
                                        no_storage, "'ok.pt'");
  ASSERT_TRUE(shared.isTuple());
  const auto& halves = shared.toTupleRef().elements();
  EXPECT_EQ(halves[0].internalToPointer(), halves[1].internalToPointer());
}

TEST(HostilePickle, ADeepStructureCutOffMidwayIsAnErrorNotAStackOverflow) {
  // 200,000 levels and no STOP: the error path must not destroy them recursively.
  EXPECT_NE(error_of(nested_lists(200'000)).find("truncated"), std::string::npos);
  // A self-containing list left on the stack of a failing program.
  error_of(kProto2 + "]" + binput(0) + binget(0) + "a" + "\xff");
}

// Errors of the standard library inside an opcode name the file and the byte too.
TEST(HostilePickle, LibraryErrorsInsideAnOpcodeNameTheByte) {
  const std::string message = error_of(kProto2 + "pnot-a-number\n.");  // PUT with a bad index
  EXPECT_NE(message.find("(byte 2)"), std::string::npos) << message;
}

// The same through the file reader, with a file Python's torch.save wrote: a = []; a.append(a).
TEST(HostilePickle, ATorchSaveFileOfASelfContainingListIsRefused) {
  testing::ScratchDir dir;
  const std::string path = dir.file("self.pt");
  testing::run_python(
      fmt::format("import torch\na = []\na.append(a)\ntorch.save(a, '{}')\n", path));
  try {
    load_torch_save(path);
    FAIL() << "read";
  } catch (const std::exception& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find("contains itself"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace zoobench::serialization
