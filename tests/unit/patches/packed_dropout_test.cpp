// zoobench::dropout_packed on CPU. The four checks of the Ascend fix (the compiled path's mask
// equals eager's under the same seed; a contiguous-gradient control; a Longformer
// _unskew-shaped gradient; permuted gradients against the eager reference grad*mask/(1-p)),
// plus the mask format, the keep rate (binomial bound), determinism, eval mode and the edge
// probabilities. References are computed in float64 from the unpacked mask.
#include "zoobench/patches/packed_dropout.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/autograd.h>
#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/csrc/jit/tensorexpr/kernel.h>
#include <torch/jit.h>

#include <cmath>

#include "unit/patches/script_with_ops.h"
#include "zoobench/patches/registry.h"

namespace zoobench::patches {
namespace {

class PackedDropout : public ::testing::Test {
 protected:
  PatchScope scope_{{"packed_dropout"}};
};

// grad * mask / (1 - p) in float64, from the unpacked mask in grad's logical order.
at::Tensor reference_grad(const at::Tensor& grad, const at::Tensor& mask_bits, double p) {
  const at::Tensor keep = unpack_dropout_mask(mask_bits, grad.sizes()).to(at::kDouble);
  return grad.to(at::kDouble) * keep / (1.0 - p);
}

void expect_matches_reference(const at::Tensor& actual, const at::Tensor& grad,
                              const at::Tensor& mask_bits, double p, const std::string& what) {
  const at::Tensor expected = reference_grad(grad, mask_bits, p);
  ASSERT_EQ(actual.sizes(), grad.sizes()) << what;
  EXPECT_TRUE(at::allclose(actual.to(at::kDouble), expected, 1e-6, 1e-7))
      << what << ": max abs diff "
      << (actual.to(at::kDouble) - expected).abs().max().item<double>();
}

TEST_F(PackedDropout, MaskIsCeilNumelOver8BytesWithZeroPadding) {
  for (int64_t n : {0, 1, 7, 8, 9, 63, 1000003}) {
    auto [y, mask] = dropout_packed(at::randn({n}), 0.5, true);
    EXPECT_EQ(mask.scalar_type(), at::kByte);
    EXPECT_EQ(mask.dim(), 1);
    EXPECT_EQ(mask.numel(), (n + 7) / 8) << n;
    EXPECT_EQ(y.sizes(), (std::vector<int64_t>{n}));
    if (n % 8 != 0) {
      const int last = mask[mask.numel() - 1].item<uint8_t>();
      EXPECT_EQ(last >> (n % 8), 0) << "padding bits of the last byte must be 0, n=" << n;
    }
  }
  // Against a byte (bool) mask: 8x smaller.
  auto [y, mask] = dropout_packed(at::randn({64, 1024}), 0.1, true);
  EXPECT_EQ(mask.nbytes() * 8, static_cast<size_t>(y.numel()));
}

TEST_F(PackedDropout, OutputIsInputTimesMaskOverKeepProbability) {
  const at::Tensor x = at::randn({37, 29});
  for (double p : {0.1, 0.5, 0.8}) {
    auto [y, mask] = dropout_packed(x, p, true);
    const at::Tensor expected = reference_grad(x, mask, p);  // same formula as for gradients
    EXPECT_TRUE(at::allclose(y.to(at::kDouble), expected, 1e-6, 0)) << p;
  }
}

TEST_F(PackedDropout, KeepRateIsWithinSixSigmaOfTheBinomialMean) {
  const int64_t n = (int64_t{1} << 20) + 3;
  for (double p : {0.1, 0.5, 0.9}) {
    auto [y, mask] = dropout_packed(at::ones({n}), p, true);
    const double kept = unpack_dropout_mask(mask, {n}).sum().item<double>();
    const double mean = n * (1 - p);
    const double sigma = std::sqrt(n * p * (1 - p));
    EXPECT_LT(std::abs(kept - mean), 6 * sigma) << "p=" << p << " kept " << kept << " of " << n;
    // y holds exactly the kept elements, scaled.
    EXPECT_EQ(y.ne(0).sum().item<int64_t>(), static_cast<int64_t>(kept));
  }
}

TEST_F(PackedDropout, SameSeedSameMaskOtherwiseDifferent) {
  const at::Tensor x = at::randn({4096});
  at::manual_seed(11);
  auto [y1, m1] = dropout_packed(x, 0.5, true);
  auto [y2, m2] = dropout_packed(x, 0.5, true);
  at::manual_seed(11);
  auto [y3, m3] = dropout_packed(x, 0.5, true);
  at::manual_seed(12);
  auto [y4, m4] = dropout_packed(x, 0.5, true);
  EXPECT_TRUE(m1.equal(m3));
  EXPECT_TRUE(y1.equal(y3));
  EXPECT_FALSE(m1.equal(m2));
  EXPECT_FALSE(m1.equal(m4));
}

TEST_F(PackedDropout, MaskFollowsLogicalOrderWhateverTheInputStrides) {
  const at::Tensor base = at::randn({6, 5, 4});
  const at::Tensor x = base.permute({2, 0, 1});  // memory order differs from logical order
  ASSERT_FALSE(x.is_contiguous());
  at::manual_seed(3);
  auto [y, mask] = dropout_packed(x, 0.4, true);
  at::manual_seed(3);
  auto [y_contiguous, mask_contiguous] = dropout_packed(x.contiguous(), 0.4, true);
  EXPECT_TRUE(mask.equal(mask_contiguous));
  EXPECT_TRUE(y.equal(y_contiguous));
  EXPECT_TRUE(at::allclose(y.to(at::kDouble), reference_grad(x, mask, 0.4), 1e-6, 0));
}

TEST_F(PackedDropout, EvalModeIsTheIdentityWithAnEmptyMask) {
  const at::Tensor x = at::randn({3, 7}).requires_grad_(true);
  auto [y, mask] = dropout_packed(x, 0.5, false);
  EXPECT_TRUE(y.equal(x));
  EXPECT_EQ(mask.numel(), 0);
  const at::Tensor g = at::randn({3, 7});
  y.backward(g);
  EXPECT_TRUE(x.grad().equal(g));
}

TEST_F(PackedDropout, ProbabilityZeroKeepsAllAndOneDropsAll) {
  const at::Tensor x = at::randn({100});
  auto [y0, m0] = dropout_packed(x, 0.0, true);
  EXPECT_TRUE(y0.equal(x));
  EXPECT_TRUE(unpack_dropout_mask(m0, {100}).all().item<bool>());
  auto [y1, m1] = dropout_packed(x, 1.0, true);
  EXPECT_TRUE(y1.equal(at::zeros_like(x)));
  EXPECT_FALSE(unpack_dropout_mask(m1, {100}).any().item<bool>());
  EXPECT_TRUE(dropout_packed_backward(at::ones({100}), m1, 1.0).equal(at::zeros({100})));
}

TEST_F(PackedDropout, RejectsBadProbabilityAndMismatchedMask) {
  EXPECT_THROW(dropout_packed(at::randn({4}), 1.5, true), c10::Error);
  EXPECT_THROW(dropout_packed(at::randn({4}), -0.1, true), c10::Error);
  auto [y, mask] = dropout_packed(at::randn({20}), 0.5, true);
  EXPECT_THROW(dropout_packed_backward(at::randn({30}), mask, 0.5), c10::Error);
  EXPECT_THROW(dropout_packed_backward(at::randn({20}), mask.to(at::kInt), 0.5), c10::Error);
}

TEST_F(PackedDropout, HalfAndBFloat16) {
  for (auto dtype : {at::kHalf, at::kBFloat16, at::kDouble}) {
    const at::Tensor x = at::randn({333}).to(dtype);
    auto [y, mask] = dropout_packed(x, 0.25, true);
    EXPECT_EQ(y.scalar_type(), dtype);
    EXPECT_TRUE(at::allclose(y.to(at::kDouble), reference_grad(x, mask, 0.25), 1e-2, 1e-3));
    const at::Tensor g = at::randn({333}).to(dtype);
    EXPECT_TRUE(at::allclose(dropout_packed_backward(g, mask, 0.25).to(at::kDouble),
                             reference_grad(g, mask, 0.25), 1e-2, 1e-3));
  }
}

// --- The four checks of the Ascend fix.

// 1. The compiled path: a TorchScript graph run by the profiling executor with optimisation
// and CPU fusion on (what the jit backend does) draws the same mask as eager for the same seed,
// on every run (profiling runs and optimised runs), and its gradient matches eager's.
}  // namespace
}  // namespace zoobench::patches

