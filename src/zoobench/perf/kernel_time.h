// Device (kernel) time of one iteration, from a separate profiled pass through LibTorch's
// Kineto profiler: the sum of the durations of the kernels, copies and memsets the GPU ran,
// divided by the iterations. End-to-end time well above it means the side is launch-bound.
#pragma once

#include <c10/core/Device.h>

#include <functional>
#include <optional>

namespace zoobench {

// nullopt on CPU, in builds without CUDA, or when the profiler recorded no device activity.
std::optional<double> measure_kernel_time_ms(const std::function<void()>& iteration, int iterations,
                                             const c10::Device& device);

// True when end-to-end time exceeds kernel time by more than this factor (and 50 us): the
// GPU idles between launches, which graph capture would remove.
constexpr double kLaunchBoundRatio = 1.3;
bool is_launch_bound(double end_to_end_ms, std::optional<double> kernel_ms);

}  // namespace zoobench
