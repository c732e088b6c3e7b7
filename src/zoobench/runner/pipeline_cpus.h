// The CPUs of a run's model processes: where each pipeline's process runs, and where its timed
// sections run.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace zoobench {

// Where the models' processes run. Either each worker's process has its own consecutive share
// of `split`, or every worker's process runs on all of `shared` and moves to its device's
// `timing` CPUs for a timed section (util/device_gate.h's process_timing_cpus), which no
// process of the run uses otherwise: Inductor compiles with every CPU its process may use, so
// CPUs shared let one model's parallel kernel compiles take what another's single-threaded
// tracing leaves, while a timing still has CPUs of its own (a timed section holds its device
// alone: one at a time per device). Neither: the processes are not pinned.
struct PipelineCpus {
  std::vector<int> split;
  std::vector<int> shared;
  std::map<std::string, std::vector<int>> timing;  // per device of the run
  std::string why;  // one line for the run's start ("" when not pinned)

  // The CPUs of worker `worker` of `workers` (empty: not pinned) and those of its timings.
  std::vector<int> worker_cpus(std::size_t worker, std::size_t workers) const;
  std::vector<int> timing_cpus(const std::string& device) const;
};

// --cpu-affinity as given is split among the workers. Else, with several workers on GPUs: each
// device (`devices`, each named once) gets one core of `allowed` for its timings (the highest
// CPUs, a core with its hyperthread siblings by `siblings`; two when a core is one CPU) and the
// rest is shared, if at least one CPU per worker remains; on the CPU, or with fewer CPUs left,
// `allowed` is split as --cpu-affinity would be; with one worker, or fewer CPUs than workers,
// nothing is pinned.
PipelineCpus pipeline_cpus(const std::vector<int>& cpu_affinity,
                           const std::vector<std::string>& devices, bool gpu, std::size_t workers,
                           const std::vector<int>& allowed,
                           const std::function<std::vector<int>(int)>& siblings);

}  // namespace zoobench
