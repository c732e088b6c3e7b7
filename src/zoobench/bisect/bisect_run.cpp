// One model's bisect: the switches to search, each step as a `zoobench run` child, the report.
#include "zoobench/bisect/bisect_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <set>

#include "zoobench/backends/switches.h"
#include "zoobench/bisect/compiler_bisector.h"
#include "zoobench/bisect/divergence.h"
#include "zoobench/python/embedded_python.h"
#include "zoobench/report/markdown.h"
#include "zoobench/results/columns.h"
#include "zoobench/results/result_files.h"
#include "zoobench/runner/child_device.h"
#include "zoobench/runner/child_process.h"
#include "zoobench/runner/child_rows.h"
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
  std::vector<std::string> flags = {"--suites-dir", suites_dir};
  if (o.mode == Mode::kTraining) flags.push_back("--training");
  if (o.precision == Precision::kFloat16) flags.push_back("--float16");
  if (o.precision == Precision::kBFloat16) flags.push_back("--bfloat16");
  if (o.precision == Precision::kAmp) flags.push_back("--amp");
  if (o.tolerance) flags.insert(flags.end(), {"--tol", fmt::format("{}", *o.tolerance)});
  if (!o.patches) flags.push_back("--no-patches");
  if (!o.suite_switches) flags.push_back("--ignore-suite-switches");
  if (!o.cudagraphs) flags.push_back("--disable-cudagraphs");
  if (o.cosine) flags.push_back("--cosine");
  if (!disabled.empty()) flags.insert(flags.end(), {"--disable-switches", join(disabled, ",")});
  if (!o.save_outputs.empty()) flags.insert(flags.end(), {"--save-outputs", o.save_outputs});
  return flags;
}

// The shared cells of a check's accuracy row (infra_error when the child wrote none) and its
// wall time since `started` (its child process, start to row).
void fill_outcome(CheckOutcome& outcome, const std::optional<ResultRow>& row,
                  std::chrono::steady_clock::time_point started) {
  outcome.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (row) {
    outcome.status = cell(*row, columns::kAccuracy);
    outcome.max_abs = cell(*row, columns::kMaxAbs);
    outcome.reason = cell(*row, columns::kReason);
    outcome.log = cell(*row, columns::kLog);
  }
  if (outcome.status.empty()) outcome.status = "infra_error";
}

