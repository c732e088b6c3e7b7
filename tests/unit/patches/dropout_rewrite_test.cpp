// The packed_dropout patch's graph rewrite on modules written by the reference Python: how
// many sites it rewrites (nn.Dropout submodules, functional dropout, a submodule used twice,
// traced graphs, nn.Dropout2d; in-place/alpha dropout left alone), and that outputs and gradients
// of the rewritten model under a seed equal an independent reference x * mask / (1 - p) built from
// the masks drawn in the same order.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include "testing/testing.h"
#include "zoobench/patches/packed_dropout.h"
#include "zoobench/patches/registry.h"

namespace zoobench::patches {
namespace {

constexpr const char* kModules = R"PY(
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)

class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(16, 32)
        self.d1 = nn.Dropout(0.3)
        self.l2 = nn.Linear(32, 8)
        self.d2 = nn.Dropout(0.2)

    def forward(self, x):
        h = self.d1(self.l1(x))
        h = F.dropout(self.l2(h), 0.5, self.training)
        return self.d2(self.d2(h))  # one submodule, two call sites

class Mixed(nn.Module):
    def __init__(self):
        super().__init__()
        self.d = nn.Dropout(0.1)
        self.channels = nn.Dropout2d(0.1)
        self.inplace = nn.Dropout(0.1, inplace=True)
        self.alpha = nn.AlphaDropout(0.1)

    def forward(self, x):
        return self.alpha(self.inplace(self.channels(self.d(x)) + 1.0))

torch.jit.script(Mlp().train()).save(DIR + '/mlp_scripted.pt')
torch.jit.script(Mixed().train()).save(DIR + '/mixed_scripted.pt')
torch.jit.trace(Mlp().train(), torch.randn(4, 16), check_trace=False).save(DIR + '/mlp_traced.pt')

class Channels(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.drop = nn.Dropout2d(0.5)

    def forward(self, x):
        return self.drop(self.conv(x))

torch.jit.script(Channels().train()).save(DIR + '/channels_scripted.pt')
)PY";

class DropoutRewrite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::ScratchDir();
    testing::run_python("DIR = '" + dir_->path() + "'\n" + kModules);
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string path(const std::string& name) { return dir_->file(name); }

  PatchScope scope_{{"packed_dropout"}};

 private:
  static testing::ScratchDir* dir_;
};
testing::ScratchDir* DropoutRewrite::dir_ = nullptr;

int count_nodes(torch::jit::Block* block, const char* kind) {
  int n = 0;
  for (torch::jit::Node* node : block->nodes()) {
    if (std::string(node->kind().toQualString()) == kind) ++n;
    for (torch::jit::Block* sub : node->blocks()) n += count_nodes(sub, kind);
  }
  return n;
}

int count_in_forward(torch::jit::Module& module, const char* kind) {
  return count_nodes(module.get_method("forward").graph()->block(), kind);
}

TEST_F(DropoutRewrite, CountsEverySiteOfScriptedAndTracedModules) {
  for (const char* file : {"mlp_scripted.pt", "mlp_traced.pt"}) {
    torch::jit::Module m = torch::jit::load(path(file));
    EXPECT_EQ(rewrite_dropout_to_packed(m), 4) << file;
    EXPECT_EQ(count_in_forward(m, "aten::dropout"), 0) << file;
    EXPECT_EQ(count_in_forward(m, "zoobench::dropout_packed"), 4) << file;
    m.get_method("forward").graph()->lint();
    // Nothing left to rewrite the second time.
    EXPECT_EQ(rewrite_dropout_to_packed(m), 0) << file;
  }
}

TEST_F(DropoutRewrite, CountIsTheSameWithTheGraphOptimizerOff) {
  torch::jit::GraphOptimizerEnabledGuard optimize(false);
  torch::jit::Module m = torch::jit::load(path("mlp_scripted.pt"));
  EXPECT_EQ(rewrite_dropout_to_packed(m), 4);
  EXPECT_EQ(count_in_forward(m, "aten::dropout"), 0);
  EXPECT_EQ(count_in_forward(m, "prim::CallFunction"), 0);
}

