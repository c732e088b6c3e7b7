// Orchestration of a run: what runs (selection, skips, --resume), where rows go (one CSV and
// JSON per backend and experiment), the workers (worker_pool.h), and the final summary.
#include "zoobench/runner/suite_run.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

#include "zoobench/backends/backend.h"
#include "zoobench/python/embedded_python.h"
#include "zoobench/report/expected.h"
#include "zoobench/report/markdown.h"
#include "zoobench/report/number_format.h"
#include "zoobench/results/result_files.h"
#include "zoobench/results/sink.h"
#include "zoobench/results/upstream_format.h"
#include "zoobench/runner/accuracy_batch.h"
#include "zoobench/runner/child_device.h"
#include "zoobench/runner/child_rows.h"
#include "zoobench/runner/device_gates.h"
#include "zoobench/runner/job_estimates.h"
#include "zoobench/runner/job_order.h"
#include "zoobench/runner/model_plan.h"
#include "zoobench/runner/model_run.h"
#include "zoobench/runner/output_lock.h"
#include "zoobench/runner/pipelines.h"
#include "zoobench/runner/preflight.h"
#include "zoobench/runner/progress.h"
#include "zoobench/runner/recipe_export.h"
#include "zoobench/runner/record_rows.h"
#include "zoobench/runner/resume_settings.h"
#include "zoobench/runner/run_gate.h"
#include "zoobench/runner/run_summary.h"
#include "zoobench/runner/selection.h"
#include "zoobench/runner/worker_pool.h"
#include "zoobench/runner/zoo_supply.h"
#include "zoobench/util/compat.h"
#include "zoobench/util/cpu_affinity.h"
#include "zoobench/util/crash_report.h"
#include "zoobench/util/device_gate.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/log.h"
#include "zoobench/util/pipeline_pause.h"
#include "zoobench/util/text.h"
#include "zoobench/zoo/zoo_locks.h"

namespace fs = std::filesystem;

namespace zoobench {
namespace {

// --export-here's value for upstream's accuracy batch size N: "accuracy:N" (the exporter caps
// it per model by accuracy.max_batch_size); otherwise N, or "list".
constexpr const char* kAccuracyBatchPrefix = "accuracy:";

std::atomic<bool> g_interrupted{false};

extern "C" void on_interrupt(int) { g_interrupted.store(true); }

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

// The device part of result file names: the device, or its type for several devices.
std::string device_label(const std::vector<std::string>& devices) {
  if (devices.size() == 1) return devices[0];
  return devices[0].substr(0, devices[0].find(':'));
}

RunOptions for_backend(const RunOptions& options, const std::string& backend) {
  RunOptions out = options;
  out.backend = backend;
  return out;
}

// Where the rows of the run go: one sink per result file (per backend and experiment; with
// --output, the backends of an experiment share its file).
class RunSinks {
 public:
  RunSinks(const RunOptions& options, const std::vector<std::string>& command_line)
      : context_(describe_run_context(command_line)),
        upstream_files_(options.upstream_files),
        output_directory_(options.output_directory) {
    context_["settings"] = run_settings(options);  // what --resume checks (resume_settings.h)
    const std::string label = device_label(options.devices);
    for (const auto& backend : options.backends) {
      RunOptions one = for_backend(options, backend);
      for (ExperimentKind kind : {ExperimentKind::kAccuracy, ExperimentKind::kPerformance}) {
        if (kind == ExperimentKind::kAccuracy ? !options.accuracy : !options.performance) continue;
        const std::string path = result_csv_path(one, std::string(experiment_name(kind)), label);
        if (!by_path_.count(path)) {
          if (options.resume) check_resume_settings(options, path);
          if (!options.resume && fs::exists(path) && fs::file_size(path) > 0) {
            log::warn(
                "{} exists; new rows are appended (use --resume to skip models it already has)",
                path);
          }
          by_path_[path] = std::make_unique<ResultSink>(kind, path, context_);
          paths_.push_back(path);
        }
        path_of_[{backend, kind}] = path;
      }
    }
  }

  ResultSink& sink(const std::string& backend, ExperimentKind kind) {
    return *by_path_.at(path_of_.at({backend, kind}));
  }

