#include "zoobench/runner/child_device.h"

#include <fmt/format.h>

#include <map>

#include "zoobench/util/errors.h"
#include "zoobench/util/text.h"

namespace zoobench {

std::string visible_gpu(const std::string& device, const char* cuda_visible_devices) {
  const int index = std::stoi(device.substr(device.find(':') + 1));  // parse_device checked it
  if (cuda_visible_devices == nullptr || *cuda_visible_devices == '\0')
    return std::to_string(index);
  std::vector<std::string> visible;
  for (const std::string& entry : split(cuda_visible_devices, ',')) visible.push_back(trim(entry));
  if (index >= static_cast<int>(visible.size())) {
    throw UsageError(fmt::format(
        "--devices names {}, but CUDA_VISIBLE_DEVICES={} makes {} GPU(s) visible (cuda:0 to "
        "cuda:{}); name a visible one or widen CUDA_VISIBLE_DEVICES",
        device, cuda_visible_devices, visible.size(), visible.size() - 1));
  }
  return visible[index];
}

ChildDevice child_device_for(const std::string& device, const char* cuda_visible_devices) {
  if (device.rfind("cuda:", 0) != 0) return {device, {}};
  return {"cuda:0", {"CUDA_VISIBLE_DEVICES=" + visible_gpu(device, cuda_visible_devices)}};
}

namespace {

// The device a --devices entry names, as one spelling ("cpu", "cuda:0"), after checking it
// exists here.
std::string existing_device(const std::string& device, const char* cuda_visible_devices,
                            int cuda_device_count) {
  const auto colon = device.find(':');
  const std::string type = device.substr(0, colon);
  const int index = colon == std::string::npos ? 0 : std::stoi(device.substr(colon + 1));
  if (type == "cpu") {
    if (index != 0) {
      throw UsageError(fmt::format(
          "--devices names {}, but torch has one CPU device (cpu); to run the models on "
          "particular CPUs, use --devices cpu --cpu-affinity {}",
          device, index));
    }
    return "cpu";
  }
  const bool listed = cuda_visible_devices != nullptr && *cuda_visible_devices != '\0';
  if (listed) {
    child_device_for(device, cuda_visible_devices);  // refuses an index beyond the list
  } else if (index >= cuda_device_count) {
    throw UsageError(
        cuda_device_count == 0
            ? fmt::format("--devices names {}, but no GPU is visible to this process", device)
            : fmt::format("--devices names {}, but this machine has {} GPU(s) (cuda:0 to "
                          "cuda:{}); name one of them",
                          device, cuda_device_count, cuda_device_count - 1));
  }
  return "cuda:" + std::to_string(index);
}

}  // namespace

void check_device_list(const std::vector<std::string>& devices, bool cpu_affinity_given,
                       const char* cuda_visible_devices, int cuda_device_count) {
  std::map<std::string, int> named;
  for (const auto& device : devices)
    ++named[existing_device(device, cuda_visible_devices, cuda_device_count)];
  for (const auto& [device, times] : named) {
    if (times < 2) continue;
    if (device == "cpu" && cpu_affinity_given) continue;
    throw UsageError(
        device == "cpu"
            ? fmt::format("--devices names the CPU {} times: its workers would share the CPUs, "
                          "and each one's timings would include the others' work. Give each "
                          "worker its own CPUs with --cpu-affinity LIST (split among them), or "
                          "run accuracy checks side by side with --accuracy-workers N",
                          times)
            : fmt::format("--devices names {} {} times: its workers would time each other's "
                          "kernels. Name each GPU once; to run accuracy checks side by side, use "
                          "--accuracy-workers N",
                          device, times));
  }
}

}  // namespace zoobench
