// The rewrites that let a CUDA graph hold traced models (backends/capture_rewrites.h): each must
// compute exactly what the graph computed before. On the CPU: the boolean-mask index_put_
// rewrite against the original graph, including the cases its operator must hand back to
// index_put_, the copies of CPU constants made once (and kept per call where the copy is written
// to or returned), and the traceback reader that names the operation a capture could not hold.
// The device side (constants moved off the GPU, no host read left) is in tests/gpu/backends.
#include <gtest/gtest.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/irparser.h>
#include <torch/script.h>

#include "unit/backends/masked_assignment.h"
#include "zoobench/backends/capture_rewrites.h"
#include "zoobench/backends/host_sync_ops.h"

namespace zoobench {
namespace {

int count_kind(const torch::jit::Graph& graph, const std::string& kind) {
  int n = 0;
  for (const torch::jit::Node* node : graph.nodes()) n += node->kind().toQualString() == kind;
  return n;
}

// `t[index] = v` (masked_assignment.h), or with accumulate=True, which the rewrite leaves alone.
torch::jit::Module assign_at(const std::string& accumulate = "") {
  if (accumulate.empty()) return testing_models::masked_assignment();
  torch::jit::Module module("m");
  module.define(R"(
def forward(self, t, index, v):
    return t.index_put_([index], v, True)
)");
  return module;
}

CaptureRewriteSwitches only_mask_fills() {
  CaptureRewriteSwitches on;
  on.mask_fill_index_put = true;
  return on;
}

CaptureRewriteSwitches all_rewrites() {
  CaptureRewriteSwitches on;
  on.host_size_arithmetic = on.mask_fill_index_put = on.constant_copies = true;
  return on;
}

at::Tensor run(torch::jit::Module& module, const at::Tensor& t, const at::Tensor& index,
               const at::Tensor& v) {
  return module.forward({t, index, v}).toTensor();
}

TEST(CaptureRewrites, BooleanMaskAssignmentBecomesAMaskedFillWithTheSameResult) {
  auto original = assign_at();
  auto rewritten = assign_at();
  EXPECT_EQ(apply_capture_rewrites(rewritten, only_mask_fills()).masked_fills, 1);
  auto graph = rewritten.get_method("forward").graph();
  EXPECT_EQ(count_kind(*graph, "aten::index_put_"), 0) << *graph;
  EXPECT_EQ(count_kind(*graph, "zoobench_capture::index_put_bool_mask_"), 1) << *graph;

  at::manual_seed(0);
  const at::Tensor t = at::randn({4, 5});
  struct Case {
    const char* what;
    at::Tensor index, value;
  };
  const std::vector<Case> cases = {
      // Rewritten path: a boolean mask of t's shape and a 0-dim value (also of another dtype).
      {"full bool mask", t > 0, at::scalar_tensor(-7.5)},
      {"full bool mask, int value", t < 0, at::scalar_tensor(3, at::kLong)},
      // Handed back to index_put_: a mask of the leading dimension only, integer indices, a
      // value tensor that is not 0-dim.
      {"row mask", at::tensor({1, 0, 1, 0}) > 0, at::scalar_tensor(2.0)},
      {"integer index", at::tensor({0, 2}, at::kLong), at::scalar_tensor(9.0)},
      {"row values", at::tensor({1, 0, 0, 1}) > 0, at::arange(5, at::kFloat)},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    const at::Tensor expected = run(original, t, c.index, c.value);
    const at::Tensor got = run(rewritten, t, c.index, c.value);
    EXPECT_TRUE(at::equal(expected, got)) << expected << got;
    EXPECT_FALSE(at::equal(expected, t)) << "the case must change t";
  }
}

TEST(CaptureRewrites, AccumulatingIndexPutIsLeftAlone) {
  auto module = assign_at("accumulate");
  EXPECT_EQ(apply_capture_rewrites(module, all_rewrites()).masked_fills, 0);
  EXPECT_EQ(count_kind(*module.get_method("forward").graph(), "aten::index_put_"), 1);
}

TEST(CaptureRewrites, SwitchedOffRewritesChangeNothing) {
  auto module = assign_at();
  const CaptureRewriteCounts counts = apply_capture_rewrites(module, CaptureRewriteSwitches{});
  EXPECT_EQ(counts.masked_fills + counts.host_constants + counts.folded_copies, 0);
  EXPECT_EQ(count_kind(*module.get_method("forward").graph(), "aten::index_put_"), 1);
}

// `x + c.to(float64)` and variants, with c a CPU tensor constant as tracing records one. TAIL:
// what the graph does with the copy %y after the add (%z), and what it returns.
std::shared_ptr<torch::jit::Graph> copy_of_constant(const std::string& tail) {
  auto graph = std::make_shared<torch::jit::Graph>();
  torch::jit::parseIR(R"IR(
graph(%x : Tensor, %c : Tensor):
  %dtype : int = prim::Constant[value=7]()
  %false : bool = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %y : Tensor = aten::to(%c, %dtype, %false, %false, %none)
  %z : Tensor = aten::add(%x, %y, %one)
)IR" + tail,
                      graph.get());
  torch::jit::WithInsertPoint first(graph->nodes().front());
  graph->inputs()[1]->replaceAllUsesWith(graph->insertConstant(at::tensor({1, 2, 3}, at::kLong)));
  graph->eraseInput(1);
  return graph;
}

at::Tensor run_graph(const std::shared_ptr<torch::jit::Graph>& graph, const at::Tensor& x) {
  torch::jit::GraphFunction fn(c10::QualifiedName("f"), graph->copy(), nullptr);
  return fn({x}).toTensor();
}

TEST(CaptureRewrites, ACopyOfAHostConstantIsMadeOnceWithTheSameResult) {
  auto graph = copy_of_constant("  return (%z)");
  const at::Tensor x = at::randn({3}, at::kDouble);
  const at::Tensor before = run_graph(graph, x);
  EXPECT_TRUE(at::equal(before, x + at::tensor({1.0, 2.0, 3.0}, at::kDouble)));
  EXPECT_EQ(fold_constant_copies(graph), 1) << *graph;
  EXPECT_EQ(count_kind(*graph, "aten::to"), 0) << *graph;
  const at::Tensor after = run_graph(graph, x);
  EXPECT_EQ(after.scalar_type(), at::kDouble);
  EXPECT_TRUE(at::equal(after, before));
  // The fold left no unused constant behind (the long tensor, the dtype).
  for (const torch::jit::Node* node : graph->nodes()) EXPECT_FALSE(node->output()->uses().empty()) << *graph;
}

TEST(CaptureRewrites, ACopyWrittenToOrReturnedIsMadeOnEachCall) {
  // Written in place after its use: a shared constant would carry the write into the next call.
  auto written = copy_of_constant(R"IR(  %w : Tensor = aten::mul_(%y, %one)
  %v : Tensor = aten::add_(%y, %z, %one)
  return (%z))IR");
  // Returned: the caller may write to it.
  auto returned = copy_of_constant("  return (%z, %y)");
  // A view of it returned.
  auto viewed = copy_of_constant(R"IR(  %dim : int = prim::Constant[value=0]()
  %u : Tensor = aten::unsqueeze(%y, %dim)
  return (%z, %u))IR");
  for (auto* graph : {&written, &returned, &viewed}) {
    EXPECT_EQ(fold_constant_copies(*graph), 0) << **graph;
    EXPECT_EQ(count_kind(**graph, "aten::to"), 1) << **graph;
  }
}

TEST(CaptureRewrites, TracebackNamesTheInnermostOperation) {
  // As the H200 printed it for tf_efficientnet_b0 (trimmed).
  const std::string message = R"(The following operation failed in the TorchScript interpreter.
Traceback of TorchScript, serialized code (most recent call last):
  File "code/__torch__/timm/models/efficientnet.py", line 22, in forward
    conv_stem = self.conv_stem
    _0 = (bn1).forward((conv_stem).forward(x, ), )
                        ~~~~~~~~~~~~~~~~~~ <--- HERE
  File "code/__torch__/timm/layers/conv2d_same.py", line 27, in forward
    _10 = torch.floor_divide(pad_w, CONSTANTS.c0)
    _11 = int(_10)
          ~~~ <--- HERE
    _12 = torch.floor_divide(pad_w, CONSTANTS.c0)

Traceback of TorchScript, original code (most recent call last):
RuntimeError: called a synchronizing CUDA operation)";
  EXPECT_EQ(torchscript_innermost_frame(message), "timm/layers/conv2d_same.py:27 (`_11 = int(_10)`)");
  EXPECT_EQ(torchscript_innermost_frame("CUDA error: something\nmore"), "CUDA error: something");
}

}  // namespace
}  // namespace zoobench
