// Kineto-based kernel time (CUDA builds only).
#include "zoobench/perf/kernel_time.h"

#include <algorithm>
#include <map>

#include "zoobench/util/compat.h"

#if ZOOBENCH_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#endif

namespace zoobench {
namespace {

// The device activities that are GPU work, by libkineto::ActivityType's values: its header is
// not on the include path of PyTorch's wheels, so a test of `__has_include(<ActivityType.h>)`
// left every device event counted there, GPU user annotations too (the Python optimizer's
// "Optimizer.step#SGD.step" span, 0.1-0.35 ms a step counted twice, measured 2026-12-02).
// The enum's first values have been these since 2021 (PyTorch 1.9); a test on CUDA checks it.
constexpr uint8_t kGpuMemcpy = 3, kGpuMemset = 4, kConcurrentKernel = 5;

}  // namespace

bool is_launch_bound(double end_to_end_ms, std::optional<double> kernel_ms) {
  if (!kernel_ms) return false;
  return end_to_end_ms > *kernel_ms * kLaunchBoundRatio && end_to_end_ms - *kernel_ms > 0.05;
}

KernelTime summarize_kernels(const std::vector<DeviceActivity>& activities, int iterations,
                             std::size_t listed) {
  KernelTime out;
  if (iterations <= 0) return out;
  std::map<std::string, KernelShare> by_name;
  double total_ns = 0;
  for (const auto& activity : activities) {
    KernelShare& share = by_name[activity.name];
    share.name = activity.name;
    share.ms += static_cast<double>(activity.duration_ns);
    share.calls += 1;
    total_ns += static_cast<double>(activity.duration_ns);
  }
  for (auto& [name, share] : by_name) {
    share.ms = share.ms / 1e6 / iterations;
    share.calls /= iterations;
    out.kernels.push_back(share);
  }
  // Largest first; equal times by name, so a listing does not depend on the map's order.
  std::sort(out.kernels.begin(), out.kernels.end(), [](const KernelShare& a, const KernelShare& b) {
    return a.ms != b.ms ? a.ms > b.ms : a.name < b.name;
  });
  if (out.kernels.size() > listed + 1) {
    KernelShare rest;
    const std::size_t others = out.kernels.size() - listed;
    rest.name = "(" + std::to_string(others) + " other kernels)";
    for (std::size_t i = listed; i < out.kernels.size(); ++i) {
      rest.ms += out.kernels[i].ms;
      rest.calls += out.kernels[i].calls;
    }
    out.kernels.resize(listed);
    out.kernels.push_back(rest);
  }
  out.total_ms = total_ns / 1e6 / iterations;
  return out;
}

std::optional<KernelTime> measure_kernel_time(const std::function<void()>& iteration, int iterations,
                                              const c10::Device& device) {
#if ZOOBENCH_WITH_CUDA
  if (!device.is_cuda() || iterations <= 0) return std::nullopt;
  namespace profiler = torch::autograd::profiler;
  using torch::profiler::impl::ActivityType;
  profiler::ProfilerConfig config(profiler::ProfilerState::KINETO, false, false, false, false, false);
  const std::set<ActivityType> activities{ActivityType::CPU, ActivityType::CUDA};
  c10::cuda::device_synchronize();
  profiler::prepareProfiler(config, activities);
  profiler::enableProfiler(config, activities);
  for (int i = 0; i < iterations; ++i) iteration();
  c10::cuda::device_synchronize();
  auto result = profiler::disableProfiler();
  std::vector<DeviceActivity> device_activities;
  for (const auto& event : result->events()) {
    if (event.deviceType() != c10::DeviceType::CUDA) continue;
    // GPU user annotations span other device events; counting them would double the time.
    const uint8_t type = event.activityType();
    if (type != kConcurrentKernel && type != kGpuMemcpy && type != kGpuMemset) continue;
    device_activities.push_back({event.name(), static_cast<int64_t>(event.durationNs())});
  }
  if (device_activities.empty()) return std::nullopt;
  return summarize_kernels(device_activities, iterations);
#else
  (void)iteration;
  (void)iterations;
  (void)device;
  return std::nullopt;
#endif
}

}  // namespace zoobench
