// zoobench::dropout_packed on CUDA: the mask format and keep rate, determinism under the CUDA
// seed, packing in logical order, the four checks of the Ascend fix (compiled path = eager;
// contiguous control; Longformer _unskew-shaped gradient; permuted gradients against
// grad*mask/(1-p)), reduced precision, and CUDA graph capture (replays draw fresh masks and
// match eager under the same seed).
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include <cmath>

#include "unit/patches/script_with_ops.h"
#include "zoobench/patches/packed_dropout.h"
#include "zoobench/patches/registry.h"

namespace zoobench::patches {
namespace {

class PackedDropoutCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  }
  PatchScope scope_{{"packed_dropout"}};
};

at::Tensor cuda_randn(at::IntArrayRef sizes) { return at::randn(sizes, at::kCUDA); }

at::Tensor reference_grad(const at::Tensor& grad, const at::Tensor& mask_bits, double p) {
  const at::Tensor keep = unpack_dropout_mask(mask_bits, grad.sizes()).to(at::kDouble);
  return grad.to(at::kDouble) * keep / (1.0 - p);
}

void expect_matches_reference(const at::Tensor& actual, const at::Tensor& grad,
                              const at::Tensor& mask_bits, double p, const std::string& what) {
  ASSERT_TRUE(actual.is_cuda()) << what;
  const at::Tensor expected = reference_grad(grad, mask_bits, p);
  EXPECT_TRUE(at::allclose(actual.to(at::kDouble), expected, 1e-6, 1e-7))
      << what << ": max abs diff "
      << (actual.to(at::kDouble) - expected).abs().max().item<double>();
}

TEST_F(PackedDropoutCuda, MaskFormatKeepRateAndOutput) {
  for (int64_t n : {1, 7, 8, 9, 1000003}) {
    auto [y, mask] = dropout_packed(cuda_randn({n}), 0.5, true);
    EXPECT_TRUE(mask.is_cuda());
    EXPECT_EQ(mask.scalar_type(), at::kByte);
    EXPECT_EQ(mask.numel(), (n + 7) / 8) << n;
    if (n % 8 != 0) {
      EXPECT_EQ(mask[mask.numel() - 1].item<uint8_t>() >> (n % 8), 0) << n;
    }
  }
  const int64_t n = int64_t{1} << 22;
  for (double p : {0.1, 0.5, 0.9}) {
    const at::Tensor x = cuda_randn({n});
    auto [y, mask] = dropout_packed(x, p, true);
    const double kept = unpack_dropout_mask(mask, {n}).sum().item<double>();
    EXPECT_LT(std::abs(kept - n * (1 - p)), 6 * std::sqrt(n * p * (1 - p))) << p;
    EXPECT_TRUE(at::allclose(y.to(at::kDouble), reference_grad(x, mask, p), 1e-6, 0)) << p;
  }
}

TEST_F(PackedDropoutCuda, SeedDeterminesTheMaskAndPackingFollowsLogicalOrder) {
  const at::Tensor x = cuda_randn({6, 5, 4}).permute({2, 0, 1});
  at::manual_seed(3);
  auto [y1, m1] = dropout_packed(x, 0.4, true);
  auto [y2, m2] = dropout_packed(x, 0.4, true);
  at::manual_seed(3);
  auto [y3, m3] = dropout_packed(x.contiguous(), 0.4, true);
  EXPECT_TRUE(m1.equal(m3));
  EXPECT_FALSE(m1.equal(m2));
  EXPECT_TRUE(at::allclose(y1.to(at::kDouble), reference_grad(x, m1, 0.4), 1e-6, 0));
}

TEST_F(PackedDropoutCuda, CompiledPathMaskMatchesEagerUnderTheSameSeed) {
  torch::jit::GraphOptimizerEnabledGuard optimize(true);
  auto cu = testing::compile_with_ops(R"JIT(
def f(x: Tensor, p: float):
    h = x * 2.0 + 1.0
    y, mask = zoobench.dropout_packed(h, p, True)
    return torch.relu(y) * 3.0 - 1.0, mask
)JIT");
  const at::Tensor x0 = cuda_randn({256, 129});
  at::manual_seed(7);
  const at::Tensor xe = x0.clone().requires_grad_(true);
  auto [y, eager_mask] = dropout_packed(xe * 2.0 + 1.0, 0.3, true);
  const at::Tensor eager_out = at::relu(y) * 3.0 - 1.0;
  eager_out.sum().backward();
  for (bool with_grad : {false, true}) {
    for (int run = 0; run < 5; ++run) {
      at::manual_seed(7);
      const at::Tensor x = x0.clone().requires_grad_(with_grad);
      auto result = cu->run_method("f", x, 0.3).toTuple();
      EXPECT_TRUE(result->elements()[1].toTensor().equal(eager_mask)) << with_grad << run;
      const at::Tensor out = result->elements()[0].toTensor();
      EXPECT_TRUE(at::allclose(out, eager_out, 1e-5, 1e-5)) << with_grad << run;
      if (with_grad) {
        out.sum().backward();
        EXPECT_TRUE(at::allclose(x.grad(), xe.grad(), 1e-5, 1e-5)) << run;
      }
    }
  }
}