  // Called from the worker threads, where an exception would abort the whole process: a
  // result file that cannot be written (disk full) stops the run as an interrupt does, and the
  // rows after it are dropped (their models have no row, so --resume runs them again).
  void write(const ResultRow& row) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!write_failure_.empty()) return;
    try {
      // The upstream file is opened (and seeded with earlier rows) before this row is added.
      UpstreamSink* upstream = upstream_files_ ? &upstream_sink(row) : nullptr;
      sink(cell(row, columns::kBackend), row.kind).write(row);
      if (upstream) upstream->write(row);
    } catch (const std::exception& e) {  // ResultWriteError; an upstream file that cannot be
      write_failure_ = e.what();          // written or holds other columns
      log::error("{}: stopping the run", write_failure_);
      g_interrupted.store(true);
      return;
    }
    written_.push_back(row);
  }

  const std::vector<ResultRow>& written() const { return written_; }
  // --output-format upstream: the upstream file of the row's run, opened at its first row.
  UpstreamSink& upstream_sink(const ResultRow& row) {
    const std::string path = (fs::path(output_directory_) / upstream_file_name(row)).string();
    auto it = upstream_.find(path);
    if (it == upstream_.end()) {
      it = upstream_.emplace(path, std::make_unique<UpstreamSink>(row.kind, path)).first;
      // Resumed: the rows zoobench's file already has that belong in this one.
      std::vector<ResultRow> earlier;
      for (const auto& r : sink(cell(row, columns::kBackend), row.kind).rows())
        if (upstream_file_name(r) == upstream_file_name(row)) earlier.push_back(r);
      if (it->second->started_empty() && !earlier.empty()) it->second->write(earlier);
    }
    return *it->second;
  }
  // "cannot write <file>: <errno text>" once a write failed, else "".
  const std::string& write_failure() const { return write_failure_; }
  // "accuracy rows: <path>" for each result file, in the order the backends were given.
  void print_paths(std::FILE* out) const {
    for (const auto& path : paths_) {
      std::fprintf(out, "%s rows: %s\n",
                   std::string(experiment_name(by_path_.at(path)->kind())).c_str(), path.c_str());
    }
    for (const auto& [path, sink] : upstream_)
      std::fprintf(out, "upstream's file: %s\n", path.c_str());
  }

 private:
  nlohmann::json context_;
  std::map<std::string, std::unique_ptr<ResultSink>> by_path_;
  std::map<std::pair<std::string, ExperimentKind>, std::string> path_of_;
  std::vector<std::string> paths_;
  std::mutex mutex_;
  std::vector<ResultRow> written_;  // this run's rows, for the summary
  bool upstream_files_ = false;
  std::string output_directory_;
  std::map<std::string, std::unique_ptr<UpstreamSink>> upstream_;
  std::string write_failure_;
};

// Which experiments of this model and backend still lack their rows for every device of the
// run: with --resume, a model that has its accuracy rows but not its performance row runs
// performance only.
struct MissingRows {
  bool accuracy = false, performance = false;
  bool any() const { return accuracy || performance; }
};

MissingRows missing_rows(const JobPlan& job, const std::vector<std::string>& devices,
                         RunSinks& sinks) {
  MissingRows missing{job.accuracy, job.performance};
  for (const auto& device : devices) {
    RowContext c = context_for(job, device, "");
    if (job.accuracy) {
      bool all = true;
      for (const auto& layout : job.input_layouts) {
        c.input_layout = layout;
        auto row = failure_row(ExperimentKind::kAccuracy, Status::kPass, "", c);
        all =
            all &&
            sinks.sink(job.backend, ExperimentKind::kAccuracy).identities().count(row.identity()) >
                0;
      }
      if (all) missing.accuracy = false;
    }
    if (job.performance) {
      auto row = failure_row(ExperimentKind::kPerformance, Status::kPass, "", c);
      if (sinks.sink(job.backend, ExperimentKind::kPerformance).identities().count(row.identity()) >
          0) {
        missing.performance = false;
      }
    }
  }
  return missing;
}

// --cpu-affinity must name CPUs this process may use, at least one per worker.
void check_cpu_affinity(const RunOptions& options, const PipelineCount& pipelines) {
  if (options.cpu_affinity.empty()) return;
  const std::vector<int> allowed = current_cpu_affinity();
  for (int cpu : options.cpu_affinity) {
    if (!allowed.empty() && !std::binary_search(allowed.begin(), allowed.end(), cpu)) {
      throw UsageError(
          fmt::format("--cpu-affinity names CPU {}, but this process may run only on CPUs {}", cpu,
                      format_cpu_list(allowed)));
    }
  }
  // UsageError: too few CPUs for the most workers the run has at once.
  const std::size_t per_device =
      std::max(pipelines.per_device,
               options.accuracy ? static_cast<std::size_t>(options.accuracy_workers) : 1);
  worker_cpu_share(options.cpu_affinity, 0, options.devices.size() * per_device);
}

