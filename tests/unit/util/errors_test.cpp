// first_line: the line of an error message a result row keeps (util/errors.h).
#include "zoobench/util/errors.h"

#include <gtest/gtest.h>
#include <torch/jit.h>

namespace zoobench {
namespace {

std::string message_of_failing_script() {
  auto unit = torch::jit::compile("def f(x):\n    return torch.mm(x, x)\n");
  try {
    unit->run_method("f", torch::ones({2, 3}));
  } catch (const std::exception&) {
    return current_exception_message();
  }
  return "";
}

TEST(FirstLine, PlainMessagesKeepTheirFirstLine) {
  EXPECT_EQ(first_line("cannot open zoo/x/eval.pt\nmore detail"), "cannot open zoo/x/eval.pt");
  EXPECT_EQ(first_line("one line  "), "one line");
  EXPECT_EQ(first_line(""), "");
}

TEST(FirstLine, ScriptedErrorGivesTheErrorNotTheTraceback) {
  const std::string message = message_of_failing_script();
  ASSERT_NE(message.find("TorchScript interpreter"), std::string::npos) << message;
  const std::string line = first_line(message);
  EXPECT_NE(line.find("mat1 and mat2 shapes cannot be multiplied"), std::string::npos)
      << "got: " << line << "\nfrom:\n"
      << message;
}

// The shape of a traced module's error (HuggingFace BERT run on a second GPU, trimmed): the
// "original code" traceback is a list of unindented Python frames.
TEST(FirstLine, TracedErrorSkipsThePythonFrames) {
  const std::string message =
      "The following operation failed in the TorchScript interpreter.\n"
      "Traceback of TorchScript, serialized code (most recent call last):\n"
      "  File \"code/__torch__/transformers/models/bert/modeling_bert.py\", line 41, in forward\n"
      "    q_indices = torch.add(_7, CONSTANTS.c0)\n"
      "                ~~~~~~~~~ <--- HERE\n"
      "\n"
      "Traceback of TorchScript, original code (most recent call last):\n"
      "/opt/venv/lib/python3.12/site-packages/transformers/masking_utils.py(510): sdpa_mask\n"
      "/opt/venv/lib/python3.12/site-packages/torch/nn/modules/module.py(1769): _slow_forward\n"
      "/work/main/tools/export_zoo.py(255): <module>\n"
      "RuntimeError: Expected all tensors to be on the same device, but found at least two "
      "devices, cuda:0 and cuda:1!\n";
  EXPECT_EQ(first_line(message),
            "RuntimeError: Expected all tensors to be on the same device, but found at least two "
            "devices, cuda:0 and cuda:1!");
}

// A model's error can be one enormous line (a tensor printed whole): it is kept, and reading it
// neither overflows the stack (std::regex recursed per character) nor loses the error class.
TEST(FirstLine, HugeLinesAreReadWithoutRecursion) {
  const std::string huge(200000, 'x');
  const std::string interpreter =
      "The following operation failed in the TorchScript interpreter.\n";
  EXPECT_EQ(first_line(interpreter + "  File \"code.py\", line 1\nRuntimeError: " + huge + "\n"),
            "RuntimeError: " + huge);
  EXPECT_EQ(first_line(interpreter + "/a/b.py(12): " + huge + "\nplain " + huge), "plain " + huge);
  EXPECT_EQ(first_line(interpreter + "/a/b.py(12): f\n(3): g\nthe line"), "(3): g");
  EXPECT_EQ(first_line("ValueError " + huge), "ValueError " + huge);
}

}  // namespace
}  // namespace zoobench
