// zoobench::dropout_packed on CPU: the cases shared with CUDA (packed_dropout_cases.h: the mask
// format, keep rate, determinism, eval mode, edge probabilities, reduced precision and the four
// checks of the Ascend fix), plus what only the CPU suite checks: argument errors, the double
// backward, feature dropout and the error without the patch.
#include "zoobench/patches/packed_dropout.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/autograd.h>

#include <cmath>

#include "unit/patches/packed_dropout_cases.h"
#include "zoobench/patches/registry.h"

namespace zoobench::patches::packed_dropout_cases {
namespace {

INSTANTIATE_TEST_SUITE_P(Cpu, PackedDropoutCases, ::testing::Values(kCpu), case_name);

class PackedDropout : public ::testing::Test {
 protected:
  PatchScope scope_{{"packed_dropout"}};
};

TEST_F(PackedDropout, RejectsBadProbabilityAndMismatchedMask) {
  EXPECT_THROW(dropout_packed(at::randn({4}), 1.5, true), c10::Error);
  EXPECT_THROW(dropout_packed(at::randn({4}), -0.1, true), c10::Error);
  auto [y, mask] = dropout_packed(at::randn({20}), 0.5, true);
  EXPECT_THROW(dropout_packed_backward(at::randn({30}), mask, 0.5), c10::Error);
  EXPECT_THROW(dropout_packed_backward(at::randn({20}), mask.to(at::kInt), 0.5), c10::Error);
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
}  // namespace zoobench::patches::packed_dropout_cases
