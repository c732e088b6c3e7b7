// zoobench::dropout_packed's cases, written once and run on every device, as backend_cases.h
// does for the backends: the CPU suite (packed_dropout_test.cpp) and the CUDA suite
// (tests/gpu/patches/packed_dropout_cuda_test.cpp) each include this file and instantiate
// PackedDropoutCases with their row of the table below. Include it from exactly one file per
// executable; what only one device has (argument checks, feature dropout, CUDA graph capture)
// stays in that device's file.
//
// The cases: the mask format, the keep rate (binomial bound), the output formula, determinism
// under the seed and packing in logical order, eval mode, the edge probabilities, reduced
// precision, and the four checks of the Ascend fix (the compiled path's mask equals eager's
// under the same seed; a contiguous-gradient control; a Longformer _unskew-shaped gradient;
// permuted gradients against the eager reference grad*mask/(1-p)). References are computed in
// float64 from the unpacked mask.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/csrc/jit/tensorexpr/kernel.h>

#include <cmath>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "unit/patches/script_with_ops.h"
#include "zoobench/patches/packed_dropout.h"
#include "zoobench/patches/registry.h"
#include "zoobench/util/compat.h"

namespace zoobench::patches::packed_dropout_cases {

// What differs between the devices: sizes (a realistic Longformer on CUDA, more elements where
// the device is fast), the compiled path's tolerance, and what the CPU compiled graph must show.
struct DeviceCase {
  c10::DeviceType device;
  std::vector<int64_t> mask_numels;  // for the mask-format check
  int64_t keep_rate_numel;           // for the binomial keep-rate check
  std::vector<int64_t> longformer;   // B, S, H, W of the attention probabilities
  std::vector<int64_t> compiled_input;
  double compiled_tolerance;
  // Runs the compiled path with CPU fusion on (as the jit backend does where LibTorch has LLVM)
  // and checks that the executor fused (no grad) or built autodiff subgraphs (with grad).
  bool compiled_path_fuses_on_cpu;
};

inline const DeviceCase kCpu{
    c10::kCPU, {0, 1, 7, 8, 9, 63, 1000003}, (int64_t{1} << 20) + 3, {2, 24, 3, 9}, {64, 33}, 1e-6,
    true};
inline const DeviceCase kCuda{c10::kCUDA,
                              {1, 7, 8, 9, 1000003},
                              int64_t{1} << 22,
                              {2, 512, 12, 257},  // Longformer-base: window 256 -> 2w + 1
                              {256, 129},
                              1e-5,
                              false};

inline std::string case_name(const ::testing::TestParamInfo<DeviceCase>& info) {
  return c10::DeviceTypeName(info.param.device, /*lower_case=*/true);
}

// grad * mask / (1 - p) in float64, from the unpacked mask in grad's logical order.
inline at::Tensor reference_grad(const at::Tensor& grad, const at::Tensor& mask_bits, double p) {
  const at::Tensor keep = unpack_dropout_mask(mask_bits, grad.sizes()).to(at::kDouble);
  return grad.to(at::kDouble) * keep / (1.0 - p);
}

inline void expect_matches_reference(const at::Tensor& actual, const at::Tensor& grad,
                                     const at::Tensor& mask_bits, double p,
                                     const std::string& what) {
  ASSERT_EQ(actual.device(), grad.device()) << what;
  ASSERT_EQ(actual.sizes(), grad.sizes()) << what;
  const at::Tensor expected = reference_grad(grad, mask_bits, p);
  EXPECT_TRUE(at::allclose(actual.to(at::kDouble), expected, 1e-6, 1e-7))
      << what << ": max abs diff "
      << (actual.to(at::kDouble) - expected).abs().max().item<double>();
}

class PackedDropoutCases : public ::testing::TestWithParam<DeviceCase> {
 protected:
  void SetUp() override {
    if (GetParam().device == c10::kCUDA && !(compat::kHasCuda && at::hasCUDA())) {
      GTEST_SKIP() << "no CUDA device";
    }
  }
  at::Tensor randn(at::IntArrayRef sizes, at::ScalarType dtype = at::kFloat) const {
    return at::randn(sizes, at::TensorOptions(GetParam().device).dtype(dtype));
  }
  at::Tensor ones(at::IntArrayRef sizes) const {
    return at::ones(sizes, at::TensorOptions(GetParam().device));
  }
  PatchScope scope_{{"packed_dropout"}};
};

TEST_P(PackedDropoutCases, MaskIsCeilNumelOver8BytesWithZeroPadding) {
  for (int64_t n : GetParam().mask_numels) {
    auto [y, mask] = dropout_packed(randn({n}), 0.5, true);
    EXPECT_EQ(mask.device().type(), GetParam().device);
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
  auto [y, mask] = dropout_packed(randn({64, 1024}), 0.1, true);
  EXPECT_EQ(mask.nbytes() * 8, static_cast<size_t>(y.numel()));
}

TEST_P(PackedDropoutCases, OutputIsInputTimesMaskOverKeepProbability) {
  const at::Tensor x = randn({37, 29});
  for (double p : {0.1, 0.5, 0.8}) {
    auto [y, mask] = dropout_packed(x, p, true);
    const at::Tensor expected = reference_grad(x, mask, p);  // same formula as for gradients
    EXPECT_TRUE(at::allclose(y.to(at::kDouble), expected, 1e-6, 0)) << p;
  }
}

TEST_P(PackedDropoutCases, KeepRateIsWithinSixSigmaOfTheBinomialMean) {
  const int64_t n = GetParam().keep_rate_numel;
  for (double p : {0.1, 0.5, 0.9}) {
    const at::Tensor x = randn({n});
    auto [y, mask] = dropout_packed(x, p, true);
    const at::Tensor keep = unpack_dropout_mask(mask, {n});
    const double kept = keep.sum().item<double>();
    const double mean = n * (1 - p);
    const double sigma = std::sqrt(n * p * (1 - p));
    EXPECT_LT(std::abs(kept - mean), 6 * sigma) << "p=" << p << " kept " << kept << " of " << n;
    // y holds exactly the kept elements, scaled.
    EXPECT_EQ(y.ne(0).sum().item<int64_t>(), (keep.to(at::kBool) & x.ne(0)).sum().item<int64_t>());
    EXPECT_TRUE(at::allclose(y.to(at::kDouble), reference_grad(x, mask, p), 1e-6, 0)) << p;
  }
}

TEST_P(PackedDropoutCases, SameSeedSameMaskOtherwiseDifferent) {
  const at::Tensor x = randn({4096});
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

TEST_P(PackedDropoutCases, MaskFollowsLogicalOrderWhateverTheInputStrides) {
  const at::Tensor base = randn({6, 5, 4});
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

TEST_P(PackedDropoutCases, EvalModeIsTheIdentityWithAnEmptyMask) {
  const at::Tensor x = randn({3, 7}).requires_grad_(true);
  auto [y, mask] = dropout_packed(x, 0.5, false);
  EXPECT_TRUE(y.equal(x));
  EXPECT_EQ(mask.numel(), 0);
  const at::Tensor g = randn({3, 7});
  y.backward(g);
  EXPECT_TRUE(x.grad().equal(g));
}

TEST_P(PackedDropoutCases, ProbabilityZeroKeepsAllAndOneDropsAll) {
  const at::Tensor x = randn({100});
  auto [y0, m0] = dropout_packed(x, 0.0, true);
  EXPECT_TRUE(y0.equal(x));
  EXPECT_TRUE(unpack_dropout_mask(m0, {100}).all().item<bool>());
  auto [y1, m1] = dropout_packed(x, 1.0, true);
  EXPECT_TRUE(y1.equal(at::zeros_like(x)));
  EXPECT_FALSE(unpack_dropout_mask(m1, {100}).any().item<bool>());
  EXPECT_TRUE(dropout_packed_backward(ones({100}), m1, 1.0).equal(at::zeros_like(x)));
}

TEST_P(PackedDropoutCases, HalfAndBFloat16) {
  for (auto dtype : {at::kHalf, at::kBFloat16, at::kDouble}) {
    const at::Tensor x = randn({4097}, dtype);
    auto [y, mask] = dropout_packed(x, 0.25, true);
    EXPECT_EQ(y.scalar_type(), dtype);
    EXPECT_TRUE(at::allclose(y.to(at::kDouble), reference_grad(x, mask, 0.25), 1e-2, 1e-3));
    const at::Tensor g = randn({4097}, dtype);
    EXPECT_TRUE(at::allclose(dropout_packed_backward(g, mask, 0.25).to(at::kDouble),
                             reference_grad(g, mask, 0.25), 1e-2, 1e-3));
  }
}

// --- The four checks of the Ascend fix.

}  // namespace zoobench::patches::packed_dropout_cases

// Exported by libtorch in both versions; Debian's 1.13 headers leave out the header that
// declares them (torch/csrc/jit/codegen/fuser/interface.h; see util/compat.cpp).
namespace torch::jit {
TORCH_API bool canFuseOnCPU();
TORCH_API void overrideCanFuseOnCPU(bool value);
}  // namespace torch::jit

namespace zoobench::patches::packed_dropout_cases {

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
  CpuFusionOn(const CpuFusionOn&) = delete;
  CpuFusionOn& operator=(const CpuFusionOn&) = delete;

 private:
  bool must_use_llvm_;
  bool can_fuse_on_cpu_;
  bool fuser_enabled_;
};

// 1. The compiled path: a TorchScript graph run by the profiling executor with optimisation on
// (what the jit backend does) draws the same mask as eager for the same seed, on every run
// (profiling runs and optimised runs), and its gradient matches eager's.
TEST_P(PackedDropoutCases, CompiledPathMaskMatchesEagerUnderTheSameSeed) {
  const DeviceCase& c = GetParam();
  torch::jit::GraphOptimizerEnabledGuard optimize(true);
  std::optional<CpuFusionOn> fusion;
  if (c.compiled_path_fuses_on_cpu) fusion.emplace();
  const double p = 0.3;
  const at::Tensor x0 = randn(c.compiled_input);
  at::manual_seed(7);
  const at::Tensor x_eager = x0.clone().requires_grad_(true);
  auto [y, eager_mask] = dropout_packed(x_eager * 2.0 + 1.0, p, true);
  const at::Tensor eager_out = at::relu(y) * 3.0 - 1.0;
  eager_out.sum().backward();

  // Without gradients the CPU executor fuses the elementwise ops around the dropout (NNC); with
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
      EXPECT_TRUE(at::allclose(out, eager_out, c.compiled_tolerance, c.compiled_tolerance)) << what;
      if (with_grad) {
        out.sum().backward();
        EXPECT_TRUE(
            at::allclose(x.grad(), x_eager.grad(), c.compiled_tolerance, c.compiled_tolerance))
            << what;
      }
    }
    if (!c.compiled_path_fuses_on_cpu) continue;
    ASSERT_NE(forward_graph, nullptr);
    std::ostringstream graph_text;
    graph_text << *forward_graph;
    EXPECT_THAT(graph_text.str(), ::testing::HasSubstr("zoobench::dropout_packed"));
    const char* compiled = with_grad ? "prim::DifferentiableGraph" : "prim::TensorExprGroup";
    EXPECT_THAT(graph_text.str(), ::testing::HasSubstr(compiled)) << graph_text.str();
  }
}

// 2. Control: a contiguous gradient.
TEST_P(PackedDropoutCases, ContiguousGradControl) {
  const double p = 0.3;
  const at::Tensor x = randn({8, 16, 12}).requires_grad_(true);
  auto [y, mask] = dropout_packed(x, p, true);
  const at::Tensor g = randn({8, 16, 12});
  y.backward(g);
  expect_matches_reference(x.grad(), g, mask, p, "autograd");
  expect_matches_reference(dropout_packed_backward(g, mask, p), g, mask, p, "backward op");
}

// 3. Longformer: attention probabilities (B, S, H, W) go through dropout and then
// transpose(1, 2) into the sliding-window matmul, whose padded "skewed" layout (rows of W
// elements in a buffer of W + 1) is unskewed by a strided view. The gradient that reaches
// dropout's backward is therefore a permuted, stride-only view of a padded buffer: its memory
// order is not its logical order.
TEST_P(PackedDropoutCases, LongformerUnskewShapedGrad) {
  const std::vector<int64_t>& shape = GetParam().longformer;
  const int64_t B = shape[0], S = shape[1], H = shape[2], W = shape[3];
  const double p = 0.1;
  const at::Tensor x = randn({B, S, H, W}).requires_grad_(true);
  auto [y, mask] = dropout_packed(x, p, true);

  const at::Tensor skewed = randn({B * H * S * (W + 1)});
  const at::Tensor g = skewed.as_strided({B, S, H, W}, {H * S * (W + 1), W + 1, S * (W + 1), 1});
  ASSERT_FALSE(g.is_contiguous());
  ASSERT_FALSE(g.transpose(1, 2).is_contiguous());  // a gap per row as well as permuted
  expect_matches_reference(dropout_packed_backward(g, mask, p), g, mask, p, "backward op");
  y.backward(g);
  expect_matches_reference(x.grad(), g, mask, p, "autograd");

  // The same shape arising naturally: the gradient of y.transpose(1, 2) is a transposed view.
  const at::Tensor x2 = randn({B, S, H, W}).requires_grad_(true);
  auto [y2, mask2] = dropout_packed(x2, p, true);
  const at::Tensor weights = randn({B, H, S, W});
  (y2.transpose(1, 2) * weights).sum().backward();
  expect_matches_reference(x2.grad(), weights.transpose(1, 2), mask2, p, "through transpose");
}

// 4. Permuted (and other non-contiguous) gradients against the eager reference.
TEST_P(PackedDropoutCases, PermutedGradMatchesEagerReference) {
  const double p = 0.45;
  const at::Tensor x = randn({5, 6, 7, 8});
  auto [y, mask] = dropout_packed(x, p, true);
  std::vector<std::pair<std::string, at::Tensor>> grads = {
      {"permute(3,0,2,1)", randn({8, 5, 7, 6}).permute({1, 3, 2, 0})},
      {"transpose(0,3)", randn({8, 6, 7, 5}).transpose(0, 3)},
      {"channels_last", randn({5, 6, 7, 8}).contiguous(at::MemoryFormat::ChannelsLast)},
      {"expanded (stride 0)", randn({1, 6, 1, 8}).expand({5, 6, 7, 8})},
      {"sliced", randn({5, 12, 7, 8}).slice(1, 0, 12, 2)},
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

// Two calls on the same input are two draws: the optimiser must not merge them (CSE).
TEST_P(PackedDropoutCases, OptimizedGraphKeepsEveryDraw) {
  torch::jit::GraphOptimizerEnabledGuard optimize(true);
  auto cu = testing::compile_with_ops(R"JIT(
def g(x: Tensor):
    a, ma = zoobench.dropout_packed(x, 0.5, True)
    b, mb = zoobench.dropout_packed(x, 0.5, True)
    return ma, mb
)JIT");
  const at::Tensor x = randn({4096});
  for (int run = 0; run < 4; ++run) {
    auto result = cu->run_method("g", x).toTuple();
    EXPECT_FALSE(result->elements()[0].toTensor().equal(result->elements()[1].toTensor()))
        << "run " << run;
  }
}

}  // namespace zoobench::patches::packed_dropout_cases