// --jobs, or what the machine allows: the CPUs the run may use, the first GPU's memory.
PipelineCount count_pipelines(const RunOptions& options, const std::string& device_type) {
  const std::vector<int> cpus =
      options.cpu_affinity.empty() ? current_cpu_affinity() : options.cpu_affinity;
  int64_t gpu_bytes = 0;
  if (device_type == "cuda" && options.jobs <= 0) {
    const auto index = parse_device(options.devices[0]).index();
    gpu_bytes = compat::cuda_total_memory_bytes(std::max<int>(0, index));
  }
  return pipeline_count(options.jobs, device_type, options.devices.size(), cpus.size(), gpu_bytes);
}

// The rows of a model run in this process once its export settled (`got`): the export's
// failure rows, or the model's own, each with the export's seconds when one ran.
void run_after_export(const ModelSupply& got, const ZooEntry& entry, const RunOptions& options,
                      const SuiteConfig& config, const std::function<void(ResultRow)>& emit) {
  const std::string export_s = got.seconds > 0 ? format_cell(got.seconds) : "";
  auto with_export_s = [&](ResultRow row) {
    set_cell(row, columns::kExportS, export_s);
    emit(std::move(row));
  };
  if (!got.ready) {
    const JobPlan job =
        plan_job(options, entry, config, options.backend, options.accuracy, options.performance);
    for (auto& row : export_failure_rows(job, options.devices.at(0), got)) with_export_s(row);
    return;
  }
  run_model(entry, options, config, options.devices.at(0), with_export_s);
}

// What a child's --export-here asks of it: the run's export at that batch size ("list": the
// list's; "accuracy:N": upstream's accuracy size N, which the yaml may cap), nothing for "".
std::optional<ExportRequest> requested_export(const RunOptions& options,
                                              const std::string& suites_dir,
                                              const std::string& export_here) {
  if (export_here.empty()) return std::nullopt;
  ExportRequest request = export_request(options, suites_dir);
  std::string size = export_here;
  request.accuracy_batch = starts_with(size, kAccuracyBatchPrefix);
  if (request.accuracy_batch) size = size.substr(std::string(kAccuracyBatchPrefix).size());
  request.batch_size = size == "list" ? std::nullopt : std::optional<int64_t>(std::stoll(size));
  return request;
}

// A child's model from its zoo entry: exported here first by `request` when there is one, then
// its experiments' rows.
void export_and_run_here(const RunOptions& options, const ZooEntry& entry,
                         const SuiteConfig& config, const std::optional<ExportRequest>& request,
                         const std::function<void(ResultRow)>& emit) {
  // No other run's --zoo-max-gb deletes the model while this process reads it.
  const ModelUseLock in_use(options.zoo_dir, entry.suite, entry.name);
  ModelSupply got{true, "", ""};
  if (request) got = export_recipe_here(*request, entry, options.log_file);
  run_after_export(got, entry, options, config, emit);
}

// A model's own process (--row-out): its experiments (with --accuracy-batch-here N, the check
// at batch N from that size's zoo entry, then the timings at the run's), each row written to
// the parent's file as it comes.
int run_child_mode(const RunOptions& options, const ZooEntry& entry, const SuiteConfig& config,
                   const std::string& suites_dir) {
  crash_report::report_termination();  // a timeout row can then say in which phase it stopped
  configure_process_device_gate(options.device_gate);
  // A timed section of another pipeline on this device may pause this one (pipeline_pause.h):
  // with --pause-pipelines each section does, and an unstable timing is timed again so.
  if (options.pause_pipelines || (options.performance && options.retime_unstable))
    pipeline_pause::announce(options.device_gate);
  if (options.pause_pipelines) {
    // Started only once no section is under way: one that began before the announcement could
    // not pause it.
    const DeviceGate::Shared no_section_under_way(process_device_gate());
  }
  std::vector<ResultRow> rows;
  auto emit = [&](ResultRow row) {
    rows.push_back(std::move(row));
    write_rows_file(options.row_out, rows);
  };
  const int64_t check_size = options.accuracy ? options.accuracy_batch_here : 0;
  if (check_size > 0) {
    // The check's options are its export's: upstream's size, capped as an accuracy batch.
    const RunOptions check = accuracy_pass(options, check_size);
    std::optional<ExportRequest> request;
    if (!options.export_here.empty()) request = export_request(check, suites_dir);
    export_and_run_here(check, zoo_entry_in(check.zoo_dir, entry.suite, entry.name), config,
                        request, emit);
  }
  if (check_size == 0 || options.performance) {
    RunOptions rest = options;
    if (check_size > 0) rest.accuracy = false;
    export_and_run_here(rest, entry, config,
                        requested_export(options, suites_dir, options.export_here), emit);
  }
  if (rows.empty()) write_rows_file(options.row_out, rows);
  return 0;
}