// Statuses no switch or stage of the backend can change: the eager side or the model itself failed.
bool failed_before_the_backend(const std::string& status) {
  return starts_with(status, "eager_") || status == "model_fail_to_load" ||
         status == "infra_error";
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

namespace {

std::FILE* quiet_stream() {
  static std::FILE* quiet = std::fopen("/dev/null", "w");
  return quiet ? quiet : stderr;
}

// One accuracy check of `entry` in a `zoobench run` child (the worker pool's isolation, timeout
// and crash rows); its accuracy row, or nullopt when it wrote none. Throws Interrupted.
std::optional<ResultRow> run_accuracy_child(const ZooEntry& entry, const RunOptions& step,
                                            const std::map<std::string, SuiteConfig>& configs,
                                            const std::string& device, const std::string& logs_dir,
                                            double timeout_s) {
  if (g_interrupted.load()) throw Interrupted{};
  WorkerPoolSettings settings;
  settings.devices = {device};
  settings.logs_dir = logs_dir;
  settings.timeout_s = timeout_s;
  settings.cuda_visible_devices = std::getenv("CUDA_VISIBLE_DEVICES");
  Progress progress(1, false, quiet_stream());
  std::vector<ResultRow> rows;
  const JobPlan job =
      plan_job(step, entry, configs.at(entry.suite), step.backend, step.accuracy, step.performance);
  run_jobs({job}, settings, progress, g_interrupted,
           [&](const JobPlan&, const std::vector<ResultRow>& delivered) {
             rows = delivered;
             return true;
           });
  if (g_interrupted.load()) throw Interrupted{};
  for (const auto& row : rows) {
    if (row.kind == ExperimentKind::kAccuracy) return row;
  }
  return std::nullopt;
}

// Backends whose prepared model is a TorchScript module: its submodules can run alone.
std::optional<std::string> why_no_submodules(const std::string& backend, Mode mode) {
  if (mode != Mode::kInference) return "searched for inference only";
  return make_backend(backend)->submodules_refusal();
}

// The `zoobench bisect --capture-children` child that writes the children `parent` calls (the
// model's own when `parent` is empty) into `dir`, with the precision and patches of the check.
std::vector<std::string> capture_argv(const RunOptions& options, const ZooEntry& entry,
                                      const std::string& suites_dir, const std::string& device,
                                      const std::string& parent, const fs::path& dir) {
  std::vector<std::string> argv = {current_executable(), "bisect", "--capture-children",
                                   parent.empty() ? "." : parent, "--capture-into", dir.string(),
                                   "--zoo", options.zoo_dir, "--suites-dir", suites_dir,
                                   "--suite", entry.suite, "--only", entry.name,
                                   "--devices", device};
  if (!options.patches) argv.push_back("--no-patches");
  if (options.precision == Precision::kFloat16) argv.push_back("--float16");
  if (options.precision == Precision::kBFloat16) argv.push_back("--bfloat16");
  return argv;
}

// The children a capture child listed in its level.json, each a repro folder or why it is none.
std::vector<SubmoduleCandidate> read_level(const fs::path& level_file) {
  std::vector<SubmoduleCandidate> candidates;
  const auto level = nlohmann::json::parse(read_text_file(level_file.string()));
  for (const auto& item : level.at("children")) {
    candidates.push_back({item.value("path", ""), item.value("type", ""), item.value("model", ""),
                          item.value("folder", ""), item.value("skipped", ""),
                          item.value("calls", 0)});
  }
  return candidates;
}

// One level of the search: the children of `parent`, captured into `dir` by a child process
// (a crash while capturing ends that child, not the bisect). Throws Interrupted.
std::vector<SubmoduleCandidate> capture_level(const RunOptions& options, const ZooEntry& entry,
                                              const std::string& suites_dir,
                                              const std::string& device, const std::string& parent,
                                              const fs::path& dir) {
  remove_tree(dir.string());
  fs::create_directories(dir);
  const std::vector<std::string> argv =
      capture_argv(options, entry, suites_dir, device, parent, dir);
  const std::string log = (dir / "capture.log").string();
  std::fprintf(stderr, "bisect: capturing the children of %s ...\n",
               parent.empty() ? "the model" : parent.c_str());
  ChildOutcome outcome = run_child(argv, log, options.timeout_s, g_interrupted);
  if (outcome.kind == ChildOutcome::Kind::kInterrupted || g_interrupted.load()) throw Interrupted{};
  const fs::path level_file = dir / "level.json";
  if (outcome.kind != ChildOutcome::Kind::kExited || outcome.exit_code != 0 ||
      !fs::exists(level_file))
    throw std::runtime_error(fmt::format("capturing the children of '{}' failed: {}", parent,
                                         child_failure_reason(outcome, log, options.timeout_s)));
  return read_level(level_file);
}

// The check of one captured child alone: its repro folder's zoo as the zoo, the tolerance the
// whole model was checked with, and its outputs saved next to it for `zoobench same`.
RunOptions check_alone_options(const RunOptions& options, const std::string& suites_dir,
                               const std::string& tolerance, const SubmoduleCandidate& candidate) {
  RunOptions step = options;
  step.zoo_dir = (fs::path(candidate.folder).parent_path().parent_path()).string();
  step.only = {candidate.model};
  step.accuracy = true;
  step.performance = false;
  step.backends = {options.backend};
  if (!tolerance.empty()) step.tolerance = std::stod(tolerance);
  step.save_outputs = (fs::path(candidate.folder) / "outputs").string();
  step.child_flags = step_flags(step, suites_dir, {});
  return step;
}

// The commands that reproduce the divergence found in the repro `folder`: its check again, then
// the verdict from the outputs that check saved.
std::string divergence_repro_command(const RunOptions& options, const ZooEntry& entry,
                                     const std::string& suites_dir, const std::string& device,
                                     const std::string& tolerance, const fs::path& folder) {
  std::string command = fmt::format(
      "zoobench run --zoo {} --suites-dir {} --suite {} --only '{}' --accuracy --backend {} "
      "--devices {}{}",
      folder.parent_path().parent_path().string(), suites_dir, entry.suite,
      folder.filename().string(), options.backend, device,
      tolerance.empty() ? "" : " --tol " + tolerance);
  // What the check saved: the verdict again, from the files alone.
  const fs::path outputs = folder / "outputs" / entry.suite / folder.filename();
  command +=
      fmt::format("\nzoobench same {} {} --fp64 {}{}", (outputs / "eager.pt").string(),
                  (outputs / (options.backend + ".pt")).string(), (outputs / "float64.pt").string(),
                  tolerance.empty() ? "" : " --tol " + tolerance);
  return command;
}

// Only the repro is kept: every other child written out on the way is a model-sized folder.
// (Listed first, removed after: no folder changes under an open iterator.)
void remove_all_but_repro(const fs::path& root, const std::string& suite,
                          const std::string& repro) {
  std::vector<fs::path> written;
  for (const auto& level : fs::directory_iterator(root)) {
    const fs::path models = level.path() / "zoo" / suite;
    if (!fs::is_directory(models)) continue;
    for (const auto& model : fs::directory_iterator(models)) {
      if (model.path() != fs::path(repro)) written.push_back(model.path());
    }
  }
  for (const auto& folder : written) remove_tree(folder.string());
}

// The divergence search of one failing model: each level's children captured by a
// `zoobench bisect --capture-children` child, each child checked by a `zoobench run` child.
DivergenceReport search_submodules(const RunOptions& options, const ZooEntry& entry,
                                   const std::string& suites_dir, const std::string& device,
                                   const std::string& tolerance) {
  const fs::path root = fs::path(options.output_directory) / "submodules";
  int level_number = 0, check_number = 0;
  CaptureLevel capture = [&](const std::string& parent) {
    if (g_interrupted.load()) throw Interrupted{};
    return capture_level(options, entry, suites_dir, device, parent,
                         root / fmt::format("level{:02d}", ++level_number));
  };
  auto configs = load_suite_configs(suites_dir, {entry.suite});
  CheckSubmodule check = [&](const SubmoduleCandidate& candidate) {
    const RunOptions step = check_alone_options(options, suites_dir, tolerance, candidate);
    std::fprintf(stderr, "bisect: %s alone ...\n", candidate.path.c_str());
    const ZooEntry repro{entry.suite, candidate.model,
                         (fs::path(candidate.folder) / "manifest.json").string()};
    const auto started = std::chrono::steady_clock::now();
    const auto row = run_accuracy_child(
        repro, step, configs, device,
        (root / "logs" / fmt::format("check{:02d}", ++check_number)).string(), options.timeout_s);
    SubmoduleCheck result;
    result.candidate = candidate;
    fill_outcome(result, row, started);
    if (row) {
      result.rmse_res = cell(*row, columns::kRmseRes);
      result.rmse_ref = cell(*row, columns::kRmseRef);
    }
    std::fprintf(stderr, "bisect: %s alone: %s\n", candidate.path.c_str(),
                 result.summary().c_str());
    return result;
  };
  DivergenceReport report;
  try {
    report = find_first_divergence(capture, check);
  } catch (const std::runtime_error& e) {
    report.note = e.what();
    return report;
  }
  if (report.verdict == DivergenceVerdict::kFound) {
    report.repro_command = divergence_repro_command(options, entry, suites_dir, device, tolerance,
                                                    fs::path(report.repro));
  }
  remove_all_but_repro(root, entry.suite, report.repro);
  return report;
}

// Inductor's own compiler bisector on a failing Inductor model (bisect/compiler_bisector.h),
// or why it did not run. Its checks are this bisect's steps with every switch on and the
// backend a slot the driver fills ({backend}: compile:eager, ..., the user's inductor[:MODE]),
// through the same child command as a step's worker (child_arguments). Throws Interrupted.
CompilerBisectorReport bisect_inductor(const RunOptions& options, const ZooEntry& entry,
                                       const std::string& suites_dir, const std::string& device,
                                       const BisectReport& switches) {
  CompilerBisectorReport report;
  if (!uses_inductor(options.backend)) {
    report.note = options.backend + " does not compile with Inductor";
    return report;
  }
  report.status = CompilerBisectorStatus::kNotRun;
  if (switches.verdict == BisectVerdict::kNothingToBisect) {
    report.note = "the model passes";
    return report;
  }
  if (!options.bisect_compiler) {
    report.note = "--no-compiler-bisector";
    return report;
  }
  if (failed_before_the_backend(switches.steps.front().status)) {
    report.note = "the eager side or the model failed (" + switches.steps.front().status +
                  "), not the compiled one";
    return report;
  }
  RunOptions check = options;
  check.child_flags = step_flags(options, suites_dir, {});
  const JobPlan job =
      plan_job(check, entry, SuiteConfig(entry.suite), options.backend, true, false);
  const ChildDevice child = child_device_for(device, std::getenv("CUDA_VISIBLE_DEVICES"));
  CompilerBisectorRequest request;
  request.child_argv = {current_executable()};
  for (auto& argument : child_arguments(job, child.device, "{rows}", "{log}", ""))
    request.child_argv.push_back(std::move(argument));
  // The driver fills the backend in for each of its checks.
  const auto backend = std::find(request.child_argv.begin(), request.child_argv.end(), "--backend");
  if (backend != request.child_argv.end() && backend + 1 != request.child_argv.end())
    *(backend + 1) = "{backend}";
  request.child_environment = child.environment;
  request.inductor_backend = options.backend;
  request.timeout_s = options.timeout_s;
  request.work_dir = (fs::path(options.output_directory) / "logs" / "compiler_bisector").string();
  request.python = python::interpreter_path();
  request.tools_dir = python::tools_directory();
  std::fprintf(stderr, "bisect: Inductor's compiler bisector (log: %s/driver.log) ...\n",
               request.work_dir.c_str());
  std::optional<CompilerBisectorReport> result = run_compiler_bisector(request, g_interrupted);
  if (!result) throw Interrupted{};
  return *result;
}

// What one bisect works on: the model, its suite's configs, and the switches searched.
struct BisectTarget {
  std::string suites_dir, device;
  std::map<std::string, SuiteConfig> configs;
  ZooEntry entry;
  SearchedSwitches searched;
  SuiteConfig::SwitchesOff suite_off;
};

// The one model `options` names and the switches its bisect searches. Throws UsageError.
BisectTarget bisect_target(const RunOptions& options) {
  if (options.only.size() != 1) throw UsageError("bisect needs one model: --only NAME");
  if (options.devices.size() != 1)
    throw UsageError("bisect runs on one device: --devices cpu|cuda[:N]");
  BisectTarget target;
  target.suites_dir =
      fs::absolute(options.suites_dir.empty() ? default_suites_dir() : options.suites_dir).string();
  ZooCatalog catalog = ZooCatalog::scan(options.zoo_dir);
  std::vector<std::string> suites =
      options.suite == "all" ? catalog.suites() : std::vector<std::string>{options.suite};
  target.configs = load_suite_configs(target.suites_dir, suites);
  target.device = options.devices[0];
  const std::string device_type = target.device.substr(0, target.device.find(':'));
  auto selected = select_models(catalog, options, target.configs, device_type);
  if (selected.size() != 1)
    throw UsageError(fmt::format("--only {} names {} models; add --suite", options.only[0],
                                 selected.size()));
  target.entry = selected[0].entry;
  const ZooEntry& entry = target.entry;
  if (selected[0].skip_reason)
    throw UsageError(fmt::format("{} is skipped by its suite: {}", entry.name,
                                 *selected[0].skip_reason));
  require_known_backend(options.backend);
  const SuiteConfig& config = target.configs.at(entry.suite);
  auto patches = options.patches ? config.patches_for(entry.name, options.mode)
                                 : std::vector<std::string>{};
  target.searched = searched_switches(options.backend, options.mode, device_type, patches);
  SearchedSwitches& searched = target.searched;
  // The switches the suite keeps off for this model are off in every step (the children apply
  // them as `zoobench run` does), so searching them, or the ones that need them (fold_frozen
  // without freeze does nothing), would find nothing.
  target.suite_off = options.suite_switches ? config.switches_off(entry.name, options.backend)
                                            : SuiteConfig::SwitchesOff{};
  std::set<std::string> unsearched(target.suite_off.switches.begin(),
                                   target.suite_off.switches.end());
  for (bool grew = !unsearched.empty(); grew;) {
    grew = false;
    for (const auto& [name, needed] : searched.requires_switch)
      if (unsearched.count(needed) && unsearched.insert(name).second) grew = true;
  }
  searched.names.erase(
      std::remove_if(searched.names.begin(), searched.names.end(),
                     [&](const std::string& n) { return unsearched.count(n) > 0; }),
      searched.names.end());
  return target;
}

// Step `step_number` of the switch search: the model with `disabled` off, checked in a
// `zoobench run` child. Throws Interrupted.
BisectStep run_switch_step(const RunOptions& options, const BisectTarget& target, int step_number,
                           const std::vector<std::string>& disabled) {
  RunOptions step = options;
  step.accuracy = true;
  step.performance = false;
  step.backends = {options.backend};
  step.child_flags = step_flags(options, target.suites_dir, disabled);
  std::fprintf(stderr, "bisect step %d: off %s ...\n", step_number,
               disabled.empty() ? "(none)" : join(disabled, ",").c_str());
  const auto started = std::chrono::steady_clock::now();
  const auto row = run_accuracy_child(
      target.entry, step, target.configs, target.device,
      (fs::path(options.output_directory) / "logs" / fmt::format("step{:02d}", step_number))
          .string(),
      options.timeout_s);
  BisectStep result;
  result.disabled = disabled;
  fill_outcome(result, row, started);
  if (row) result.tolerance = cell(*row, columns::kTolerance);
  std::fprintf(stderr, "bisect step %d: %s\n", step_number, result.summary().c_str());
  return result;
}

}  // namespace

std::optional<BisectReport> run_bisect(const RunOptions& options) {
  const BisectTarget target = bisect_target(options);
  const ZooEntry& entry = target.entry;
  const std::string& suites_dir = target.suites_dir;
  const std::string& device = target.device;

  std::signal(SIGINT, on_bisect_interrupt);
  std::signal(SIGTERM, on_bisect_interrupt);
  fs::create_directories(options.output_directory);
  int step_number = 0;
  RunStep run_step = [&](const std::vector<std::string>& disabled) {
    return run_switch_step(options, target, ++step_number, disabled);
  };

  BisectReport report;
  const std::string json_path = (fs::path(options.output_directory) / "bisect.json").string();
  // Written once the switches are known and again at the end: a crash or an interrupt in the
  // longer searches after it keeps what the switch search found.
  auto write_record = [&] {
    report.model = entry.name;
    report.suite = entry.suite;
    report.backend = options.backend;
    report.device = device;
    report.mode = mode_name(options.mode);
    report.suite_switches_off = target.suite_off.switches;
    report.suite_switches_reason = target.suite_off.reason;
    write_file_atomically(json_path, bisect_report_json(report).dump(2) + "\n");
  };
  try {
    report = bisect_switches(target.searched.names, target.searched.requires_switch, run_step);
    if (report.verdict == BisectVerdict::kNothingToBisect) {
      report.divergence.note = "the model passes";
    } else if (!options.bisect_submodules) {
      report.divergence.note = "--no-submodules";
    } else if (auto why = why_no_submodules(options.backend, options.mode)) {
      report.divergence.note = *why;
    } else {
      report.divergence.note = "not finished: the search was still running";
      write_record();
      report.divergence =
          search_submodules(options, entry, suites_dir, device, report.steps.front().tolerance);
    }
    if (uses_inductor(options.backend)) {
      report.compiler_bisector.status = CompilerBisectorStatus::kNotRun;
      report.compiler_bisector.note = "not finished: it was still running";
      write_record();
    }
    report.compiler_bisector = bisect_inductor(options, entry, suites_dir, device, report);
  } catch (const Interrupted&) {
    std::printf("interrupted: the bisect of %s stopped before it finished%s\n", entry.name.c_str(),
                fs::exists(json_path) ? ("; what it found so far: " + json_path).c_str() : "");
    return std::nullopt;
  }
  write_record();
  std::fputs(format_bisect_report(report).c_str(), stdout);
  std::printf("record: %s\n", json_path.c_str());
  return report;
}

int execute_bisect(const RunOptions& options) { return run_bisect(options) ? 0 : 130; }

namespace {

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
  const ResultFile file = load_result_file(results_file);
  if (file.kind != ExperimentKind::kAccuracy)
    throw UsageError(results_file + " holds performance rows: bisect reads an accuracy file");
  struct Entry {
    std::string model, backend, device, status, verdict, culprit, fix, diverges, compiler_bisector;
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
    // The first submodule that fails alone; otherwise the search's verdict, when it ran.
    const DivergenceReport& d = report->divergence;
    e.diverges = d.verdict == DivergenceVerdict::kFound ? d.path
                 : d.verdict == DivergenceVerdict::kNoChildFailsAlone ? "(no child alone)"
                                                                       : "";
    e.steps = report->steps.size();
    e.compiler_bisector = compiler_bisector_summary(report->compiler_bisector);
    records.push_back(bisect_report_json(*report));
    entries.push_back(e);
  }
  std::vector<std::vector<std::string>> table;
  for (const auto& e : entries) {
    table.push_back({e.model, e.backend, e.device, e.status, e.verdict, e.culprit, e.fix,
                     e.diverges, e.steps ? std::to_string(e.steps) : "", e.compiler_bisector});
  }
  std::printf("\nbisect of %s: %zu failing rows\n", results_file.c_str(), entries.size());
  if (!table.empty()) {
    std::fputs(report::markdown_table({"model", "backend", "device", "status", "verdict", "culprit",
                                       "fix", "first diverging submodule", "steps",
                                       "compiler bisector"},
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