TEST_F(DropoutRewrite, RewritesFeatureDropoutAndLeavesInPlaceAndAlphaDropoutAlone) {
  torch::jit::Module m = torch::jit::load(path("mixed_scripted.pt"));
  EXPECT_EQ(rewrite_dropout_to_packed(m), 2);
  EXPECT_EQ(count_in_forward(m, "aten::feature_dropout"), 0);
  EXPECT_EQ(count_in_forward(m, "zoobench::feature_dropout_packed"), 1);
  EXPECT_EQ(count_in_forward(m, "aten::dropout_"), 1);
  EXPECT_EQ(count_in_forward(m, "aten::alpha_dropout"), 1);
  // Still runs.
  auto out = m.forward({at::randn({2, 3, 4, 4})}).toTensor();
  EXPECT_EQ(out.sizes(), (std::vector<int64_t>{2, 3, 4, 4}));
}

TEST_F(DropoutRewrite, PatchScopeRewritesTrainingModelsOnly) {
  torch::jit::Module eval_model = torch::jit::load(path("mlp_scripted.pt"));
  EXPECT_EQ(scope_.rewrite(eval_model, /*training=*/false), 0);
  EXPECT_EQ(count_in_forward(eval_model, "zoobench::dropout_packed"), 0);
  torch::jit::Module train_model = torch::jit::load(path("mlp_scripted.pt"));
  EXPECT_EQ(scope_.rewrite(train_model, /*training=*/true), 4);
}

at::Tensor param(torch::jit::Module& m, const std::string& name) {
  for (const auto& p : m.named_parameters()) {
    if (p.name == name) return p.value;
  }
  ADD_FAILURE() << "no parameter " << name;
  return {};
}

// y = x * mask / (1 - p) with the mask drawn by the eager operator (in the order the model
// draws them), as plain differentiable ATen ops.
at::Tensor reference_dropout(const at::Tensor& x, double p) {
  auto [ignored, mask] = dropout_packed(x.detach(), p, true);
  return x * unpack_dropout_mask(mask, x.sizes()).to(x.scalar_type()) / (1.0 - p);
}

TEST_F(DropoutRewrite, OutputsAndGradientsEqualTheMaskReference) {
  for (const char* file : {"mlp_scripted.pt", "mlp_traced.pt"}) {
    torch::jit::Module m = torch::jit::load(path(file));
    ASSERT_EQ(rewrite_dropout_to_packed(m), 4);
    m.train();
    at::manual_seed(7);
    const at::Tensor x0 = at::randn({5, 16});
    for (int run = 0; run < 3; ++run) {  // profiling and optimised executor runs
      at::manual_seed(100 + run);
      const at::Tensor x = x0.clone().requires_grad_(true);
      const at::Tensor out = m.forward({x}).toTensor();
      out.pow(2).sum().backward();

      at::manual_seed(100 + run);
      const at::Tensor xr = x0.clone().requires_grad_(true);
      const at::Tensor w1 = param(m, "l1.weight").detach().requires_grad_(true);
      const at::Tensor b1 = param(m, "l1.bias").detach().requires_grad_(true);
      const at::Tensor w2 = param(m, "l2.weight").detach().requires_grad_(true);
      const at::Tensor b2 = param(m, "l2.bias").detach().requires_grad_(true);
      at::Tensor h = reference_dropout(at::linear(xr, w1, b1), 0.3);
      h = reference_dropout(at::linear(h, w2, b2), 0.5);
      const at::Tensor expected = reference_dropout(reference_dropout(h, 0.2), 0.2);
      expected.pow(2).sum().backward();

      // Same masks, same float32 ops; the executor may fuse or reorder a sum (the weight
      // gradient's batch reduction), which moves the last bits only: rtol 1e-4.
      const auto close = [](const at::Tensor& a, const at::Tensor& b) {
        return ::testing::AssertionResult(at::allclose(a, b, 1e-4, 1e-5))
               << "max |diff| " << (a - b).abs().max().item<double>();
      };
      EXPECT_TRUE(close(out, expected)) << file << " run " << run;
      EXPECT_TRUE(close(x.grad(), xr.grad())) << file << " run " << run;
      EXPECT_TRUE(close(param(m, "l1.weight").grad(), w1.grad())) << file << " run " << run;
      EXPECT_TRUE(close(param(m, "l2.bias").grad(), b2.grad())) << file << " run " << run;
      for (auto p : m.parameters()) p.mutable_grad() = at::Tensor();
    }
  }
}

