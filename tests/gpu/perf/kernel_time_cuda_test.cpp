// The kernel listing from the real Kineto profiler on CUDA: an iteration of known launches
// (one fill, two element-wise adds of another shape, one matrix product) is listed with those
// calls per iteration, and the listing adds up to the kernel time. A user scope around the
// iteration (Python's optimizer step has one) is a GPU annotation, not a kernel: not counted.
#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <ATen/record_function.h>
#include <torch/torch.h>

#include <string>

#include "zoobench/perf/kernel_time.h"

namespace zoobench {
namespace {

TEST(KernelListingOnCuda, ListsTheLaunchesOfAnIteration) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const auto on_cuda = at::TensorOptions().device(at::kCUDA);
  at::Tensor a = at::randn({512, 512}, on_cuda), b = at::randn({512, 512}, on_cuda);
  at::Tensor big = at::zeros({1 << 22}, on_cuda);
  auto iteration = [&] {
    RECORD_USER_SCOPE("zoobench_test_step");
    big.fill_(1.0);
    big.add_(1.0);
    big.add_(2.0);
    at::Tensor c = at::mm(a, b);
  };
  iteration();  // cuBLAS initialisation outside the profiled pass
  auto t = measure_kernel_time(iteration, 4, c10::Device(at::kCUDA, 0));
  ASSERT_TRUE(t.has_value());
  double sum = 0, calls = 0;
  for (const auto& k : t->kernels) {
    sum += k.ms;
    calls += k.calls;
    EXPECT_GT(k.ms, 0) << k.name;
    EXPECT_EQ(k.name.find("zoobench_test_step"), std::string::npos) << "an annotation counted as a kernel";
  }
  EXPECT_NEAR(sum, t->total_ms, 1e-9);
  // fill, add, add, and the product (one GEMM kernel, perhaps with a split-K reduction).
  EXPECT_GE(calls, 4.0);
  EXPECT_LE(calls, 6.0);
  bool has_add = false;
  for (const auto& k : t->kernels) {
    // Both adds are the same kernel (a tensor-scalar add): one name, called twice an iteration.
    if (k.calls == 2.0 && k.name.find("elementwise") != std::string::npos) has_add = true;
  }
  EXPECT_TRUE(has_add) << "no element-wise kernel called twice per iteration";
}

}  // namespace
}  // namespace zoobench
