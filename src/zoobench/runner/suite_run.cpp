// Orchestration of a run.
#include "zoobench/runner/suite_run.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>
#include <unistd.h>

#include <fmt/format.h>

#include "zoobench/perf/statistics.h"
#include "zoobench/report/markdown.h"
#include "zoobench/results/sink.h"
#include "zoobench/runner/child_device.h"
#include "zoobench/runner/child_process.h"
#include "zoobench/runner/model_run.h"
#include "zoobench/runner/progress.h"
#include "zoobench/runner/record_rows.h"
#include "zoobench/runner/selection.h"
#include "zoobench/util/cpu_affinity.h"
#include "zoobench/util/crash_report.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/files.h"
#include "zoobench/util/log.h"
#include "zoobench/util/text.h"
#include "zoobench/zoo/manifest.h"

namespace fs = std::filesystem;

namespace zoobench {
namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void on_interrupt(int) { g_interrupted.store(true); }

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

std::string format_number(double value, int decimals) { return fmt::format("{:.{}f}", value, decimals); }

void write_rows_file(const std::string& path, const std::vector<ResultRow>& rows) {
  nlohmann::json out;
  out["rows"] = nlohmann::json::array();
  for (const auto& row : rows) out["rows"].push_back(row_to_json(row));
  write_file_atomically(path, out.dump() + "\n");
}

std::vector<ResultRow> read_rows_file(const std::string& path) {
  std::vector<ResultRow> rows;
  if (!fs::exists(path)) return rows;
  try {
    auto json = nlohmann::json::parse(read_text_file(path));
    for (const auto& row : json.at("rows")) rows.push_back(row_from_json(row));
  } catch (const std::exception&) {
    // A child killed while writing leaves the previous complete version (atomic rename) or
    // nothing; a garbled file cannot happen, but if it does the parent's rows say what's missing.
  }
  return rows;
}

// The device part of result file names: the device, or its type for several devices.
std::string device_label(const std::vector<std::string>& devices) {
  if (devices.size() == 1) return devices[0];
  return devices[0].substr(0, devices[0].find(':'));
}

struct RunSinks {
  std::unique_ptr<ResultSink> accuracy, performance;
  std::mutex mutex;
  std::vector<ResultRow> written;  // this run's rows, for the summary

  void write(const ResultRow& row) {
    std::lock_guard<std::mutex> lock(mutex);
    (row.kind == ExperimentKind::kAccuracy ? accuracy : performance)->write(row);
    written.push_back(row);
  }
};

std::unique_ptr<RunSinks> open_sinks(const RunOptions& options, const std::vector<std::string>& command_line) {
  auto sinks = std::make_unique<RunSinks>();
  auto context = describe_run_context(command_line);
  const std::string label = device_label(options.devices);
  auto open = [&](ExperimentKind kind) {
    std::string path = result_csv_path(options, std::string(experiment_name(kind)), label);
    if (!options.resume && fs::exists(path) && fs::file_size(path) > 0) {
      log::warn("{} exists; new rows are appended (use --resume to skip models it already has)", path);
    }
    return std::make_unique<ResultSink>(kind, path, context);
  };
  if (options.accuracy) sinks->accuracy = open(ExperimentKind::kAccuracy);
  if (options.performance) sinks->performance = open(ExperimentKind::kPerformance);
  return sinks;
}

RowContext context_for(const RunOptions& options, const ZooEntry& entry, const std::string& device,
                       const std::string& log) {
  RowContext c = row_context(options, entry.name, device, log);
  try {
    c.batch_size = read_manifest(entry.manifest_path).batch_size;
  } catch (const std::exception&) {
    // The child reports the broken manifest; the parent only needs the name for its rows.
  }
  return c;
}

std::vector<std::string> requested_layouts(const RunOptions& options) {
  return options.input_layouts.empty() ? std::vector<std::string>{"contiguous"} : options.input_layouts;
}

// Which experiments of this model still lack their rows for every device of the run: with
// --resume, a model that has its accuracy rows but not its performance row runs performance only.
struct MissingRows {
  bool accuracy = false, performance = false;
  bool any() const { return accuracy || performance; }
};

MissingRows missing_rows(const RunOptions& options, RunSinks& sinks, const ZooEntry& entry,
                         const std::vector<std::string>& devices) {
  MissingRows missing{options.accuracy, options.performance};
  for (const auto& device : devices) {
    RowContext c = context_for(options, entry, device, "");
    if (options.accuracy) {
      bool all = true;
      for (const auto& layout : requested_layouts(options)) {
        c.input_layout = layout;
        auto row = failure_row(ExperimentKind::kAccuracy, Status::kPass, "", c);
        all = all && sinks.accuracy->identities().count(row.identity()) > 0;
      }
      if (all) missing.accuracy = false;
    }
    if (options.performance) {
      auto row = failure_row(ExperimentKind::kPerformance, Status::kPass, "", c);
      if (sinks.performance->identities().count(row.identity()) > 0) missing.performance = false;
    }
  }
  return missing;
}

std::string last_error_line(const std::string& log_path) {
  std::string text;
  try {
    text = read_text_file(log_path);
  } catch (const std::exception&) {
    return "";
  }
  auto lines = split(text, '\n');
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    std::string line = trim(*it);
    if (!line.empty()) return line.size() > 300 ? line.substr(0, 300) : line;
  }
  return "";
}

