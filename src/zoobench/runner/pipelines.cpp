// The number of model pipelines and their CPUs.
#include "zoobench/runner/pipelines.h"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>

#include "zoobench/results/rows.h"
#include "zoobench/runner/child_rows.h"
#include "zoobench/util/cpu_affinity.h"

namespace zoobench {
namespace {

constexpr std::size_t kCpusPerPipeline = 4;
constexpr double kGpuBytesPerPipeline = 16.0 * (1LL << 30);
constexpr std::size_t kMostPipelines = 8;

std::vector<ResultRow> checks_only(const std::vector<ResultRow>& rows) {
  std::vector<ResultRow> checks;
  for (const auto& row : rows)
    if (row.kind == ExperimentKind::kAccuracy) checks.push_back(row);
  return checks;
}

JobPlan timing_only(JobPlan job) {
  job.accuracy = false;
  return job;
}

}  // namespace

PipelineCount default_pipeline_count(const std::string& device_type, std::size_t devices,
                                     std::size_t cpus, int64_t gpu_bytes) {
  if (device_type != "cuda" || gpu_bytes <= 0) {
    return {1,
            "1 model at a time (a timing on the CPU shares its caches and memory with "
            "whatever runs beside it; --jobs N to choose)"};
  }
  const std::size_t cpus_each = cpus / std::max<std::size_t>(devices, 1);
  const auto by_memory =
      static_cast<std::size_t>(static_cast<double>(gpu_bytes) / kGpuBytesPerPipeline);
  const std::size_t count =
      std::clamp<std::size_t>(std::min(cpus_each / kCpusPerPipeline, by_memory), 1, kMostPipelines);
  return {
      count,
      fmt::format("{} model pipeline(s) per GPU, from {} CPU(s) per GPU (one per {}) "
                  "and {:.0f} GiB of GPU memory (one per {:.0f} GiB); --jobs N to choose",
                  count, cpus_each, kCpusPerPipeline, static_cast<double>(gpu_bytes) / (1LL << 30),
                  kGpuBytesPerPipeline / (1LL << 30))};
}

PipelineCount pipeline_count(int jobs, const std::string& device_type, std::size_t devices,
                             std::size_t cpus, int64_t gpu_bytes) {
  if (jobs <= 0) return default_pipeline_count(device_type, devices, cpus, gpu_bytes);
  return {static_cast<std::size_t>(jobs),
          fmt::format("{} model pipeline(s) per device (--jobs)", jobs)};
}

std::vector<int> pipeline_cpus(const std::vector<int>& cpu_affinity, std::size_t workers,
                               const std::vector<int>& allowed) {
  if (!cpu_affinity.empty()) return cpu_affinity;
  if (workers <= 1 || allowed.size() < workers) return {};
  return cores_together(allowed);
}

std::vector<RunPhase> plan_phases(std::deque<JobPlan> jobs, std::size_t pipelines,
                                  std::size_t check_workers) {
  if (check_workers == 0) return {RunPhase{std::move(jobs), pipelines}};
  RunPhase checks{{}, std::max(check_workers, pipelines)}, timings{{}, pipelines};
  for (const JobPlan& job : jobs) {
    if (job.accuracy) {
      checks.jobs.push_back(job);
      checks.jobs.back().performance = false;
    }
    if (job.performance) {
      timings.jobs.push_back(job);
      timings.jobs.back().accuracy = false;
    }
  }
  return {std::move(checks), std::move(timings)};
}

std::vector<JobPlan> run_phases(
    std::vector<RunPhase> phases, const std::vector<std::string>& devices,
    WorkerPoolSettings settings, Progress& progress, const std::atomic<bool>& interrupted,
    const std::function<void(const JobPlan&, const std::vector<ResultRow>&)>& write) {
  std::vector<JobPlan> not_started;
  for (std::size_t p = 0; p < phases.size(); ++p) {
    RunPhase& phase = phases[p];
    if (interrupted.load() || phase.jobs.empty()) continue;
    settings.devices.clear();
    for (const auto& device : devices)
      settings.devices.insert(settings.devices.end(), phase.workers_per_device, device);
    const bool shared = phase.workers_per_device > 1;
    std::mutex again_mutex;
    std::deque<JobPlan> again;  // to run again alone
    auto deliver = [&](const JobPlan& job, std::vector<ResultRow> rows) {
      if (shared && std::any_of(rows.begin(), rows.end(), ran_out_of_memory)) {
        std::lock_guard<std::mutex> lock(again_mutex);
        again.push_back(job);
        return false;
      }
      if (!shared) note_memory_of_other_processes(rows);
      if (ended_before_timing(job, rows)) {
        // The check's rows stand; the timing is set aside as a job of its own (the model stays
        // in the run's hands until it is done).
        write(job, checks_only(rows));
        std::lock_guard<std::mutex> lock(again_mutex);
        again.push_back(timing_only(job));
        return false;
      }
      write(job, rows);
      return true;
    };
    std::vector<JobPlan> left =
        run_jobs(std::move(phase.jobs), settings, progress, interrupted, deliver);
    not_started.insert(not_started.end(), left.begin(), left.end());
    if (again.empty()) continue;
    if (p + 1 == phases.size() || phases[p + 1].workers_per_device != 1)
      phases.insert(phases.begin() + static_cast<std::ptrdiff_t>(p + 1), RunPhase{{}, 1});
    std::deque<JobPlan>& next = phases[p + 1].jobs;
    next.insert(next.begin(), again.begin(), again.end());
  }
  return not_started;
}

}  // namespace zoobench
