// Timing a region of work: a monotonic host clock on CPU; on CUDA, CUDA events around the
// region (device time) and the host clock with a synchronize (end-to-end time). Tests inject
// their own Timer to drive the measurement loop with chosen (noisy) times.
#pragma once

#include <c10/core/Device.h>

#include <functional>
#include <memory>
#include <optional>

namespace zoobench {

struct TimedSample {
  double end_to_end_ms = 0;             // per iteration
  std::optional<double> device_ms;      // per iteration, CUDA events
};

class Timer {
 public:
  virtual ~Timer() = default;
  // Runs `iteration` `count` times back to back and returns the time per iteration. All device
  // work queued by the iterations is finished when it returns.
  virtual TimedSample time(const std::function<void()>& iteration, int64_t count) = 0;
};

std::unique_ptr<Timer> make_timer(const c10::Device& device);

}  // namespace zoobench