// Rows for whatever the child did not report, from how it ended.
std::vector<ResultRow> complete_rows(const RunOptions& options, const ZooEntry& entry, const SuiteConfig& config,
                                     const std::string& device, const std::string& log,
                                     std::vector<ResultRow> rows, const ChildOutcome& outcome) {
  Status status = Status::kInfraError;
  std::string reason;
  switch (outcome.kind) {
    case ChildOutcome::Kind::kTimedOut:
      status = Status::kTimeout;
      reason = fmt::format("no result after {}s (--timeout); process group killed", format_number(options.timeout_s, 0));
      break;
    case ChildOutcome::Kind::kSignaled:
      status = Status::kCrash;
      reason = "killed by " + signal_name(outcome.signal);
      // The child's own report says in which phase (its native frames stay in the log); only a
      // report of this run, and of this signal (SIGKILL leaves none).
      if (const std::string line = crash_report::crash_line_from_log(log, outcome.log_offset);
          line.rfind(signal_name(outcome.signal) + " ", 0) == 0) {
        reason = "killed by " + line + " (backtrace in the log)";
      }
      if (outcome.signal == SIGKILL) reason += " (the kernel's OOM killer sends this when host memory runs out)";
      break;
    case ChildOutcome::Kind::kInterrupted:
      // An interrupted model gets no row, not even those its child finished (accuracy before
      // an interrupted performance run): --resume runs the whole model again.
      return {};
    case ChildOutcome::Kind::kFailedToStart:
      reason = outcome.error;
      break;
    case ChildOutcome::Kind::kExited:
      reason = fmt::format("exited with status {} without a result: {}", outcome.exit_code, last_error_line(log));
      break;
  }
  RowContext c = context_for(options, entry, device, log);
  // The patches the child was given (a crash may come from one of them).
  if (options.patches) c.patches = config.patches_for(entry.name, options.mode);
  auto has = [&](ExperimentKind kind, const std::string& layout) {
    for (const auto& row : rows) {
      if (row.kind != kind) continue;
      if (kind == ExperimentKind::kPerformance) return true;
      auto it = row.cells.find("input_layout");
      if ((it == row.cells.end() ? "contiguous" : it->second) == layout) return true;
    }
    return false;
  };
  if (options.accuracy) {
    for (const auto& layout : requested_layouts(options)) {
      if (has(ExperimentKind::kAccuracy, layout)) continue;
      c.input_layout = layout;
      rows.push_back(failure_row(ExperimentKind::kAccuracy, status, reason, c));
    }
  }
  if (options.performance && !has(ExperimentKind::kPerformance, "")) {
    rows.push_back(failure_row(ExperimentKind::kPerformance, status, reason, c));
  }
  return rows;
}

void print_summary(const std::vector<ResultRow>& rows, std::size_t skipped, std::FILE* out) {
  std::map<std::string, int> by_status;
  int accuracy_total = 0, accuracy_pass = 0;
  std::vector<double> speedups;
  for (const auto& row : rows) {
    by_status[std::string(experiment_name(row.kind)) + ":" + std::string(status_name(row.status()))]++;
    if (row.kind == ExperimentKind::kAccuracy) {
      ++accuracy_total;
      accuracy_pass += is_passing(row.status()) ? 1 : 0;
    } else if (row.status() == Status::kPass) {
      try {
        double s = std::stod(row.cells.at("speedup"));
        if (s > 0) speedups.push_back(s);
      } catch (const std::exception&) {
      }
    }
  }
  std::fprintf(out, "\nsummary:");
  if (accuracy_total > 0) {
    std::fprintf(out, " accuracy pass rate %d/%d (%.0f%%);", accuracy_pass, accuracy_total,
                 100.0 * accuracy_pass / accuracy_total);
  }
  if (!speedups.empty()) {
    std::fprintf(out, " geomean speedup %.3fx over %zu models;", stats::geometric_mean(speedups), speedups.size());
  }
  if (skipped) std::fprintf(out, " %zu skipped;", skipped);
  std::fprintf(out, "\n");
  for (const auto& [key, count] : by_status) std::fprintf(out, "  %-40s %d\n", key.c_str(), count);
}

