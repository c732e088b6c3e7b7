// One model's bisect: the switches to search, each step as a `zoobench run` child, the report.
#include "zoobench/bisect/bisect_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>

#include "zoobench/backends/switches.h"
#include "zoobench/report/markdown.h"
#include "zoobench/report/result_files.h"
#include "zoobench/results/columns.h"
#include "zoobench/runner/selection.h"
#include "zoobench/runner/worker_pool.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/files.h"
#include "zoobench/util/text.h"
#include "zoobench/zoo/catalog.h"

namespace fs = std::filesystem;

namespace zoobench {
namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void on_bisect_interrupt(int) { g_interrupted.store(true); }

struct Interrupted {};

// The flags every step's child gets besides the parent-decided ones (worker_pool's
// child_arguments): what the user chose for the check, and the switches off.
std::vector<std::string> step_flags(const RunOptions& o, const std::string& suites_dir,
                                    const std::vector<std::string>& disabled) {
  std::vector<std::string> flags = {"--zoo", o.zoo_dir, "--suites-dir", suites_dir};
  if (o.mode == Mode::kTraining) flags.push_back("--training");
  if (o.precision == Precision::kFloat16) flags.push_back("--float16");
  if (o.precision == Precision::kBFloat16) flags.push_back("--bfloat16");
  if (o.precision == Precision::kAmp) flags.push_back("--amp");
  if (o.tolerance) flags.insert(flags.end(), {"--tolerance", fmt::format("{}", *o.tolerance)});
  if (!o.patches) flags.push_back("--no-patches");
  if (!o.cudagraphs) flags.push_back("--disable-cudagraphs");
  if (o.cosine) flags.push_back("--cosine");
  if (!disabled.empty()) flags.insert(flags.end(), {"--disable-switches", join(disabled, ",")});
  return flags;
}

}  // namespace

SearchedSwitches searched_switches(const std::string& backend, Mode mode,
                                   const std::string& device_type,
                                   const std::vector<std::string>& patches) {
  SearchedSwitches out;
  for (const auto& s : applicable_switches(*make_backend(backend), mode, device_type)) {
    out.names.push_back(s.name);
    if (!s.requires_switch.empty()) out.requires_switch[s.name] = s.requires_switch;
  }
  for (const auto& p : patches) out.names.push_back(patch_switch(p));
  return out;
}

std::optional<BisectReport> run_bisect(const RunOptions& options) {
  if (options.only.size() != 1) throw UsageError("bisect needs one model: --only NAME");
  if (options.devices.size() != 1) throw UsageError("bisect runs on one device: --devices cpu|cuda[:N]");
  const std::string suites_dir =
      fs::absolute(options.suites_dir.empty() ? default_suites_dir() : options.suites_dir).string();
  ZooCatalog catalog = ZooCatalog::scan(options.zoo_dir);
  std::vector<std::string> suites =
      options.suite == "all" ? catalog.suites() : std::vector<std::string>{options.suite};
  auto configs = load_suite_configs(suites_dir, suites);
  const std::string device = options.devices[0];
  const std::string device_type = device.substr(0, device.find(':'));
  auto selected = select_models(catalog, options, configs, device_type);
  if (selected.size() != 1)
    throw UsageError(fmt::format("--only {} names {} models; add --suite", options.only[0],
                                 selected.size()));
  const ZooEntry entry = selected[0].entry;
  if (selected[0].skip_reason)
    throw UsageError(fmt::format("{} is skipped by its suite: {}", entry.name,
                                 *selected[0].skip_reason));
  require_known_backend(options.backend);
  const SuiteConfig& config = configs.at(entry.suite);
  auto patches = options.patches ? config.patches_for(entry.name, options.mode)
                                 : std::vector<std::string>{};
  SearchedSwitches searched = searched_switches(options.backend, options.mode, device_type, patches);

  std::signal(SIGINT, on_bisect_interrupt);
  std::signal(SIGTERM, on_bisect_interrupt);
  fs::create_directories(options.output_directory);
  std::FILE* quiet = std::fopen("/dev/null", "w");
  int step_number = 0;
  RunStep run_step = [&](const std::vector<std::string>& disabled) {
    if (g_interrupted.load()) throw Interrupted{};
    ++step_number;
    RunOptions step = options;
    step.accuracy = true;
    step.performance = false;
    step.backends = {options.backend};
    step.child_flags = step_flags(options, suites_dir, disabled);
    WorkerPoolSettings settings;
    settings.devices = {device};
    settings.logs_dir =
        (fs::path(options.output_directory) / "logs" / fmt::format("step{:02d}", step_number))
            .string();
    settings.timeout_s = options.timeout_s;
    settings.cuda_visible_devices = std::getenv("CUDA_VISIBLE_DEVICES");
    std::fprintf(stderr, "bisect step %d: off %s ...\n", step_number,
                 disabled.empty() ? "(none)" : join(disabled, ",").c_str());
    Progress progress(1, false, quiet ? quiet : stderr);
    std::vector<ResultRow> rows;
    run_jobs({ChildJob{entry, step}}, settings, configs, progress, g_interrupted,
             [&](const ChildJob&, const std::vector<ResultRow>& delivered) {
               rows = delivered;
               return true;
             });
    if (g_interrupted.load()) throw Interrupted{};
    BisectStep result;
    result.disabled = disabled;
    for (const auto& row : rows) {
      if (row.kind != ExperimentKind::kAccuracy) continue;
      result.status = cell(row, columns::kAccuracy);
      result.max_abs = cell(row, columns::kMaxAbs);
      result.reason = cell(row, columns::kReason);
      result.log = cell(row, columns::kLog);
      break;
    }
    if (result.status.empty()) result.status = "infra_error";
    std::fprintf(stderr, "bisect step %d: %s%s\n", step_number, result.status.c_str(),
                 result.max_abs.empty() ? "" : (", max_abs " + result.max_abs).c_str());
    return result;
  };

  BisectReport report;
  try {
    report = bisect_switches(searched.names, searched.requires_switch, run_step);
  } catch (const Interrupted&) {
    if (quiet) std::fclose(quiet);
    std::printf("interrupted: the bisect of %s stopped before it finished\n", entry.name.c_str());
    return std::nullopt;
  }
  if (quiet) std::fclose(quiet);
  report.model = entry.name;
  report.suite = entry.suite;
  report.backend = options.backend;
  report.device = device;
  report.mode = mode_name(options.mode);
  const std::string json_path = (fs::path(options.output_directory) / "bisect.json").string();
  write_file_atomically(json_path, bisect_report_json(report).dump(2) + "\n");
  std::fputs(format_bisect_report(report).c_str(), stdout);
  std::printf("record: %s\n", json_path.c_str());
  return report;
}