// Every device parses, exists here and is named once (or the CPU with --cpu-affinity), and
// maps to a child's device (UsageError early).
void check_devices(const RunOptions& options, const char* cuda_visible_devices) {
  for (const auto& device : options.devices) {
    parse_device(device);
    child_device_for(device, cuda_visible_devices);
  }
  // Counting GPUs starts CUDA's driver in this process: only when a GPU is asked for.
  const bool any_gpu = std::any_of(options.devices.begin(), options.devices.end(),
                                   [](const std::string& d) { return starts_with(d, "cuda"); });
  check_device_list(options.devices, !options.cpu_affinity.empty(), cuda_visible_devices,
                    any_gpu ? compat::cuda_device_count() : 0);
}

// Whether the yaml keeps only the model's accuracy check from running (its timings may run).
bool is_accuracy_skip(const SelectedModel& model) {
  return model.skip_reason && starts_with(*model.skip_reason, "accuracy.skip");
}

// A skipped model: logged, and for an accuracy.skip an upstream pass_due_to_skip row per backend
// (known not to be checkable, not a failure), unless --resume finds the backend's row there: a
// second row would hide the first in reports (DebertaV2ForMaskedLM's on 2026-12-03).
void record_skip(const RunOptions& options, const SelectedModel& model, const SuiteConfig& config,
                 RunSinks& sinks) {
  if (options.accuracy && is_accuracy_skip(model)) {
    for (const auto& backend : options.backends) {
      const JobPlan check = plan_job(options, model.entry, config, backend, true, false);
      if (options.resume && !missing_rows(check, options.devices, sinks).any()) continue;
      RowContext c = context_for(check, options.devices[0], "");
      sinks.write(
          failure_row(ExperimentKind::kAccuracy, Status::kPassDueToSkip, *model.skip_reason, c));
    }
  }
  log::info("skip {}{}: {}", model.entry.name,
            is_accuracy_skip(model) && options.performance ? "'s accuracy check" : "",
            *model.skip_reason);
}

// The jobs of the run, model-major: a model's backends run one after another, so the backends
// compared in one table ran on the machine as it was at that moment. With --resume a job asks
// only for the rows its files lack, and a model that has them all is left out. A model the yaml
// keeps from accuracy checks (accuracy.skip) is still timed when --performance asks: the same
// yaml gives the same rows whether the two experiments run in one invocation or two.
std::deque<JobPlan> plan_jobs(const RunOptions& options, const std::vector<SelectedModel>& selected,
                              const std::map<std::string, SuiteConfig>& configs, RunSinks& sinks,
                              std::size_t& skipped) {
  std::deque<JobPlan> jobs;
  for (const auto& model : selected) {
    const SuiteConfig& config = configs.at(model.entry.suite);
    bool check = options.accuracy;
    if (model.skip_reason) {
      record_skip(options, model, config, sinks);
      if (!(is_accuracy_skip(model) && options.performance)) {
        ++skipped;
        continue;
      }
      check = false;
    }
    for (const auto& backend : options.backends) {
      JobPlan job = plan_job(options, model.entry, config, backend, check, options.performance);
      if (options.resume) {
        const MissingRows missing = missing_rows(job, options.devices, sinks);
        if (!missing.any()) {
          log::info("resume: {}{} already has its rows", model.entry.name,
                    options.backends.size() > 1 ? " (" + backend + ")" : std::string());
          continue;
        }
        job.accuracy = missing.accuracy;
        job.performance = missing.performance;
      }
      jobs.push_back(std::move(job));
    }
  }
  return jobs;
}