// --cpu-affinity must name CPUs this process may use, at least one per worker.
void check_cpu_affinity(const RunOptions& options) {
  if (options.cpu_affinity.empty()) return;
  const std::vector<int> allowed = current_cpu_affinity();
  for (int cpu : options.cpu_affinity) {
    if (!allowed.empty() && !std::binary_search(allowed.begin(), allowed.end(), cpu)) {
      throw UsageError(fmt::format("--cpu-affinity names CPU {}, but this process may run only on CPUs {}",
                                   cpu, format_cpu_list(allowed)));
    }
  }
  worker_cpu_share(options.cpu_affinity, 0, options.devices.size());  // UsageError: too few CPUs
}

int run_child_mode(const RunOptions& options, const ZooEntry& entry, const SuiteConfig& config) {
  std::vector<ResultRow> rows;
  run_model(entry, options, config, options.devices.at(0), [&](const ResultRow& row) {
    rows.push_back(row);
    write_rows_file(options.row_out, rows);
  });
  if (rows.empty()) write_rows_file(options.row_out, rows);
  return 0;
}

}  // namespace

std::vector<std::string> child_arguments(const RunOptions& o, const std::string& suite, const std::string& model,
                                         const std::string& device, const std::string& row_out,
                                         const std::string& log_file) {
  std::vector<std::string> a = {"run", "--zoo", o.zoo_dir, "--suite", suite, "--only", model, "--devices", device,
                                "--backend", o.backend, o.mode == Mode::kTraining ? "--training" : "--inference",
                                "--" + precision_name(o.precision), "--iterations", std::to_string(o.training_steps),
                                "--repeat", std::to_string(o.measurement.repeat), "--warmup",
                                std::to_string(o.measurement.warmup_iterations), "--settle-iterations",
                                std::to_string(o.measurement.settle_iterations), "--timeout", "0",
                                "--optimizer", o.optimizer.kind, "--lr", format_cell(o.optimizer.learning_rate),
                                "--row-out", row_out, "--log-file", log_file};
  if (!o.suites_dir.empty()) a.insert(a.end(), {"--suites-dir", o.suites_dir});
  if (o.accuracy) a.push_back("--accuracy");
  if (o.performance) a.push_back("--performance");
  if (!o.cudagraphs) a.push_back("--disable-cudagraphs");
  if (o.cosine) a.push_back("--cosine");
  if (o.accu_summary) a.push_back("--accu-summary");
  if (o.tolerance) a.insert(a.end(), {"--tolerance", format_cell(*o.tolerance)});
  if (!o.patches) a.push_back("--no-patches");
  if (o.measurement.iterations_per_run > 0) {
    a.insert(a.end(), {"--iterations-per-run", std::to_string(o.measurement.iterations_per_run)});
  }
  if (!o.input_layouts.empty()) a.insert(a.end(), {"--input-layouts", join(o.input_layouts, ",")});
  return a;
}