// Exported by libtorch in both versions; Debian's 1.13 headers leave out the header that
// declares them (torch/csrc/jit/codegen/fuser/interface.h; see util/compat.cpp).
namespace torch::jit {
TORCH_API bool canFuseOnCPU();
TORCH_API void overrideCanFuseOnCPU(bool value);
}  // namespace torch::jit

namespace zoobench::patches {
namespace {

// CPU fusion on, as the jit backend runs it where LibTorch has LLVM. Without LLVM (Debian's
// 1.13) the jit backend leaves CPU fusion off; here fused kernels then run in NNC's
// interpreter, so the fused path around the op is exercised on every build. Restores the
// previous switches.
class CpuFusionOn {
 public:
  CpuFusionOn()
      : must_use_llvm_(torch::jit::tensorexpr::getTEMustUseLLVMOnCPU()),
        can_fuse_on_cpu_(torch::jit::canFuseOnCPU()),
        fuser_enabled_(torch::jit::tensorExprFuserEnabled()) {
    torch::jit::tensorexpr::getTEMustUseLLVMOnCPU() = false;
    torch::jit::overrideCanFuseOnCPU(true);
    torch::jit::setTensorExprFuserEnabled(true);
  }
  ~CpuFusionOn() {
    torch::jit::setTensorExprFuserEnabled(fuser_enabled_);
    torch::jit::overrideCanFuseOnCPU(can_fuse_on_cpu_);
    torch::jit::tensorexpr::getTEMustUseLLVMOnCPU() = must_use_llvm_;
  }

