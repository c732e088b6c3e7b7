// Device (kernel) time of one iteration, from a separate profiled pass through LibTorch's
// Kineto profiler: the sum of the durations of the kernels, copies and memsets the GPU ran,
// divided by the iterations, and which kernels it went to. End-to-end time well above it
// means the side is launch-bound.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace zoobench {

// One kernel name's share of an iteration: its time and how often it ran, per iteration.
struct KernelShare {
  std::string name;
  double ms = 0;
  double calls = 0;
};

struct KernelTime {
  double total_ms = 0;
  // The names that took the most time first; past the listed number, one "(N other kernels)"
  // entry holds the rest, so the entries always add up to total_ms. Two sides' listings show
  // where a difference in kernel time goes (docs/formats.md).
  std::vector<KernelShare> kernels;
};

// What the profiler recorded of one device activity.
struct DeviceActivity {
  std::string name;
  int64_t duration_ns = 0;
};

constexpr std::size_t kListedKernels = 20;
KernelTime summarize_kernels(const std::vector<DeviceActivity>& activities, int iterations,
                             std::size_t listed = kListedKernels);

// nullopt on CPU, in builds without CUDA, or when the profiler recorded no device activity.
std::optional<KernelTime> measure_kernel_time(const std::function<void()>& iteration, int iterations,
                                              const c10::Device& device);

// True when end-to-end time exceeds kernel time by more than this factor (and 50 us): the
// GPU idles between launches, which graph capture would remove.
constexpr double kLaunchBoundRatio = 1.3;
bool is_launch_bound(double end_to_end_ms, std::optional<double> kernel_ms);

}  // namespace zoobench