TEST_F(PackedDropoutCuda, ContiguousGradControl) {
  const at::Tensor x = cuda_randn({8, 16, 12}).requires_grad_(true);
  auto [y, mask] = dropout_packed(x, 0.3, true);
  const at::Tensor g = cuda_randn({8, 16, 12});
  y.backward(g);
  expect_matches_reference(x.grad(), g, mask, 0.3, "autograd");
  expect_matches_reference(dropout_packed_backward(g, mask, 0.3), g, mask, 0.3, "backward op");
}

TEST_F(PackedDropoutCuda, LongformerUnskewShapedGrad) {
  const int64_t B = 2, S = 512, H = 12, W = 257;  // Longformer-base: window 256 -> 2w + 1
  const double p = 0.1;
  const at::Tensor x = cuda_randn({B, S, H, W}).requires_grad_(true);
  auto [y, mask] = dropout_packed(x, p, true);
  const at::Tensor skewed = cuda_randn({B * H * S * (W + 1)});
  const at::Tensor g = skewed.as_strided({B, S, H, W}, {H * S * (W + 1), W + 1, S * (W + 1), 1});
  ASSERT_FALSE(g.is_contiguous());
  expect_matches_reference(dropout_packed_backward(g, mask, p), g, mask, p, "backward op");
  y.backward(g);
  expect_matches_reference(x.grad(), g, mask, p, "autograd");
}

TEST_F(PackedDropoutCuda, PermutedGradMatchesEagerReference) {
  const double p = 0.45;
  const at::Tensor x = cuda_randn({5, 6, 7, 8});
  auto [y, mask] = dropout_packed(x, p, true);
  const std::vector<std::pair<std::string, at::Tensor>> grads = {
      {"permute", cuda_randn({8, 5, 7, 6}).permute({1, 3, 2, 0})},
      {"transpose", cuda_randn({8, 6, 7, 5}).transpose(0, 3)},
      {"channels_last", cuda_randn({5, 6, 7, 8}).contiguous(at::MemoryFormat::ChannelsLast)},
      {"expanded", cuda_randn({1, 6, 1, 8}).expand({5, 6, 7, 8})},
      {"sliced", cuda_randn({5, 12, 7, 8}).slice(1, 0, 12, 2)},
  };
  for (const auto& [name, g] : grads) {
    ASSERT_FALSE(g.is_contiguous()) << name;
    expect_matches_reference(dropout_packed_backward(g, mask, p), g, mask, p, name);
  }
}

TEST_F(PackedDropoutCuda, ReducedPrecisionEvalAndEdgeProbabilities) {
  for (auto dtype : {at::kHalf, at::kBFloat16, at::kDouble}) {
    const at::Tensor x = cuda_randn({4097}).to(dtype);
    auto [y, mask] = dropout_packed(x, 0.25, true);
    EXPECT_EQ(y.scalar_type(), dtype);
    EXPECT_TRUE(at::allclose(y.to(at::kDouble), reference_grad(x, mask, 0.25), 1e-2, 1e-3));
  }
  const at::Tensor x = cuda_randn({100});
  auto [y_eval, m_eval] = dropout_packed(x, 0.5, false);
  EXPECT_TRUE(y_eval.equal(x));
  EXPECT_EQ(m_eval.numel(), 0);
  auto [y0, m0] = dropout_packed(x, 0.0, true);
  EXPECT_TRUE(y0.equal(x));
  auto [y1, m1] = dropout_packed(x, 1.0, true);
  EXPECT_TRUE(y1.equal(at::zeros_like(x)));
}

TEST_F(PackedDropoutCuda, CudaGraphReplaysDrawFreshMasksMatchingEager) {
  const at::Tensor x = cuda_randn({1 << 16});
  at::cuda::CUDAGraph graph;  // outlives the tensors allocated in its memory pool
  at::Tensor y_static, mask_static;
  auto stream = c10::cuda::getStreamFromPool();
  at::manual_seed(21);
  {
    c10::cuda::CUDAStreamGuard guard(stream);
    graph.capture_begin();
    std::tie(y_static, mask_static) = dropout_packed(x, 0.5, true);
    graph.capture_end();
  }
  at::manual_seed(21);
  graph.replay();
  const at::Tensor first = mask_static.clone();
  graph.replay();
  const at::Tensor second = mask_static.clone();
  at::cuda::device_synchronize();
  EXPECT_FALSE(first.equal(second)) << "each replay must advance the generator's offset";
  at::manual_seed(21);
  auto [y_eager, mask_eager] = dropout_packed(x, 0.5, true);
  EXPECT_TRUE(first.equal(mask_eager)) << "a replay after manual_seed must draw eager's mask";
  EXPECT_TRUE(at::allclose(y_static.to(at::kDouble), reference_grad(x, second, 0.5), 1e-6, 0));
}

}  // namespace
}  // namespace zoobench::patches
