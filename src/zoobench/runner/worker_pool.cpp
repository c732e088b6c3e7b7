// Worker threads and the child processes they run.
#include "zoobench/runner/worker_pool.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "zoobench/runner/child_device.h"
#include "zoobench/runner/child_process.h"
#include "zoobench/runner/child_rows.h"
#include "zoobench/runner/job_estimates.h"
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

std::vector<std::string> child_arguments(const RunOptions& o, const std::string& suite,
                                         const std::string& model, const std::string& device,
                                         const std::string& row_out, const std::string& log_file) {
  // The parent exported what the child needs (--no-export): the child only reads the zoo; or
  // the child exports its model's recipe itself (--export-here).
  std::vector<std::string> a = {"run",       "--suite",   suite,       "--only",     model,
                                "--devices", device,      "--backend", o.backend,    "--timeout",
                                "0",         "--row-out", row_out,     "--log-file", log_file,
                                "--zoo",     o.zoo_dir};
  if (o.export_here.empty()) {
    a.push_back("--no-export");
  } else {
    a.insert(a.end(), {"--export-here", o.export_here});
    if (!o.torchbench_dir.empty()) a.insert(a.end(), {"--torchbench-dir", o.torchbench_dir});
  }
  if (!o.device_gate.empty()) a.insert(a.end(), {"--device-gate", o.device_gate});
  // The run's reference, which the child cannot tell from its one backend.
  a.insert(a.end(), {"--eager-reference", eager_reference(o)});
  if (o.accuracy) a.push_back("--accuracy");
  if (o.performance) a.push_back("--performance");
  a.insert(a.end(), o.child_flags.begin(), o.child_flags.end());
  return a;
}

namespace {

// One job's child: started pinned to its device and CPUs, its rows (completed for what it did
// not report) with the cells only the parent knows.
std::vector<ResultRow> run_job_child(const ChildJob& job, const WorkerPoolSettings& settings,
                                     const SuiteConfig& config, const std::string& device,
                                     const std::vector<int>& cpus, const std::string& stem,
                                     const std::atomic<bool>& interrupted, ChildOutcome& outcome) {
  RunOptions options = job.options;
  if (settings.device_gate) options.device_gate = settings.device_gate(device);
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
  auto args =
      child_arguments(options, job.entry.suite, job.entry.name, child.device, row_path, log_path);
  argv.insert(argv.end(), args.begin(), args.end());
  log::debug("{} ({}): {}", job.entry.name, options.backend, join(argv, " "));
  outcome = run_child(argv, log_path, settings.timeout_s, interrupted, environment, cpus);
  fs::remove(stem + ".phase");
  auto rows = complete_rows(
      options, job.entry, config, device, log_path,
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

std::vector<ChildJob> run_jobs(std::deque<ChildJob> jobs, const WorkerPoolSettings& settings,
                               const std::map<std::string, SuiteConfig>& configs,
                               Progress& progress, const std::atomic<bool>& interrupted,
                               const DeliverRows& deliver) {
  fs::create_directories(settings.logs_dir);
  std::mutex queue_mutex;
  std::vector<ChildJob> not_started;  // by the time budget
  // The next job for a worker, under queue_mutex; false when there is none to start.
  auto take = [&](ChildJob& job) {
    if (jobs.empty()) return false;
    auto next = jobs.begin();
    if (settings.deadline) {
      const double left =
          std::chrono::duration<double>(*settings.deadline - std::chrono::steady_clock::now())
              .count();
      next = std::find_if(jobs.begin(), jobs.end(), [&](const ChildJob& candidate) {
        return left > 0 && (settings.expected_s ? settings.expected_s(candidate) : 0.0) <= left;
      });
      if (next == jobs.end()) {  // time only runs out: none of them will fit later either
        not_started.insert(not_started.end(), jobs.begin(), jobs.end());
        jobs.clear();
        return false;
      }
    }
    job = *next;
    jobs.erase(next);
    return true;
  };
  auto worker = [&](std::size_t worker_index) {
    const std::string& device = settings.devices[worker_index];
    const std::vector<int> cpus =
        settings.cpu_affinity.empty()
            ? std::vector<int>{}
            : worker_cpu_share(settings.cpu_affinity, worker_index, settings.devices.size());
    while (!interrupted.load()) {
      ChildJob job;
      {
        std::lock_guard<std::mutex> lock(queue_mutex);
        if (!take(job)) return;
      }
      const RunOptions& options = job.options;
      const std::string label = options.backends.size() > 1
                                    ? job.entry.name + " [" + options.backend + "]"
                                    : job.entry.name;
      const std::string stem =
          fmt::format("{}/{}.{}.{}.{}", settings.logs_dir, job.entry.name, mode_name(options.mode),
                      file_part(options.backend), file_part(device));
      progress.started(label, device, stem + ".phase");
      std::vector<ResultRow> rows;
      ChildOutcome outcome;
      ModelSupply supply;
      if (settings.supply) {
        progress.set_phase(label, device, "waiting for its export");
        supply = settings.supply->await(job.entry);
        if (interrupted.load()) return;
        if (!supply.ready) rows = export_failure_rows(options, job.entry, device, supply);
      }
      if (rows.empty()) {
        progress.set_phase(label, device, "starting");
        rows = run_job_child(job, settings, configs.at(job.entry.suite), device, cpus, stem,
                             interrupted, outcome);
      }
      if (!supply.log.empty()) {
        for (auto& row : rows) set_cell(row, columns::kExportS, format_cell(supply.seconds));
      }
      if (outcome.kind == ChildOutcome::Kind::kInterrupted)
        record_cut_job(settings.logs_dir, job.entry.name, options.backend, outcome.seconds);
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
