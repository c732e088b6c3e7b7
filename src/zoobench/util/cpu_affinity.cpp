#include "zoobench/util/cpu_affinity.h"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <stdexcept>

#include "zoobench/util/errors.h"
#include "zoobench/util/text.h"

namespace zoobench {
namespace {

int parse_cpu(const std::string& text, const std::string& whole) {
  const bool digits = !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) {
    return std::isdigit(c) != 0;
  });
  if (!digits || text.size() > 6 || std::stoi(text) >= CPU_SETSIZE) {
    throw UsageError(fmt::format("--cpu-affinity {}: '{}' is not a CPU number (0 to {})", whole, text,
                                 CPU_SETSIZE - 1));
  }
  return std::stoi(text);
}

}  // namespace

std::vector<int> parse_cpu_list(const std::string& text) {
  std::vector<int> cpus;
  for (const std::string& raw : split(text, ',')) {
    const std::string part = trim(raw);
    const auto dash = part.find('-');
    if (dash == std::string::npos) {
      cpus.push_back(parse_cpu(part, text));
      continue;
    }
    const int first = parse_cpu(trim(part.substr(0, dash)), text);
    const int last = parse_cpu(trim(part.substr(dash + 1)), text);
    if (last < first) {
      throw UsageError(fmt::format("--cpu-affinity {}: the range {} runs backwards", text, part));
    }
    for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string format_cpu_list(const std::vector<int>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += j == i ? std::to_string(cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return out;
}

std::vector<int> current_cpu_affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

int first_thread_of_core(int cpu) {
  std::ifstream in(fmt::format("/sys/devices/system/cpu/cpu{}/topology/thread_siblings_list", cpu));
  std::string line;
  if (!std::getline(in, line)) return cpu;
  try {
    const std::vector<int> siblings = parse_cpu_list(line);
    return siblings.empty() ? cpu : siblings.front();
  } catch (const UsageError&) {
    return cpu;
  }
}

std::vector<int> cores_together(const std::vector<int>& cpus,
                                const std::function<int(int)>& core_of) {
  std::vector<std::pair<int, int>> keyed;  // (core, cpu)
  keyed.reserve(cpus.size());
  for (int cpu : cpus) keyed.emplace_back(core_of(cpu), cpu);
  std::sort(keyed.begin(), keyed.end());
  std::vector<int> out;
  out.reserve(keyed.size());
  for (const auto& [core, cpu] : keyed) out.push_back(cpu);
  return out;
}

std::vector<int> worker_cpu_share(const std::vector<int>& cpus, std::size_t worker, std::size_t workers) {
  if (workers == 0 || worker >= workers) throw std::invalid_argument("worker_cpu_share: no such worker");
  if (cpus.size() < workers) {
    throw UsageError(fmt::format("--cpu-affinity gives {} CPU(s) to {} workers: give each worker at least one",
                                 cpus.size(), workers));
  }
  const std::size_t base = cpus.size() / workers, larger = cpus.size() % workers;
  const std::size_t begin = worker * base + std::min(worker, larger);
  const std::size_t size = base + (worker < larger ? 1 : 0);
  return {cpus.begin() + begin, cpus.begin() + begin + size};
}

}  // namespace zoobench