// Every model runs in a process of its own, --only's too: a crash is its `crash` row and
// --timeout holds. --in-process (for a debugger) runs one model with one backend on one device
// here, unless that device or the CPUs must be pinned in a child (pinned before it starts, so
// Torch's thread pools see only its CPUs).
bool runs_in_this_process(const RunOptions& options, const std::deque<JobPlan>& jobs,
                          const char* cuda_visible_devices) {
  if (!options.in_process) return false;
  const bool one = jobs.size() == 1 && options.only.size() == 1 &&
                   options.backends.size() == 1 && options.devices.size() == 1;
  const bool unpinned =
      one && child_device_for(options.devices[0], cuda_visible_devices).device == options.devices[0] &&
      options.cpu_affinity.empty();
  if (!unpinned) {
    log::warn(
        "--in-process runs one --only model with one backend on one unpinned device; this run "
        "runs its models in processes of their own");
  }
  return unpinned;
}

// Accuracy checks are not timed, so with --accuracy-workers N they may share a device: N at a
// time on each, all before the performance runs (runner/pipelines.h). Without it a child does
// both experiments of its model and backend, loading the model once. With --zoo-max-gb a
// model's checks and timings stay in one job, so its folder can go once its model is done
// rather than after every check of the run.
std::size_t check_workers(const RunOptions& options) {
  if (options.accuracy_workers <= 1 || !options.accuracy) return 0;
  if (options.zoo_max_gb > 0 && options.performance) {
    log::warn(
        "--zoo-max-gb: each model's checks and timings run together, one job per model "
        "(--accuracy-workers applies to runs without --performance)");
    return 0;
  }
  return static_cast<std::size_t>(options.accuracy_workers);
}

// The jobs the time budget left unstarted, for the user to resume.
void report_not_started(const RunOptions& options, const std::vector<JobPlan>& jobs) {
  if (jobs.empty()) return;
  std::vector<std::string> names;
  for (const auto& job : jobs) {
    std::vector<std::string> experiments;
    if (job.accuracy) experiments.push_back("accuracy");
    if (job.performance) experiments.push_back("performance");
    names.push_back(job.entry.name + " [" + job.backend + ", " + join(experiments, "+") + "]");
  }
  std::fprintf(stderr,
               "zoobench: the time budget (--time-budget %s s) left %zu job(s) unstarted, each "
               "expected to end after it: %s. Run again with --resume to do them.\n",
               format_cell(options.time_budget_s).c_str(), jobs.size(), join(names, ", ").c_str());
}

// The files of a device's gate (util/device_gate.h, runner/device_gates.h): held by the run's
// models' runs and timed sections and, for the run's first device (the exporter's), by the
// exports; a GPU's by every zoobench run on the machine.
std::string gate_of(const RunOptions& options, const std::string& device) {
  return device_gate_path(device, options.output_directory, std::getenv("CUDA_VISIBLE_DEVICES"));
}

// Where the run's GPUs are gated with every other zoobench run on the machine ("" for a CPU
// run): two commands on one GPU wait for each other's timed sections.
std::string machine_gates_line(const RunOptions& options) {
  std::vector<std::string> gates;
  for (const auto& device : options.devices)
    if (device.rfind("cuda", 0) == 0) gates.push_back(device + " " + gate_of(options, device));
  if (gates.empty()) return "";
  return "timed sections have the GPU alone against every zoobench run on this machine (gates: " +
         join(gates, ", ") + ")";
}

// The supply of the jobs' models, in the order the jobs ask for them (null: the run exports
// nothing, --no-export).
std::unique_ptr<ZooSupply> make_supply(const RunOptions& options, const std::string& suites_dir,
                                       const std::vector<RunPhase>& phases, std::size_t pipelines) {
  if (!options.export_missing) return nullptr;
  SupplySettings settings;
  settings.request = export_request(options, suites_dir);
  settings.request.device_gate = gate_of(options, options.devices[0]);
  settings.exports_in_model_processes = exports_in_model_process(settings.request);
  if (options.accuracy_batch_here > 0)
    settings.check_zoo_dir = zoo_for_batch_size(options.zoo_dir, options.accuracy_batch_here);
  settings.python = python::interpreter_path();
  settings.exporter = (fs::path(python::tools_directory()) / "export_zoo.py").string();
  settings.logs_dir = (fs::path(options.output_directory) / "logs").string();
  settings.timeout_s = options.timeout_s;
  settings.max_bytes = options.zoo_max_gb * 1e9;
  settings.ahead = std::max<std::size_t>(settings.ahead, pipelines);
  std::vector<ZooEntry> models;
  std::map<std::string, int> jobs_per_model;
  for (const auto& phase : phases) {
    for (const auto& job : phase.jobs) {
      const std::string key = job.entry.suite + "/" + job.entry.name;
      if (jobs_per_model[key]++ == 0) models.push_back(job.entry);
    }
  }
  return std::make_unique<ZooSupply>(std::move(settings), std::move(models),
                                     std::move(jobs_per_model), g_interrupted);
}

