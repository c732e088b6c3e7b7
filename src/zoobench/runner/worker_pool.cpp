// Worker threads and the child processes they run.
#include "zoobench/runner/worker_pool.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "zoobench/runner/child_device.h"
#include "zoobench/runner/child_process.h"
#include "zoobench/runner/child_rows.h"
#include "zoobench/runner/job_estimates.h"
#include "zoobench/runner/job_order.h"
#include "zoobench/runner/log_tidy.h"
#include "zoobench/util/cpu_affinity.h"
#include "zoobench/util/crash_report.h"
#include "zoobench/util/log.h"
#include "zoobench/util/pipeline_pause.h"
#include "zoobench/util/text.h"

namespace fs = std::filesystem;

namespace zoobench {
namespace {

std::string file_part(std::string text) {
  for (char& c : text) c = c == ':' ? '_' : c;
  return text;
}

}  // namespace

namespace {

// One job's child: started pinned to its device and CPUs, its rows (completed for what it did
// not report) with the cells only the parent knows.
std::vector<ResultRow> run_job_child(const JobPlan& job, const WorkerPoolSettings& settings,
                                     const std::string& device, const std::vector<int>& cpus,
                                     const std::string& stem, const std::atomic<bool>& interrupted,
                                     ChildOutcome& outcome) {
  const std::string gate = settings.device_gate ? settings.device_gate(device) : "";
  const std::string log_path = stem + ".log", row_path = stem + ".rows.json";
  fs::remove(row_path);
  const ChildDevice child = child_device_for(device, settings.cuda_visible_devices);
  // What the child is doing, for the run's progress (util/crash_report.h's phases).
  std::vector<std::string> environment = child.environment;
  environment.push_back(std::string(crash_report::kPhaseFileVariable) + "=" + stem + ".phase");
  if (child.pinned()) {
    std::ofstream(log_path, std::ios::app)
        << "zoobench: the worker for " << device << " runs this model with "
        << join(child.environment, " ") << ", as " << child.device << "\n";
  }
  if (!cpus.empty()) {
    std::ofstream(log_path, std::ios::app)
        << "zoobench: the worker for " << device << " runs this model on CPUs "
        << format_cpu_list(cpus) << "\n";
  }
  std::vector<std::string> argv = {current_executable()};
  auto args = child_arguments(job, child.device, row_path, log_path, gate);
  argv.insert(argv.end(), args.begin(), args.end());
  log::debug("{} ({}): {}", job.entry.name, job.backend, join(argv, " "));
  outcome = run_child(argv, log_path, settings.timeout_s, interrupted, environment, cpus);
  fs::remove(stem + ".phase");
  fs::remove(stem + pipeline_pause::kSuffix);
  // A child that died in its timed section did not continue the pipelines it paused.
  pipeline_pause::continue_pipelines(fs::path(stem).parent_path().string());
  auto rows = complete_rows(
      job, device, log_path,
      outcome.exited_late ? std::vector<ResultRow>{} : read_rows_file(row_path), outcome);
  fs::remove(row_path);
  collapse_repeated_lines_in_file(log_path);  // after the rows read their reasons from it
  for (auto& row : rows) {
    set_cell(row, columns::kDev, device);  // a pinned child knew its GPU only as cuda:0
    set_cell(row, columns::kLog, log_path);
    set_cell(row, columns::kJobS, format_cell(outcome.seconds));
  }
  return rows;
}

// The jobs no worker has taken yet, shared by the workers.
class JobQueue {
 public:
  JobQueue(std::deque<JobPlan> jobs, const WorkerPoolSettings& settings)
      : jobs_(std::move(jobs)), settings_(settings) {}

  // The next job for a worker on `device`; false when there is none it may start (the ones left
  // are memory_heavy while one runs there: that one's worker takes them; or the time budget
  // fits none of them).
  bool take(JobPlan& job, const std::string& device) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (jobs_.empty()) return false;
    std::function<bool(const JobPlan&)> fits = [](const JobPlan&) { return true; };
    if (settings_.deadline) {
      const double left =
          std::chrono::duration<double>(*settings_.deadline - std::chrono::steady_clock::now())
              .count();
      fits = [this, left](const JobPlan& candidate) {
        return left > 0 && (settings_.expected_s ? settings_.expected_s(candidate) : 0.0) <= left;
      };
      if (std::none_of(jobs_.begin(), jobs_.end(), fits)) {
        // time only runs out: none of them will fit later either
        not_started_.insert(not_started_.end(), jobs_.begin(), jobs_.end());
        jobs_.clear();
        return false;
      }
    }
    auto next = first_startable(jobs_, memory_heavy_running_[device] > 0, fits);
    if (next == jobs_.end()) return false;
    job = *next;
    jobs_.erase(next);
    if (job.memory_heavy) ++memory_heavy_running_[device];
    return true;
  }

