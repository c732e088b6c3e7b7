// The workers of a suite run: one thread per device of the run, each taking the next job from
// a shared queue and running it as a child process (`zoobench run --only NAME ...`) pinned to
// its GPU (CUDA_VISIBLE_DEVICES) and its share of --cpu-affinity, with its own log file, until
// the queue is empty or the run is interrupted. Each finished job's rows (the child's, plus
// rows for what it did not report) go to `deliver` as soon as the child ends.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "zoobench/results/rows.h"
#include "zoobench/runner/job_plan.h"
#include "zoobench/runner/progress.h"
#include "zoobench/runner/zoo_supply.h"
#include "zoobench/zoo/catalog.h"
#include "zoobench/zoo/suite_config.h"

namespace zoobench {

struct WorkerPoolSettings {
  std::vector<std::string> devices;  // one worker each (a device listed N times has N)
  std::vector<int> cpu_affinity;     // split among the workers; empty: not pinned
  std::string logs_dir;
  double timeout_s = 0;
  const char* cuda_visible_devices = nullptr;  // the parent's CUDA_VISIBLE_DEVICES
  // --time-budget: a job starts only while the seconds it is expected to take (expected_s; 0:
  // unknown) end before `deadline`. A worker takes the first job in the queue that fits, so at
  // the budget's end a short job may go before a long one that no longer fits.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  std::function<double(const JobPlan&)> expected_s;
  // Export on demand (null: the zoo has every model): a job's child starts once its model's
  // export is settled; a model that could not be exported gets rows that say why instead.
  ZooSupply* supply = nullptr;
  // The gate of a device (util/device_gate.h) its children hold: the path of its files (null:
  // none).
  std::function<std::string(const std::string& device)> device_gate;
};

// Runs every job (or until `interrupted`); blocks until the workers are done. Returns the jobs
// the time budget left unstarted (settings.deadline), in queue order. `deliver` is
// called from the worker threads, one call per finished job (the job, its rows), never for an
// interrupted one. It returns false when it sets the rows aside because the job will run again
// (its progress line then says so and does not count it as done).
using DeliverRows = std::function<bool(const JobPlan&, const std::vector<ResultRow>&)>;
std::vector<JobPlan> run_jobs(std::deque<JobPlan> jobs, const WorkerPoolSettings& settings,
                              Progress& progress, const std::atomic<bool>& interrupted,
                              const DeliverRows& deliver);

}  // namespace zoobench
