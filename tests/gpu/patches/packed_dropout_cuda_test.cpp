// zoobench::dropout_packed on CUDA: the cases shared with the CPU (tests/unit/patches/
// packed_dropout_cases.h: the mask format and keep rate, determinism under the CUDA seed,
// packing in logical order, the four checks of the Ascend fix, reduced precision, eval mode and
// the edge probabilities) at CUDA's sizes, plus CUDA graph capture (replays draw fresh masks
// and match eager under the same seed) and the kernels' paths (vectorised or element by
// element, whole warp tiles or a tail, contiguous or strided gradient) in every dtype.
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <gtest/gtest.h>

#include "unit/patches/packed_dropout_cases.h"
#include "zoobench/patches/packed_dropout.h"
#include "zoobench/patches/registry.h"

namespace zoobench::patches::packed_dropout_cases {
namespace {

INSTANTIATE_TEST_SUITE_P(Cuda, PackedDropoutCases, ::testing::Values(kCuda), case_name);

// x * keep / (1 - p), rounded once to x's dtype from the type the kernels compute in (float
// for 16-bit types), so every path of the kernels must match it exactly.
at::Tensor kernel_reference(const at::Tensor& x, const at::Tensor& mask_bits, double p) {
  const auto compute = x.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  const at::Tensor keep = unpack_dropout_mask(mask_bits, x.sizes()).to(compute);
  return (x.to(compute) * keep * (1.0 / (1.0 - p))).to(x.scalar_type());
}

// The same values as `t` (1-D), at a data pointer 1 element past a 16-byte boundary.
at::Tensor misaligned_copy(const at::Tensor& t) {
  return at::cat({at::zeros({1}, t.options()), t}).narrow(0, 1, t.numel());
}

void expect_equal(const at::Tensor& actual, const at::Tensor& expected, const std::string& what) {
  ASSERT_EQ(actual.sizes(), expected.sizes()) << what;
  EXPECT_TRUE(actual.equal(expected))
      << what << ": max abs diff "
      << (actual.to(at::kDouble) - expected.to(at::kDouble)).abs().max().item<double>();
}

class PackedDropoutCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  }
  PatchScope scope_{{"packed_dropout"}};
};

TEST_F(PackedDropoutCuda, CudaGraphReplaysDrawFreshMasksMatchingEager) {
  const at::Tensor x = at::randn({1 << 16}, at::kCUDA);
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

// Sizes around the warp tiles (256 elements for float32 and float64, 512 for 16-bit types) and
// one where each warp loops over several tiles; inputs at 16-byte aligned and misaligned
// addresses, which take the vectorised and the element-by-element paths.
TEST_F(PackedDropoutCuda, ForwardPathsDrawOneMaskAndMatchTheReference) {
  const double p = 0.25;
  for (auto dtype : {at::kFloat, at::kHalf, at::kBFloat16, at::kDouble}) {
    for (int64_t n : {1, 7, 9, 255, 256, 257, 511, 512, 513, 4097, (1 << 22) + 3}) {
      const std::string what = std::string(c10::toString(dtype)) + " n=" + std::to_string(n);
      const at::Tensor x = at::randn({n}, at::TensorOptions(at::kCUDA).dtype(dtype));
      const at::Tensor x_misaligned = misaligned_copy(x);
      ASSERT_NE(reinterpret_cast<uintptr_t>(x_misaligned.data_ptr()) % 16, 0u) << what;
      at::manual_seed(17);
      auto [y, mask] = dropout_packed(x, p, true);
      at::manual_seed(17);
      auto [y_misaligned, mask_misaligned] = dropout_packed(x_misaligned, p, true);
      EXPECT_TRUE(mask_misaligned.equal(mask)) << what << ": both paths draw the same numbers";
      expect_equal(y, kernel_reference(x, mask, p), what + " aligned");
      expect_equal(y_misaligned, kernel_reference(x, mask, p), what + " misaligned");
      if (n % 8 != 0) {
        EXPECT_EQ(mask[mask.numel() - 1].item<uint8_t>() >> (n % 8), 0) << what << ": padding";
      }
      if (n < 4096) continue;
      const double kept = unpack_dropout_mask(mask, {n}).sum().item<double>();
      const double sigma = std::sqrt(n * p * (1 - p));
      EXPECT_LT(std::abs(kept - n * (1 - p)), 6 * sigma) << what << ": kept " << kept;
    }
  }
}

// The contiguous gradient's vectorised path (aligned or not) and the strided path agree.
TEST_F(PackedDropoutCuda, BackwardPathsMatchTheReference) {
  const double p = 0.4;
  for (auto dtype : {at::kFloat, at::kHalf, at::kBFloat16, at::kDouble}) {
    for (int64_t n : {2, 9, 255, 257, 513, 4097, (1 << 22) + 3}) {
      const std::string what = std::string(c10::toString(dtype)) + " n=" + std::to_string(n);
      const auto options = at::TensorOptions(at::kCUDA).dtype(dtype);
      auto [y, mask] = dropout_packed(at::randn({n}, options), p, true);
      const at::Tensor g = at::randn({n}, options);
      const at::Tensor expected = kernel_reference(g, mask, p);
      const at::Tensor strided = at::stack({g, g}, 1).select(1, 0);
      ASSERT_FALSE(strided.is_contiguous()) << what;
      expect_equal(dropout_packed_backward(g, mask, p), expected, what + " contiguous");
      expect_equal(dropout_packed_backward(misaligned_copy(g), mask, p), expected,
                   what + " misaligned");
      expect_equal(dropout_packed_backward(strided, mask, p), expected, what + " strided");
    }
  }
}

// Forward and backward of a 16-bit type with a tail, inside one graph: the plan made at
// capture, the offset read on the device, and the backward's vectorised path.
TEST_F(PackedDropoutCuda, CudaGraphCapturesForwardAndBackwardOfHalf) {
  const int64_t n = (1 << 16) + 5;
  const double p = 0.3;
  const auto options = at::TensorOptions(at::kCUDA).dtype(at::kHalf);
  const at::Tensor x = at::randn({n}, options);
  const at::Tensor g = at::randn({n}, options);
  at::cuda::CUDAGraph graph;  // outlives the tensors allocated in its memory pool
  at::Tensor y_static, mask_static, grad_static;
  auto stream = c10::cuda::getStreamFromPool();
  at::manual_seed(8);
  {
    c10::cuda::CUDAStreamGuard guard(stream);
    graph.capture_begin();
    std::tie(y_static, mask_static) = dropout_packed(x, p, true);
    grad_static = dropout_packed_backward(g, mask_static, p);
    graph.capture_end();
  }
  at::manual_seed(8);
  graph.replay();
  at::cuda::device_synchronize();
  at::manual_seed(8);
  auto [y_eager, mask_eager] = dropout_packed(x, p, true);
  EXPECT_TRUE(mask_static.equal(mask_eager));
  expect_equal(y_static, kernel_reference(x, mask_static, p), "captured forward");
  expect_equal(grad_static, kernel_reference(g, mask_static, p), "captured backward");
}

}  // namespace
}  // namespace zoobench::patches::packed_dropout_cases
