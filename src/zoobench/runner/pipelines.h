// How many model pipelines a run keeps going at once on each of its devices (--jobs), and on
// which CPUs each runs. A pipeline takes a model through its export, load, compile, checks and
// timing in a process of its own; pipelines overlap everything but their timed sections, which
// have the device alone (util/device_gate.h), and each runs on CPUs no other pipeline uses, so
// a timing's process is not crowded by another model's compile.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "zoobench/runner/progress.h"
#include "zoobench/runner/worker_pool.h"

namespace zoobench {

struct PipelineCount {
  std::size_t per_device = 1;
  std::string why;  // one line for the run's start
};

// What the machine allows when --jobs does not say. On a GPU: a pipeline per 4 CPUs of the
// device's share and per 16 GiB of its memory (Inductor compiles with the CPUs of its process;
// the largest list models take tens of GB while they run), at least 1 and at most 8. On the CPU
// one: a timing there shares the processor's caches and memory with whatever runs beside it.
// `gpu_bytes` is the device's memory (0 on the CPU); `cpus` the CPUs the run may use.
PipelineCount default_pipeline_count(const std::string& device_type, std::size_t devices,
                                     std::size_t cpus, int64_t gpu_bytes);

// --jobs N as given, or the default, with the line that says so.
PipelineCount pipeline_count(int jobs, const std::string& device_type, std::size_t devices,
                             std::size_t cpus, int64_t gpu_bytes);

// The CPUs the workers split among themselves: --cpu-affinity as given; else, with several
// workers, every CPU this process may use, the hardware threads of a core next to each other
// (each worker's process then runs on its own share, of whole cores where the shares allow),
// unless there are fewer CPUs than workers; else none (not pinned).
std::vector<int> pipeline_cpus(const std::vector<int>& cpu_affinity, std::size_t workers,
                               const std::vector<int>& allowed);

// A run's jobs in phases, each with its workers per device. One phase normally: every model's
// checks and timing in one job, `pipelines` at a time per device. With --accuracy-workers N
// (check_workers > 0) every check first, max(N, pipelines) at a time per device, then the
// timings.
struct RunPhase {
  std::deque<JobPlan> jobs;
  std::size_t workers_per_device = 1;
};
std::vector<RunPhase> plan_phases(std::deque<JobPlan> jobs, std::size_t pipelines,
                                  std::size_t check_workers);

// Runs the phases on `devices` (a device's workers side by side, so that its CPU share stays
// consecutive), with `settings` for everything else, until they are done or the run is
// interrupted; `write` gets each finished job's rows. A job that ran out of memory beside other
// jobs on its device (a GPU's memory is not split among them) may have been short of their
// memory, not its own: its rows are set aside and it runs again alone, first in the next phase
// that has each device to itself; what it reports then stands. A job whose process ended during
// the check it runs before its timing (child_rows.h, ended_before_timing) keeps its check's rows
// and its timing runs likewise as a job of its own. Returns the jobs the time budget left
// unstarted.
std::vector<JobPlan> run_phases(
    std::vector<RunPhase> phases, const std::vector<std::string>& devices,
    WorkerPoolSettings settings, Progress& progress, const std::atomic<bool>& interrupted,
    const std::function<void(const JobPlan&, const std::vector<ResultRow>&)>& write);

}  // namespace zoobench