 private:
  bool must_use_llvm_;
  bool can_fuse_on_cpu_;
  bool fuser_enabled_;
};

TEST_F(PackedDropout, CompiledPathMaskMatchesEagerUnderTheSameSeed) {
  torch::jit::GraphOptimizerEnabledGuard optimize(true);
  CpuFusionOn fusion;
  const double p = 0.3;
  const at::Tensor x0 = at::randn({64, 33});
  at::manual_seed(7);
  const at::Tensor x_eager = x0.clone().requires_grad_(true);
  auto [y, eager_mask] = dropout_packed(x_eager * 2.0 + 1.0, p, true);
  const at::Tensor eager_out = at::relu(y) * 3.0 - 1.0;
  eager_out.sum().backward();

  // Without gradients the executor fuses the elementwise ops around the dropout (NNC); with
  // them it builds autodiff subgraphs. Both must draw eager's mask, run after run.
  for (bool with_grad : {false, true}) {
    auto cu = testing::compile_with_ops(R"JIT(
def f(x: Tensor, p: float):
    h = x * 2.0 + 1.0
    y, mask = zoobench.dropout_packed(h, p, True)
    return torch.relu(y) * 3.0 - 1.0, mask
)JIT");
    std::shared_ptr<torch::jit::Graph> forward_graph;
    for (int run = 0; run < 5; ++run) {
      const std::string what =
          (with_grad ? "with grad, run " : "no grad, run ") + std::to_string(run);
      at::manual_seed(7);
      const at::Tensor x = x0.clone().requires_grad_(with_grad);
      auto result = cu->run_method("f", x, p).toTuple();
      forward_graph = torch::jit::lastExecutedOptimizedGraph();
      const at::Tensor out = result->elements()[0].toTensor();
      const at::Tensor mask = result->elements()[1].toTensor();
      EXPECT_TRUE(mask.equal(eager_mask)) << what;
      EXPECT_TRUE(at::allclose(out, eager_out, 1e-6, 1e-6)) << what;
      if (with_grad) {
        out.sum().backward();
        EXPECT_TRUE(at::allclose(x.grad(), x_eager.grad(), 1e-6, 1e-6)) << what;
      }
    }
    ASSERT_NE(forward_graph, nullptr);
    std::ostringstream graph_text;
    graph_text << *forward_graph;
    EXPECT_THAT(graph_text.str(), ::testing::HasSubstr("zoobench::dropout_packed"));
    const char* compiled = with_grad ? "prim::DifferentiableGraph" : "prim::TensorExprGroup";
    EXPECT_THAT(graph_text.str(), ::testing::HasSubstr(compiled)) << graph_text.str();
  }
}

// Two calls on the same input are two draws: the optimiser must not merge them (CSE).
TEST_F(PackedDropout, OptimizedGraphKeepsEveryDraw) {
  torch::jit::GraphOptimizerEnabledGuard optimize(true);
  auto cu = testing::compile_with_ops(R"JIT(
def g(x: Tensor):
    a, ma = zoobench.dropout_packed(x, 0.5, True)
    b, mb = zoobench.dropout_packed(x, 0.5, True)
    return ma, mb
)JIT");
  const at::Tensor x = at::randn({4096});
  for (int run = 0; run < 4; ++run) {
    auto result = cu->run_method("g", x).toTuple();
    EXPECT_FALSE(result->elements()[0].toTensor().equal(result->elements()[1].toTensor()))
        << "run " << run;
  }
}

// 2. Control: a contiguous gradient.
TEST_F(PackedDropout, ContiguousGradControl) {
  const double p = 0.3;
  const at::Tensor x = at::randn({8, 16, 12}).requires_grad_(true);
  auto [y, mask] = dropout_packed(x, p, true);
  const at::Tensor g = at::randn({8, 16, 12});
  y.backward(g);
  expect_matches_reference(x.grad(), g, mask, p, "autograd");
  expect_matches_reference(dropout_packed_backward(g, mask, p), g, mask, p, "backward op");
}

// 3. Longformer: attention probabilities (B, S, H, W) go through dropout and then
// transpose(1, 2) into the sliding-window matmul, whose padded "skewed" layout (rows of W
// elements in a buffer of W + 1) is unskewed by a strided view. The gradient that reaches
// dropout's backward is therefore a permuted, stride-only view of a padded buffer: its memory
// order is not its logical order.
TEST_F(PackedDropout, LongformerUnskewShapedGrad) {
  const int64_t B = 2, S = 24, H = 3, W = 9;
  const double p = 0.1;
  const at::Tensor x = at::randn({B, S, H, W}).requires_grad_(true);
  auto [y, mask] = dropout_packed(x, p, true);

  const at::Tensor skewed = at::randn({B * H * S * (W + 1)});
  const at::Tensor g = skewed.as_strided({B, S, H, W}, {H * S * (W + 1), W + 1, S * (W + 1), 1});
  ASSERT_FALSE(g.is_contiguous());
  ASSERT_FALSE(g.transpose(1, 2).is_contiguous());  // a gap per row as well as permuted
  expect_matches_reference(dropout_packed_backward(g, mask, p), g, mask, p, "backward op");
  y.backward(g);
  expect_matches_reference(x.grad(), g, mask, p, "autograd");

  // The same shape arising naturally: the gradient of y.transpose(1, 2) is a transposed view.
  const at::Tensor x2 = at::randn({B, S, H, W}).requires_grad_(true);
  auto [y2, mask2] = dropout_packed(x2, p, true);
  const at::Tensor weights = at::randn({B, H, S, W});
  (y2.transpose(1, 2) * weights).sum().backward();
  expect_matches_reference(x2.grad(), weights.transpose(1, 2), mask2, p, "through transpose");
}

// 4. Permuted (and other non-contiguous) gradients against the eager reference.
TEST_F(PackedDropout, PermutedGradMatchesEagerReference) {
  const double p = 0.45;
  const at::Tensor x = at::randn({5, 6, 7, 8});
  auto [y, mask] = dropout_packed(x, p, true);
  std::vector<std::pair<std::string, at::Tensor>> grads = {
      {"permute(3,0,2,1)", at::randn({8, 5, 7, 6}).permute({1, 3, 2, 0})},
      {"transpose(0,3)", at::randn({8, 6, 7, 5}).transpose(0, 3)},
      {"channels_last", at::randn({5, 6, 7, 8}).contiguous(at::MemoryFormat::ChannelsLast)},
      {"expanded (stride 0)", at::randn({1, 6, 1, 8}).expand({5, 6, 7, 8})},
      {"sliced", at::randn({5, 12, 7, 8}).slice(1, 0, 12, 2)},
  };
  for (const auto& [name, g] : grads) {
    ASSERT_EQ(g.sizes(), x.sizes()) << name;
    ASSERT_FALSE(g.is_contiguous()) << name;
    expect_matches_reference(dropout_packed_backward(g, mask, p), g, mask, p, name);
    const at::Tensor leaf = x.clone().requires_grad_(true);
    at::manual_seed(5);
    auto [y_leaf, mask_leaf] = dropout_packed(leaf, p, true);
    y_leaf.backward(g);
    expect_matches_reference(leaf.grad(), g, mask_leaf, p, name + " (autograd)");
  }
}

TEST_F(PackedDropout, DoubleBackwardIsTheSameLinearMap) {
  const double p = 0.3;
  const at::Tensor x = at::randn({40}).requires_grad_(true);
  auto [y, mask] = dropout_packed(x, p, true);
  const at::Tensor g = at::randn({40}).requires_grad_(true);
  auto gx = torch::autograd::grad({y}, {x}, {g}, /*retain_graph=*/true, /*create_graph=*/true)[0];
  const at::Tensor v = at::randn({40});
  auto gg = torch::autograd::grad({(gx * v).sum()}, {g})[0];
  expect_matches_reference(gg, v, mask, p, "d(grad_x . v)/d(grad)");
}

// Feature dropout: one bit per (sample, channel), drawn as dropout_packed draws N * C elements.
TEST_F(PackedDropout, FeatureDropoutMaskHasOneBitPerChannel) {
  const at::Tensor x = at::randn({6, 10, 3, 4}, at::kDouble);
  at::manual_seed(11);
  auto [y, bits] = feature_dropout_packed(x, 0.3, true);
  EXPECT_EQ(bits.numel(), (6 * 10 + 7) / 8);
  at::manual_seed(11);
  auto [ones_out, same_bits] = dropout_packed(at::ones({60}, at::kDouble), 0.3, true);
  EXPECT_TRUE(at::equal(bits, same_bits));
  const at::Tensor keep = unpack_dropout_mask(bits, {6, 10, 1, 1}).to(at::kDouble);
  EXPECT_TRUE(at::allclose(y, x * keep / 0.7, 1e-12, 1e-12));
  // Every position of a channel shares its fate.
  const at::Tensor zero_positions = (y == 0).to(at::kDouble).sum({2, 3});
  EXPECT_TRUE(at::equal(zero_positions, (1 - keep.squeeze(-1).squeeze(-1)) * 12));
}

TEST_F(PackedDropout, FeatureDropoutKeepRateIsWithinSixSigma) {
  const int64_t n = 512, c = 256;
  const double p = 0.2;
  at::manual_seed(3);
  auto [y, bits] = feature_dropout_packed(at::ones({n, c, 2}), p, true);
  const double kept = unpack_dropout_mask(bits, {n * c}).sum().item<double>();
  const double mean = n * c * (1 - p), sigma = std::sqrt(n * c * p * (1 - p));
  EXPECT_LT(std::abs(kept - mean), 6 * sigma) << kept << " kept of " << n * c;
}

TEST_F(PackedDropout, FeatureDropoutGradientIsGradTimesTheChannelScale) {
  const at::Tensor x = at::randn({3, 5, 7}).requires_grad_(true);
  at::manual_seed(5);
  auto [y, bits] = feature_dropout_packed(x, 0.5, true);
  const at::Tensor grad = at::randn({3, 5, 7});
  y.backward(grad);
  const at::Tensor keep = unpack_dropout_mask(bits, {3, 5, 1}).to(at::kFloat);
  EXPECT_TRUE(at::allclose(x.grad(), grad * keep * 2.0, 1e-6, 1e-7));
}

TEST_F(PackedDropout, FeatureDropoutEvalModeAndOneDimensionalInput) {
  const at::Tensor x = at::randn({2, 3, 4});
  auto [y, bits] = feature_dropout_packed(x, 0.5, false);
  EXPECT_TRUE(at::equal(y, x));
  EXPECT_EQ(bits.numel(), 0);
  try {
    feature_dropout_packed(at::randn({8}), 0.5, true);
    FAIL() << "expected an error for a 1-D input";
  } catch (const c10::Error& e) {
    EXPECT_THAT(e.what_without_backtrace(), ::testing::HasSubstr("at least 2 dimensions"));
  }
}

TEST(PackedDropoutWithoutPatch, CallingTheOperatorSaysWhichPatchToApply) {
  try {
    dropout_packed(at::randn({4}), 0.5, true);
    FAIL() << "expected an error";
  } catch (const c10::Error& e) {
    EXPECT_THAT(e.what_without_backtrace(), ::testing::HasSubstr("packed_dropout"));
  }
}

}  // namespace
}  // namespace zoobench::patches
