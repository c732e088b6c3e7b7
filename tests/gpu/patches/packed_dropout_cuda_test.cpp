// zoobench::dropout_packed on CUDA: the cases shared with the CPU (tests/unit/patches/
// packed_dropout_cases.h: the mask format and keep rate, determinism under the CUDA seed,
// packing in logical order, the four checks of the Ascend fix, reduced precision, eval mode and
// the edge probabilities) at CUDA's sizes, plus CUDA graph capture (replays draw fresh masks
// and match eager under the same seed).
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

}  // namespace
}  // namespace zoobench::patches::packed_dropout_cases
