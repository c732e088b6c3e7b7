#include "zoobench/runner/child_device.h"

#include <fmt/format.h>

#include "zoobench/util/errors.h"
#include "zoobench/util/text.h"

namespace zoobench {

ChildDevice child_device_for(const std::string& device, const char* cuda_visible_devices) {
  const std::string prefix = "cuda:";
  if (device.rfind(prefix, 0) != 0) return {device, {}};
  const int index = std::stoi(device.substr(prefix.size()));  // parse_device checked the form
  std::string gpu = std::to_string(index);
  if (cuda_visible_devices != nullptr && *cuda_visible_devices != '\0') {
    std::vector<std::string> visible;
    for (const std::string& entry : split(cuda_visible_devices, ','))
      visible.push_back(trim(entry));
    if (index >= static_cast<int>(visible.size())) {
      throw UsageError(fmt::format(
          "--devices names {}, but CUDA_VISIBLE_DEVICES={} makes {} GPU(s) visible (cuda:0 to "
          "cuda:{}); name a visible one or widen CUDA_VISIBLE_DEVICES",
          device, cuda_visible_devices, visible.size(), visible.size() - 1));
    }
    gpu = visible[index];
  }
  return {"cuda:0", {"CUDA_VISIBLE_DEVICES=" + gpu}};
}

}  // namespace zoobench
