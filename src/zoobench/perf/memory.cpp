// Peak memory readings.
#include "zoobench/perf/memory.h"

#include <fstream>
#include <string>

#include "zoobench/util/compat.h"

namespace zoobench {
namespace {

std::optional<int64_t> read_vm_hwm_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6)) * 1024;  // kB
  }
  return std::nullopt;
}

}  // namespace

PeakMemoryScope::PeakMemoryScope(const c10::Device& device) : device_(device) {
  if (device_.is_cuda()) {
    compat::cuda_synchronize(device_.index());
    compat::cuda_reset_peak_stats(device_.index());
    reset_ok_ = compat::kHasCuda;
  } else {
    // Writing 5 to clear_refs resets the peak RSS (Linux >= 4.0).
    std::ofstream clear("/proc/self/clear_refs");
    clear << "5";
    clear.flush();
    reset_ok_ = static_cast<bool>(clear);
  }
}

std::optional<int64_t> PeakMemoryScope::peak_bytes() const {
  if (!reset_ok_) return std::nullopt;
  if (device_.is_cuda()) {
    compat::cuda_synchronize(device_.index());
    return compat::cuda_peak_allocated_bytes(device_.index());
  }
  return read_vm_hwm_bytes();
}

}  // namespace zoobench