int execute_run(const RunOptions& options, const std::vector<std::string>& command_line) {
  if (!options.accuracy && !options.performance) {
    throw UsageError("say what to measure: --accuracy and/or --performance");
  }
  const std::string suites_dir = options.suites_dir.empty() ? default_suites_dir() : options.suites_dir;
  ZooCatalog catalog = ZooCatalog::scan(options.zoo_dir);
  std::vector<std::string> suites = options.suite == "all" ? catalog.suites() : std::vector<std::string>{options.suite};
  auto configs = load_suite_configs(suites_dir, suites);
  const char* cuda_visible_devices = std::getenv("CUDA_VISIBLE_DEVICES");
  for (const auto& device : options.devices) {
    parse_device(device);  // UsageError early
    child_device_for(device, cuda_visible_devices);
  }
  check_cpu_affinity(options);
  const std::string device_type = options.devices[0].substr(0, options.devices[0].find(':'));
  auto selected = select_models(catalog, options, configs, device_type);

  if (!options.row_out.empty()) {
    if (selected.size() != 1) throw UsageError("--row-out needs exactly one model (--only NAME)");
    return run_child_mode(options, selected[0].entry, configs.at(selected[0].entry.suite));
  }

  auto sinks = open_sinks(options, command_line);
  struct QueuedModel {
    SelectedModel model;
    RunOptions options;  // the run's options, narrowed to the experiments this model still needs
  };
  std::deque<QueuedModel> queue;
  std::size_t skipped = 0;
  for (auto& model : selected) {
    if (model.skip_reason) {
      ++skipped;
      if (options.accuracy && starts_with(*model.skip_reason, "accuracy.skip")) {
        // Upstream records these as pass_due_to_skip: known not to be checkable, not a failure.
        RowContext c = context_for(options, model.entry, options.devices[0], "");
        sinks->write(failure_row(ExperimentKind::kAccuracy, Status::kPassDueToSkip, *model.skip_reason, c));
      }
      log::info("skip {}: {}", model.entry.name, *model.skip_reason);
      continue;
    }
    RunOptions model_options = options;
    if (options.resume) {
      MissingRows missing = missing_rows(options, *sinks, model.entry, options.devices);
      if (!missing.any()) {
        log::info("resume: {} already has its rows", model.entry.name);
        continue;
      }
      model_options.accuracy = missing.accuracy;
      model_options.performance = missing.performance;
    }
    queue.push_back({model, model_options});
  }

  // One model on one device runs in this process, unless that device or the CPUs must be
  // pinned in a child (pinned before it starts, so Torch's thread pools see only its CPUs).
  const bool single = queue.size() == 1 && options.only.size() == 1 && options.devices.size() == 1 &&
                      child_device_for(options.devices[0], cuda_visible_devices).device == options.devices[0] &&
                      options.cpu_affinity.empty();
  if (single) {
    // `zoobench run --only NAME`: in this process, rows written as they come.
    const auto& entry = queue.front().model.entry;
    run_model(entry, queue.front().options, configs.at(entry.suite), options.devices[0],
              [&](const ResultRow& row) { sinks->write(row); });
  } else if (!queue.empty()) {
    install_interrupt_handlers();
    const std::string logs_dir = (fs::path(options.output_directory) / "logs").string();
    fs::create_directories(logs_dir);
    Progress progress(queue.size(), ::isatty(STDERR_FILENO) != 0);
    std::mutex queue_mutex;
    const std::string executable = current_executable();
    auto worker = [&](std::size_t worker_index) {
      const std::string& device = options.devices[worker_index];
      const std::vector<int> cpus =
          options.cpu_affinity.empty()
              ? std::vector<int>{}
              : worker_cpu_share(options.cpu_affinity, worker_index, options.devices.size());
      while (!g_interrupted.load()) {
        QueuedModel queued;
        {
          std::lock_guard<std::mutex> lock(queue_mutex);
          if (queue.empty()) return;
          queued = queue.front();
          queue.pop_front();
        }
        const SelectedModel& model = queued.model;
        const RunOptions& model_options = queued.options;
        std::string device_part = device;
        for (char& ch : device_part) ch = ch == ':' ? '_' : ch;
        const std::string stem = fmt::format("{}/{}.{}.{}.{}", logs_dir, model.entry.name, mode_name(options.mode),
                                             options.backend, device_part);
        const std::string log_path = stem + ".log", row_path = stem + ".rows.json";
        fs::remove(row_path);
        progress.started(model.entry.name, device);
        const ChildDevice child = child_device_for(device, cuda_visible_devices);
        if (child.pinned()) {
          std::ofstream(log_path, std::ios::app) << "zoobench: the worker for " << device << " runs this model with "
                                                 << join(child.environment, " ") << ", as " << child.device << "\n";
        }
        if (!cpus.empty()) {
          std::ofstream(log_path, std::ios::app) << "zoobench: the worker for " << device << " runs this model on CPUs "
                                                 << format_cpu_list(cpus) << "\n";
        }
        std::vector<std::string> argv = {executable};
        auto args =
            child_arguments(model_options, model.entry.suite, model.entry.name, child.device, row_path, log_path);
        argv.insert(argv.end(), args.begin(), args.end());
        ChildOutcome outcome = run_child(argv, log_path, options.timeout_s, g_interrupted, child.environment, cpus);
        auto rows = complete_rows(model_options, model.entry, configs.at(model.entry.suite), device, log_path,
                                  read_rows_file(row_path), outcome);
        for (auto& row : rows) {
          row.cells["dev"] = device;  // a pinned child knew its GPU only as cuda:0
          row.cells["log"] = log_path;
          sinks->write(row);
        }
        fs::remove(row_path);
        if (outcome.kind != ChildOutcome::Kind::kInterrupted) {
          progress.finished(model.entry.name, device, rows, outcome.seconds);
        }
      }
    };
    std::vector<std::thread> workers;
    for (std::size_t i = 0; i < options.devices.size(); ++i) workers.emplace_back(worker, i);
    for (auto& t : workers) t.join();
    progress.close();
  }

  print_summary(sinks->written, skipped, stdout);
  if (options.accuracy && options.performance && !sinks->written.empty()) {
    std::printf("\n%s\n", report::format_ascend_table(sinks->written).c_str());
  }
  if (sinks->accuracy) std::printf("accuracy rows: %s\n", sinks->accuracy->csv_path().c_str());
  if (sinks->performance) std::printf("performance rows: %s\n", sinks->performance->csv_path().c_str());
  if (g_interrupted.load()) {
    std::printf("interrupted: finished models keep their rows; run again with --resume to continue\n");
    return 130;
  }
  return 0;
}

}  // namespace zoobench
