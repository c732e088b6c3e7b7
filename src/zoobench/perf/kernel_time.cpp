// Kineto-based kernel time (CUDA builds only).
#include "zoobench/perf/kernel_time.h"

#include "zoobench/util/compat.h"

#if ZOOBENCH_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#if __has_include(<ActivityType.h>)
#include <ActivityType.h>
#define ZOOBENCH_HAVE_KINETO_ACTIVITY_TYPE 1
#endif
#endif

namespace zoobench {

bool is_launch_bound(double end_to_end_ms, std::optional<double> kernel_ms) {
  if (!kernel_ms) return false;
  return end_to_end_ms > *kernel_ms * kLaunchBoundRatio && end_to_end_ms - *kernel_ms > 0.05;
}

std::optional<double> measure_kernel_time_ms(const std::function<void()>& iteration, int iterations,
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
  double total_ns = 0;
  bool any = false;
  for (const auto& event : result->events()) {
    if (event.deviceType() != c10::DeviceType::CUDA) continue;
#ifdef ZOOBENCH_HAVE_KINETO_ACTIVITY_TYPE
    // GPU user annotations span other device events; counting them would double the time.
    auto type = static_cast<libkineto::ActivityType>(event.activityType());
    if (type != libkineto::ActivityType::CONCURRENT_KERNEL && type != libkineto::ActivityType::GPU_MEMCPY &&
        type != libkineto::ActivityType::GPU_MEMSET) {
      continue;
    }
#endif
    total_ns += static_cast<double>(event.durationNs());
    any = true;
  }
  if (!any) return std::nullopt;
  return total_ns / 1e6 / iterations;
#else
  (void)iteration;
  (void)iterations;
  (void)device;
  return std::nullopt;
#endif
}

}  // namespace zoobench
