// compat::set_deterministic_numerics(true) is what accuracy runs rely on for a float32 reference
// that is really float32: TF32 off for cuBLAS and cuDNN. On the H200 (2026-11-30) eager's
// float32 convolutions came out 100-1000x further from float64 than jit's on the timm CNNs
// (mobilenetv2_100: RMSE 1.8e-3 against 1.5e-6), about what TF32's 10-bit mantissa would give.
// These tests measure it directly: float32 against float64 on the same random data. They
// passed with PyTorch 2.11 (its legacy switches also set the newer per-operator precision), so
// that gap has another cause; they stay to catch a version whose switches stop working.
#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include "zoobench/util/compat.h"

namespace zoobench {
namespace {

// Largest error relative to the largest magnitude of the float64 result.
double relative_error(const at::Tensor& float32_result, const at::Tensor& float64_result) {
  return ((float32_result.to(at::kDouble) - float64_result).abs().max() / float64_result.abs().max())
      .item<double>();
}

class Numerics : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
    torch::manual_seed(0);
  }
  void TearDown() override { compat::set_deterministic_numerics(true); }
  const at::TensorOptions f64 = at::TensorOptions().dtype(at::kDouble).device(at::kCUDA);
};

// float32 rounding over a few hundred products stays near 1e-6 of the result's scale; TF32
// would be near 1e-3.
TEST_F(Numerics, DeterministicFloat32ConvolutionIsNotTf32) {
  compat::set_deterministic_numerics(true);
  at::Tensor x = at::randn({8, 64, 32, 32}, f64);
  at::Tensor w = at::randn({64, 64, 3, 3}, f64);
  at::Tensor reference = at::conv2d(x, w, {}, 1, 1);
  double error = relative_error(at::conv2d(x.to(at::kFloat), w.to(at::kFloat), {}, 1, 1), reference);
  EXPECT_LT(error, 1e-5) << "float32 convolution error " << error << " (TF32 would be about 1e-3)";
}

// The same for matmul, and the check can see TF32: with TF32 allowed (the performance
// setting) the same product is far less precise.
TEST_F(Numerics, DeterministicFloat32MatmulIsNotTf32AndTheCheckSeesTf32) {
  at::Tensor a = at::randn({1024, 1024}, f64);
  at::Tensor b = at::randn({1024, 1024}, f64);
  at::Tensor reference = at::matmul(a, b);
  compat::set_deterministic_numerics(true);
  double strict = relative_error(at::matmul(a.to(at::kFloat), b.to(at::kFloat)), reference);
  EXPECT_LT(strict, 1e-5) << "float32 matmul error " << strict;
  compat::set_deterministic_numerics(false);
  EXPECT_FALSE(at::globalContext().benchmarkCuDNN())
      << "upstream's performance runs keep cuDNN's benchmark mode off";
  double relaxed = relative_error(at::matmul(a.to(at::kFloat), b.to(at::kFloat)), reference);
  EXPECT_GT(relaxed, 1e-4) << "with TF32 allowed the matmul error is " << relaxed
                           << "; if the GPU has no TF32 this expectation does not apply";
}

}  // namespace
}  // namespace zoobench
