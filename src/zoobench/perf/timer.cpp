// Host-clock and CUDA-event timers.
#include "zoobench/perf/timer.h"

#include <chrono>

#include "zoobench/util/compat.h"

#if ZOOBENCH_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace zoobench {
namespace {

using Clock = std::chrono::steady_clock;

double elapsed_ms(Clock::time_point start, Clock::time_point end) {
  return std::chrono::duration<double, std::milli>(end - start).count();
}

class HostTimer : public Timer {
 public:
  TimedSample time(const std::function<void()>& iteration, int64_t count) override {
    auto start = Clock::now();
    for (int64_t i = 0; i < count; ++i) iteration();
    auto end = Clock::now();
    return {elapsed_ms(start, end) / static_cast<double>(count), std::nullopt};
  }
};

#if ZOOBENCH_WITH_CUDA
class CudaTimer : public Timer {
 public:
  explicit CudaTimer(c10::Device device) : device_(device) {}

  TimedSample time(const std::function<void()>& iteration, int64_t count) override {
    c10::cuda::CUDAGuard guard(device_);
    auto stream = c10::cuda::getCurrentCUDAStream(device_.index());
    at::cuda::CUDAEvent begin(cudaEventDefault), end(cudaEventDefault);
    // Start from an idle device so the sample holds only this region's work.
    stream.synchronize();
    auto host_start = Clock::now();
    begin.record(stream);
    for (int64_t i = 0; i < count; ++i) iteration();
    end.record(stream);
    end.synchronize();
    auto host_end = Clock::now();
    double device_ms = static_cast<double>(begin.elapsed_time(end));
    return {elapsed_ms(host_start, host_end) / static_cast<double>(count),
            device_ms / static_cast<double>(count)};
  }

 private:
  c10::Device device_;
};
#endif

}  // namespace

std::unique_ptr<Timer> make_timer(const c10::Device& device) {
#if ZOOBENCH_WITH_CUDA
  if (device.is_cuda()) return std::make_unique<CudaTimer>(device);
#endif
  (void)device;
  return std::make_unique<HostTimer>();
}

}  // namespace zoobench
