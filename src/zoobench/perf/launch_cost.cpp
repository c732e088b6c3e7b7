// The host's cost of a small op on a device (launch_cost.h).
#include "zoobench/perf/launch_cost.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "zoobench/util/compat.h"

namespace zoobench {

double op_launch_cost_us(const c10::Device& device, int ops) {
  at::NoGradGuard no_grad;
  at::Tensor x = at::zeros({1}, at::TensorOptions().device(device).dtype(at::kFloat));
  auto sync = [&] {
    if (device.is_cuda()) compat::cuda_synchronize(device.index());
  };
  for (int i = 0; i < 20; ++i) x.add_(1);  // the op's first calls (its kernel loaded) aside
  sync();
  std::vector<double> batches;
  for (int batch = 0; batch < 5; ++batch) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < ops; ++i) x.add_(1);
    sync();
    const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
    batches.push_back(took.count() / ops);
  }
  std::nth_element(batches.begin(), batches.begin() + 2, batches.end());
  return batches[2];
}

}  // namespace zoobench