// Off a terminal, how often the running models' phases are printed.
constexpr double kBoardEverySeconds = 60;

// The workers' settings that do not change between phases.
WorkerPoolSettings worker_settings(const RunOptions& options, std::size_t most_per_device,
                                   const char* cuda_visible_devices) {
  WorkerPoolSettings settings;
  const std::size_t workers = options.devices.size() * most_per_device;
  settings.cpu_affinity = pipeline_cpus(options.cpu_affinity, workers, current_cpu_affinity());
  settings.logs_dir = (fs::path(options.output_directory) / "logs").string();
  settings.timeout_s = options.timeout_s;
  settings.cuda_visible_devices = cuda_visible_devices;
  settings.device_gate = [&options](const std::string& device) { return gate_of(options, device); };
  return settings;
}

void run_in_children(const RunOptions& options, const std::string& suites_dir,
                     std::deque<JobPlan> jobs, const std::map<std::string, SuiteConfig>& configs,
                     RunSinks& sinks, const PipelineCount& pipelines,
                     const char* cuda_visible_devices) {
  install_interrupt_handlers();
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(options.time_budget_s));
  // --time-budget's estimates: the rows already in the run's files, then each job's as it ends.
  JobEstimates estimates;
  if (options.time_budget_s > 0)
    add_result_files(estimates, options, device_label(options.devices));
  const std::size_t checks = check_workers(options);
  jobs = longest_first(std::move(jobs));
  std::vector<RunPhase> phases = plan_phases(std::move(jobs), pipelines.per_device, checks);
  std::unique_ptr<ZooSupply> supply =
      make_supply(options, suites_dir, phases, pipelines.per_device);
  if (supply && supply->exports_in_model_processes()) {
    // Each model's process exports its recipe itself, at the run's batch size.
    std::string size = options.batch_size ? std::to_string(*options.batch_size) : "list";
    if (options.batch_size && options.accuracy_batch) size = kAccuracyBatchPrefix + size;
    for (auto& phase : phases)
      for (auto& job : phase.jobs) job.export_here = size;
  }
  std::size_t total = 0;
  for (const auto& phase : phases) total += phase.jobs.size();
  Progress progress(total, ::isatty(STDERR_FILENO) != 0);
  progress.note("pipelines: " + pipelines.why);
  if (std::string gates = machine_gates_line(options); !gates.empty()) progress.note(gates);
  if (std::string order = start_order_line(phases.front().jobs); !order.empty())
    progress.note(order);
  progress.start_board(kBoardEverySeconds);
  WorkerPoolSettings settings =
      worker_settings(options, std::max(pipelines.per_device, checks), cuda_visible_devices);
  settings.supply = supply.get();
  if (options.time_budget_s > 0) {
    settings.deadline = deadline;
    settings.expected_s = [&estimates](const JobPlan& job) {
      return estimates.expected_s(job.entry.name, job.backend, job.accuracy, job.performance);
    };
  }
  auto write = [&](const JobPlan&, const std::vector<ResultRow>& rows) {
    for (const auto& row : rows) {
      sinks.write(row);
      estimates.add(row);
    }
  };
  const std::vector<JobPlan> not_started =
      run_phases(std::move(phases), options.devices, settings, progress, g_interrupted, write);
  progress.close();
  report_not_started(options, not_started);
}