int execute_bisect(const RunOptions& options) { return run_bisect(options) ? 0 : 130; }

namespace {

// Statuses a switch of the backend cannot change: the eager side or the model itself failed.
bool failed_before_the_backend(const std::string& status) {
  return starts_with(status, "eager_") || status == "model_fail_to_load" ||
         status == "infra_error";
}

// A folder name for a model, backend and device ("cuda:1" -> "cuda_1").
std::string path_safe(std::string text) {
  std::replace(text.begin(), text.end(), ':', '_');
  return text;
}

// The precision a row's dtype cell names (precision_name's inverse), or nullopt.
std::optional<Precision> precision_named(const std::string& dtype) {
  for (Precision p : {Precision::kFloat32, Precision::kFloat16, Precision::kBFloat16, Precision::kAmp})
    if (precision_name(p) == dtype) return p;
  return std::nullopt;
}

}  // namespace

int execute_bisect_from_results(const RunOptions& base, const std::string& results_file) {
  const report::ResultFile file = report::load_result_file(results_file);
  if (file.kind != ExperimentKind::kAccuracy)
    throw UsageError(results_file + " holds performance rows: bisect reads an accuracy file");
  struct Entry {
    std::string model, backend, device, status, verdict, culprit, fix;
    std::size_t steps = 0;
  };
  std::vector<Entry> entries;
  nlohmann::json records = nlohmann::json::array();
  for (const ResultRow& row : file.rows) {
    Entry e{cell(row, columns::kName), cell(row, columns::kBackend), cell(row, columns::kDev),
            cell(row, columns::kAccuracy)};
    if (is_passing(row.status())) continue;
    if (failed_before_the_backend(e.status)) {
      e.verdict = "not bisected: the eager side or the model failed before the backend ran";
      entries.push_back(e);
      continue;
    }
    RunOptions options = base;
    options.only = {e.model};
    if (const std::string& suite = cell(row, columns::kSuite); !suite.empty()) options.suite = suite;
    options.backend = e.backend;
    options.backends = {e.backend};
    options.devices = {e.device};
    options.mode = cell(row, columns::kMode) == "training" ? Mode::kTraining : Mode::kInference;
    const auto precision = precision_named(cell(row, columns::kDtype));
    if (!precision)
      throw UsageError(fmt::format("{}: {}'s dtype '{}' is not one bisect can run", results_file,
                                   e.model, cell(row, columns::kDtype)));
    options.precision = *precision;
    options.output_directory = (fs::path(base.output_directory) /
                                path_safe(e.model + "." + e.backend + "." + e.device))
                                   .string();
    std::printf("== bisect %s (%s, %s): %s\n", e.model.c_str(), e.backend.c_str(),
                e.device.c_str(), e.status.c_str());
    std::fflush(stdout);
    const std::optional<BisectReport> report = run_bisect(options);
    if (!report) return 130;
    e.verdict = verdict_name(report->verdict);
    e.culprit = join(report->culprit, " + ");
    e.fix = join(report->fix, " + ");
    e.steps = report->steps.size();
    records.push_back(bisect_report_json(*report));
    entries.push_back(e);
  }
  std::vector<std::vector<std::string>> table;
  for (const auto& e : entries) {
    table.push_back({e.model, e.backend, e.device, e.status, e.verdict, e.culprit, e.fix,
                     e.steps ? std::to_string(e.steps) : ""});
  }
  std::printf("\nbisect of %s: %zu failing rows\n", results_file.c_str(), entries.size());
  if (!table.empty()) {
    std::fputs(report::markdown_table({"model", "backend", "device", "status", "verdict", "culprit",
                                       "fix", "steps"},
                                      table)
                   .c_str(),
               stdout);
  }
  const std::string summary = (fs::path(base.output_directory) / "bisect-summary.json").string();
  write_file_atomically(summary, nlohmann::json{{"results_file", results_file}, {"bisects", records}}.dump(2) + "\n");
  std::printf("record: %s\n", summary.c_str());
  return 0;
}

}  // namespace zoobench
