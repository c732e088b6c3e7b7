// Peak memory of a region: device memory from the CUDA caching allocator (reset before the
// region), or on CPU the process's peak resident set (VmHWM, reset through clear_refs).
#pragma once

#include <c10/core/Device.h>

#include <optional>

namespace zoobench {

class PeakMemoryScope {
 public:
  explicit PeakMemoryScope(const c10::Device& device);  // resets the peak
  // Peak bytes since construction; nullopt when the platform cannot tell.
  std::optional<int64_t> peak_bytes() const;

 private:
  c10::Device device_;
  bool reset_ok_ = false;
};

}  // namespace zoobench