// One model with one backend, in this process, once its export (if it needs one) is settled.
void run_one_in_this_process(const RunOptions& options, const std::string& suites_dir,
                             const JobPlan& job, const std::map<std::string, SuiteConfig>& configs,
                             RunSinks& sinks) {
  configure_process_device_gate(gate_of(options, options.devices[0]));
  const ModelUseLock in_use(options.zoo_dir, job.entry.suite, job.entry.name);
  auto supply = make_supply(options, suites_dir, {RunPhase{{job}, 1}}, 1);
  ModelSupply got{true, "", ""};
  if (supply && supply->exports_in_model_processes()) {
    got = export_recipe_here(supply->request(), job.entry, options.log_file);
  } else if (supply) {
    // While the exporter runs, an interrupt stops it (it has a process group of its own);
    // the model itself runs with the default handlers, as without an export.
    install_interrupt_handlers();
    got = supply->await(job.entry);
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    if (g_interrupted.load()) return;
  }
  RunOptions one = for_backend(options, job.backend);
  one.accuracy = job.accuracy;
  one.performance = job.performance;
  run_after_export(got, job.entry, one, configs.at(job.entry.suite),
                   [&](ResultRow row) { sinks.write(row); });
}

// --tolerance (upstream's mode): each model's tolerance, the smallest it passes with, beside the
// rule it was judged by.
void print_tolerances(const std::vector<ResultRow>& rows, std::FILE* out) {
  std::vector<std::vector<std::string>> table;
  for (const auto& row : rows) {
    if (row.kind != ExperimentKind::kAccuracy) continue;
    table.push_back({cell(row, columns::kName), cell(row, columns::kBackend),
                     cell(row, columns::kAccuracy), cell(row, columns::kMinPassingTol),
                     cell(row, columns::kTolerance), cell(row, columns::kToleranceSource)});
  }
  if (table.empty()) return;
  std::fprintf(out, "\ntolerances (min_passing_tol: the smallest tolerance each model passes with):\n%s",
               report::markdown_table({"model", "backend", "accuracy", "min_passing_tol",
                                       "rule_tolerance", "rule_from"},
                                      table)
                   .c_str());
}

// The expected file's rows (--expected), read before anything runs; none without one.
std::vector<ResultRow> read_expected(const RunOptions& options) {
  if (options.expected.empty()) return {};
  if (!fs::is_regular_file(options.expected))
    throw UsageError("--expected " + options.expected +
                     " is not a file: create it from a good run with `zoobench compare RESULTS "
                     "--expected " + options.expected + " --update-expected`");
  ResultFile file = load_result_file(options.expected);
  if (file.kind != ExperimentKind::kAccuracy)
    throw UsageError("--expected " + options.expected +
                     " holds performance results; it names accuracy statuses (name,accuracy)");
  report::require_one_expectation_per_model(file.rows, options.expected);
  return file.rows;
}

std::set<std::string> model_names(const std::deque<JobPlan>& jobs,
                                  const std::vector<ResultRow>& written) {
  std::set<std::string> names;
  for (const auto& job : jobs) names.insert(job.entry.name);
  for (const auto& row : written) names.insert(cell(row, columns::kName));
  return names;
}

// The run's end: the results table (one backend) or latency matrix (several), the result
// files, then the summary (run_summary.h, the same lines every run) and the gate (run_gate.h);
// 130 when interrupted, 1 when a row failed.
int finish_run(const RunOptions& options, RunSinks& sinks, std::size_t skipped,
               const std::set<std::string>& models, const std::vector<ResultRow>& expected) {
  if (options.tolerance_mode) print_tolerances(sinks.written(), stdout);
  if (options.accuracy && options.performance && !sinks.written().empty()) {
    if (options.backends.size() == 1) {
      std::printf("\n%s\n", report::format_ascend_table(sinks.written()).c_str());
    } else {
      std::printf("\n%s\n", report::format_latency_matrix(sinks.written()).c_str());
    }
  }
  sinks.print_paths(stdout);
  if (options.performance && !sinks.written().empty()) {
    std::printf("%s\n", eager_reference(options) == "python"
                            ? "speedups: against the model's own Python module (upstream's "
                              "eager baseline; eager_reference python)"
                            : "speedups: against eval.pt in the TorchScript interpreter "
                              "(eager_reference torchscript); python_speedup, where there is "
                              "one, against the Python module");
  }
  print_run_summary(tally_rows(sinks.written()), skipped, stdout);
  if (!sinks.write_failure().empty()) {
    std::fprintf(stderr,
                 "zoobench: the run stopped: %s. The rows written before it are kept, in the CSV "
                 "and its JSON alike; make room and run again with --resume\n",
                 sinks.write_failure().c_str());
    return 1;
  }
  if (g_interrupted.load()) {
    std::printf(
        "interrupted: finished models keep their rows; run again with --resume to continue\n");
    return 130;
  }
  // A run without --accuracy has no accuracy rows to miss.
  const RunGate gate = gate_run(sinks.written(), options.accuracy ? models : std::set<std::string>{},
                                expected, options.expected);
  if (!gate.message.empty())
    std::printf("%s: %s\n", gate.fails() ? "exit 1" : "exit 0", gate.message.c_str());
  return gate.fails() ? 1 : 0;
}