// nn.Dropout2d after the rewrite: whole channels kept (scaled by 1 / (1 - p)) or zeroed, in
// the output and in the input's gradient, with the channel mask the eager operator draws.
TEST_F(DropoutRewrite, FeatureDropoutKeepsOrDropsWholeChannelsInOutputAndGradient) {
  torch::jit::Module m = torch::jit::load(path("channels_scripted.pt"));
  ASSERT_EQ(rewrite_dropout_to_packed(m), 1);
  m.train();
  const at::Tensor x0 = at::randn({4, 3, 6, 6});
  for (int run = 0; run < 3; ++run) {
    at::manual_seed(200 + run);
    const at::Tensor x = x0.clone().requires_grad_(true);
    const at::Tensor out = m.forward({x}).toTensor();
    out.sum().backward();

    at::manual_seed(200 + run);
    auto [unused, bits] = dropout_packed(at::ones({4 * 8}), 0.5, true);
    const at::Tensor keep = unpack_dropout_mask(bits, {4, 8, 1, 1}).to(at::kFloat);
    const at::Tensor conv =
        at::conv2d(x0, param(m, "conv.weight"), param(m, "conv.bias"), {1, 1}, {1, 1});
    EXPECT_TRUE(at::allclose(out, conv * keep * 2.0, 1e-5, 1e-6)) << "run " << run;
    const int64_t kept = keep.sum().item<int64_t>();
    EXPECT_GT(kept, 0) << "run " << run;
    EXPECT_LT(kept, 32) << "run " << run;
    // d(sum(conv(x) * keep * 2))/dx: the conv's input gradient for an output gradient of
    // keep * 2, broadcast over each channel's 6 x 6 positions.
    const at::Tensor xr = x0.clone().requires_grad_(true);
    at::conv2d(xr, param(m, "conv.weight").detach(), {}, {1, 1}, {1, 1})
        .mul(keep * 2.0)
        .sum()
        .backward();
    EXPECT_TRUE(at::allclose(x.grad(), xr.grad(), 1e-5, 1e-6)) << "run " << run;
    for (auto p : m.parameters()) p.mutable_grad() = at::Tensor();
  }
}

TEST_F(DropoutRewrite, EvalModeOfARewrittenModelIsTheIdentity) {
  torch::jit::Module m = torch::jit::load(path("mlp_scripted.pt"));
  ASSERT_EQ(rewrite_dropout_to_packed(m), 4);
  m.eval();
  at::NoGradGuard no_grad;
  const at::Tensor x = at::randn({3, 16});
  const at::Tensor expected = at::linear(at::linear(x, param(m, "l1.weight"), param(m, "l1.bias")),
                                         param(m, "l2.weight"), param(m, "l2.bias"));
  EXPECT_TRUE(at::allclose(m.forward({x}).toTensor(), expected, 1e-6, 1e-6));
}

TEST(DropoutRewriteWithoutPatch, SaysWhichPatchToApply) {
  torch::jit::Module m("m");
  try {
    rewrite_dropout_to_packed(m);
    FAIL() << "expected an error";
  } catch (const c10::Error& e) {
    EXPECT_THAT(e.what_without_backtrace(), ::testing::HasSubstr("packed_dropout"));
  }
}

}  // namespace
}  // namespace zoobench::patches