  // `job`, taken for `device`, no longer runs there.
  void ended(const JobPlan& job, const std::string& device) {
    if (!job.memory_heavy) return;
    std::lock_guard<std::mutex> lock(mutex_);
    --memory_heavy_running_[device];
  }

  // The jobs the time budget left out.
  std::vector<JobPlan> not_started() const { return not_started_; }

 private:
  std::mutex mutex_;
  std::deque<JobPlan> jobs_;
  std::vector<JobPlan> not_started_;
  std::map<std::string, int> memory_heavy_running_;  // per device
  const WorkerPoolSettings& settings_;
};

// What a worker shares with the others.
struct WorkerShared {
  const WorkerPoolSettings& settings;
  Progress& progress;
  const std::atomic<bool>& interrupted;
  const DeliverRows& deliver;
  JobQueue& queue;
};

// One job on `device`: its export awaited, its child run, its rows delivered and its progress
// shown. False when the run was interrupted while it waited for its export.
bool work_on(const JobPlan& job, const std::string& device, const std::vector<int>& cpus,
             const WorkerShared& shared) {
  const WorkerPoolSettings& settings = shared.settings;
  const std::string& label = job.label;
  const std::string stem = fmt::format("{}/{}.{}.{}.{}", settings.logs_dir, job.entry.name,
                                       job.cells.mode, file_part(job.backend), file_part(device));
  shared.progress.started(label, device, stem + ".phase");
  std::vector<ResultRow> rows;
  ChildOutcome outcome;
  ModelSupply supply;
  if (settings.supply) {
    shared.progress.set_phase(label, device, "waiting for its export");
    supply = settings.supply->await(job.entry);
    if (shared.interrupted.load()) return false;
    if (!supply.ready) rows = export_failure_rows(job, device, supply);
  }
  if (rows.empty()) {
    shared.progress.set_phase(label, device, "starting");
    rows = run_job_child(job, settings, device, cpus, stem, shared.interrupted, outcome);
  }
  if (!supply.log.empty()) {
    for (auto& row : rows) set_cell(row, columns::kExportS, format_cell(supply.seconds));
  }
  if (outcome.kind == ChildOutcome::Kind::kInterrupted)
    record_cut_job(settings.logs_dir, job.entry.name, job.backend, outcome.seconds);
  shared.queue.ended(job, device);
  if (!shared.deliver(job, rows)) {
    shared.progress.set_aside(label, device, rows, outcome.seconds);
  } else if (outcome.kind != ChildOutcome::Kind::kInterrupted) {
    if (settings.supply) settings.supply->job_done(job.entry);
    shared.progress.finished(label, device, rows, outcome.seconds);
  }
  return true;
}

}  // namespace

std::vector<JobPlan> run_jobs(std::deque<JobPlan> jobs, const WorkerPoolSettings& settings,
                              Progress& progress, const std::atomic<bool>& interrupted,
                              const DeliverRows& deliver) {
  fs::create_directories(settings.logs_dir);
  JobQueue queue(std::move(jobs), settings);
  const WorkerShared shared{settings, progress, interrupted, deliver, queue};
  auto worker = [&](std::size_t worker_index) {
    const std::string& device = settings.devices[worker_index];
    const std::vector<int> cpus =
        settings.cpu_affinity.empty()
            ? std::vector<int>{}
            : worker_cpu_share(settings.cpu_affinity, worker_index, settings.devices.size());
    JobPlan job;
    while (!interrupted.load() && queue.take(job, device)) {
      if (!work_on(job, device, cpus, shared)) return;
    }
  };
  std::vector<std::thread> workers;
  for (std::size_t i = 0; i < settings.devices.size(); ++i) workers.emplace_back(worker, i);
  for (auto& t : workers) t.join();
  return queue.not_started();
}

}  // namespace zoobench