std::optional<OutputLock> lock_output_file_folder(const RunOptions& options) {
  if (options.output.empty()) return std::nullopt;
  const fs::path csv = result_csv_path(options, "accuracy", "");
  const fs::path folder = csv.parent_path().empty() ? fs::path(".") : csv.parent_path();
  std::error_code error;
  if (fs::exists(folder, error) &&
      fs::equivalent(folder, fs::path(options.output_directory), error))
    return std::nullopt;
  return OutputLock::acquire(folder.string());
}

}  // namespace

int execute_run(const RunOptions& options, const std::vector<std::string>& command_line) {
  if (!options.accuracy && !options.performance) {
    throw UsageError("say what to measure: --accuracy and/or --performance");
  }
  const std::string suites_dir =
      options.suites_dir.empty() ? default_suites_dir() : options.suites_dir;
  if (!std::filesystem::is_directory(suites_dir)) {
    throw UsageError("the model lists and suite settings are not at " + suites_dir +
                     " (an installed zoobench keeps them in PREFIX/share/zoobench/suites): "
                     "install zoobench with `make install`, or name them with --suites-dir or "
                     "ZOOBENCH_SUITES");
  }
  check_zoo_folder(options.zoo_dir);
  // A run that exports what it lacks starts from whatever the zoo holds, even nothing.
  const bool exports = options.export_missing && options.suite != "all";
  ZooCatalog catalog =
      exports ? ZooCatalog::scan_or_empty(options.zoo_dir) : ZooCatalog::scan(options.zoo_dir);
  if (exports) add_listed_models(catalog, options, suites_dir);
  std::vector<std::string> suites =
      options.suite == "all" ? catalog.suites() : std::vector<std::string>{options.suite};
  auto configs = load_suite_configs(suites_dir, suites);
  const char* cuda_visible_devices = std::getenv("CUDA_VISIBLE_DEVICES");
  check_devices(options, cuda_visible_devices);
  const std::string device_type = options.devices[0].substr(0, options.devices[0].find(':'));
  const PipelineCount pipelines = count_pipelines(options, device_type);
  check_cpu_affinity(options, pipelines);
  auto selected = select_models(catalog, options, configs, device_type);

  if (!options.row_out.empty()) {
    if (selected.size() != 1) throw UsageError("--row-out needs exactly one model (--only NAME)");
    return run_child_mode(options, selected[0].entry, configs.at(selected[0].entry.suite),
                          suites_dir);
  }
  // A backend that cannot run here at all (or a typo in a torch.compile name): refused before
  // anything is exported or started, not one failed row per model.
  require_runnable_backends(options.backends, options.mode, options.precision, device_type);
  check_selection_not_empty(selected, options.allow_empty_selection);
  if (exports && models_to_export(selected) > 0) {
    check_exporter_runs(python::interpreter_path(), python::tools_directory(),
                        (fs::path(options.output_directory) / "logs" / "exporter-check.log").string());
  }

  check_expected_is_no_output(options);
  const std::vector<ResultRow> expected = read_expected(options);

  // Before the result files are read for --resume: no second run beside this one, in the
  // output folder or in the folder of an --output file elsewhere (two runs with different
  // --output-directory and one --output would interleave their rows).
  OutputLock lock = OutputLock::acquire(options.output_directory);
  std::optional<OutputLock> output_lock = lock_output_file_folder(options);
  RunSinks sinks(options, command_line);
  std::size_t skipped = 0;
  std::deque<JobPlan> jobs = plan_jobs(options, selected, configs, sinks, skipped);
  const std::set<std::string> models = model_names(jobs, sinks.written());
  if (runs_in_this_process(options, jobs, cuda_visible_devices)) {
    run_one_in_this_process(options, suites_dir, jobs.front(), configs, sinks);
  } else if (!jobs.empty()) {
    run_in_children(options, suites_dir, std::move(jobs), configs, sinks, pipelines,
                    cuda_visible_devices);
  }
  return finish_run(options, sinks, skipped, models, expected);
}

}  // namespace zoobench
