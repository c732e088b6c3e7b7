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

}  // namespace

std::vector<JobPlan> run_jobs(std::deque<JobPlan> jobs, const WorkerPoolSettings& settings,
                              Progress& progress, const std::atomic<bool>& interrupted,
                              const DeliverRows& deliver) {
  fs::create_directories(settings.logs_dir);
  std::mutex queue_mutex;
  std::vector<JobPlan> not_started;  // by the time budget
  std::map<std::string, int> memory_heavy_running;  // per device, under queue_mutex
  // The next job for a worker on `device`, under queue_mutex; false when there is none it may
  // start (the ones left are memory_heavy while one runs there: that one's worker takes them).
  auto take = [&](JobPlan& job, const std::string& device) {
    if (jobs.empty()) return false;
    std::function<bool(const JobPlan&)> fits = [](const JobPlan&) { return true; };
    if (settings.deadline) {
      const double left =
          std::chrono::duration<double>(*settings.deadline - std::chrono::steady_clock::now())
              .count();
      fits = [&settings, left](const JobPlan& candidate) {
        return left > 0 && (settings.expected_s ? settings.expected_s(candidate) : 0.0) <= left;
      };
      if (std::none_of(jobs.begin(), jobs.end(), fits)) {
        // time only runs out: none of them will fit later either
        not_started.insert(not_started.end(), jobs.begin(), jobs.end());
        jobs.clear();
        return false;
      }
    }
    auto next = first_startable(jobs, memory_heavy_running[device] > 0, fits);
    if (next == jobs.end()) return false;
    job = *next;
    jobs.erase(next);
    if (job.memory_heavy) ++memory_heavy_running[device];
    return true;
  };
  auto worker = [&](std::size_t worker_index) {
    const std::string& device = settings.devices[worker_index];
    const std::vector<int> cpus =
        settings.cpu_affinity.empty()
            ? std::vector<int>{}
            : worker_cpu_share(settings.cpu_affinity, worker_index, settings.devices.size());
    while (!interrupted.load()) {
      JobPlan job;
      {
        std::lock_guard<std::mutex> lock(queue_mutex);
        if (!take(job, device)) return;
      }
      const std::string& label = job.label;
      const std::string stem =
          fmt::format("{}/{}.{}.{}.{}", settings.logs_dir, job.entry.name, job.cells.mode,
                      file_part(job.backend), file_part(device));
      progress.started(label, device, stem + ".phase");
      std::vector<ResultRow> rows;
      ChildOutcome outcome;
      ModelSupply supply;
      if (settings.supply) {
        progress.set_phase(label, device, "waiting for its export");
        supply = settings.supply->await(job.entry);
        if (interrupted.load()) return;
        if (!supply.ready) rows = export_failure_rows(job, device, supply);
      }
      if (rows.empty()) {
        progress.set_phase(label, device, "starting");
        rows = run_job_child(job, settings, device, cpus, stem, interrupted, outcome);
      }
      if (!supply.log.empty()) {
        for (auto& row : rows) set_cell(row, columns::kExportS, format_cell(supply.seconds));
      }
      if (outcome.kind == ChildOutcome::Kind::kInterrupted)
        record_cut_job(settings.logs_dir, job.entry.name, job.backend, outcome.seconds);
      if (job.memory_heavy) {
        std::lock_guard<std::mutex> lock(queue_mutex);
        --memory_heavy_running[device];
      }
      const bool kept = deliver(job, rows);
      if (!kept) {
        progress.set_aside(label, device, rows, outcome.seconds);
      } else if (outcome.kind != ChildOutcome::Kind::kInterrupted) {
        if (settings.supply) settings.supply->job_done(job.entry);
        progress.finished(label, device, rows, outcome.seconds);
      }
    }
  };
  std::vector<std::thread> workers;
  for (std::size_t i = 0; i < settings.devices.size(); ++i) workers.emplace_back(worker, i);
  for (auto& t : workers) t.join();
  return not_started;
}

}  // namespace zoobench
