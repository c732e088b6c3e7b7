// The CPUs of a run's model processes.
#include "zoobench/runner/pipeline_cpus.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "zoobench/util/cpu_affinity.h"

namespace zoobench {

std::vector<int> PipelineCpus::worker_cpus(std::size_t worker, std::size_t workers) const {
  return split.empty() ? shared : worker_cpu_share(split, worker, workers);
}

std::vector<int> PipelineCpus::timing_cpus(const std::string& device) const {
  const auto found = timing.find(device);
  return found == timing.end() ? std::vector<int>{} : found->second;
}

namespace {

// The highest core of `left` (the CPU and those of its siblings still in `left`), taken out.
std::vector<int> take_top_core(std::vector<int>& left,
                               const std::function<std::vector<int>(int)>& siblings) {
  std::vector<int> core;
  for (int cpu : siblings(left.back())) {
    if (std::binary_search(left.begin(), left.end(), cpu)) core.push_back(cpu);
  }
  if (core.empty()) core.push_back(left.back());
  for (int cpu : core) left.erase(std::find(left.begin(), left.end(), cpu));
  return core;
}

// Each device's timing core taken from the top of `allowed`; nullopt when fewer than `workers`
// CPUs would be left to share.
std::optional<PipelineCpus> timing_cores(const std::vector<std::string>& devices,
                                         std::size_t workers, std::vector<int> left,
                                         const std::function<std::vector<int>(int)>& siblings) {
  PipelineCpus plan;
  for (const std::string& device : devices) {
    std::vector<int> cpus;
    while (cpus.size() < 2 && left.size() > workers) {
      std::vector<int> core = take_top_core(left, siblings);
      cpus.insert(cpus.end(), core.begin(), core.end());
    }
    if (cpus.empty() || left.size() < workers) return std::nullopt;
    std::sort(cpus.begin(), cpus.end());
    plan.timing[device] = cpus;
  }
  plan.shared = std::move(left);
  std::string timings;
  for (const auto& [device, cpus] : plan.timing)
    timings += fmt::format("{}{} on {}", timings.empty() ? "" : ", ", device, format_cpu_list(cpus));
  plan.why = fmt::format("the models' processes share CPUs {}; timings run alone on their device's "
                         "own CPUs ({})",
                         format_cpu_list(plan.shared), timings);
  return plan;
}

}  // namespace

PipelineCpus pipeline_cpus(const std::vector<int>& cpu_affinity,
                           const std::vector<std::string>& devices, bool gpu, std::size_t workers,
                           const std::vector<int>& allowed,
                           const std::function<std::vector<int>(int)>& siblings) {
  PipelineCpus plan;
  if (!cpu_affinity.empty()) {
    plan.split = cpu_affinity;
  } else if (workers <= 1 || allowed.size() < workers) {
    return plan;
  } else if (auto shared = gpu ? timing_cores(devices, workers, allowed, siblings) : std::nullopt) {
    return *shared;
  } else {
    plan.split = allowed;
  }
  plan.why = fmt::format("each model's process runs on its worker's share of CPUs {}",
                         format_cpu_list(plan.split));
  return plan;
}

}  // namespace zoobench
