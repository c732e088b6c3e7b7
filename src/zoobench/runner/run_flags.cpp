// `zoobench run`'s option table and its second step. Flag names follow PyTorch's
// benchmarks/dynamo runners.
#include "zoobench/runner/run_flags.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "zoobench/backends/backend.h"
#include "zoobench/backends/switches.h"
#include "zoobench/boundary/boundary.h"
#include "zoobench/util/cli_checks.h"
#include "zoobench/util/cpu_affinity.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/json_flag.h"
#include "zoobench/util/log.h"
#include "zoobench/util/text.h"
#include "zoobench/zoo/export_request.h"

namespace zoobench {

namespace {

// Where the models come from: the zoo, and what a run may export into it.
void add_zoo_flags(CLI::App& c, RunFlags& f) {
  RunOptions& o = f.options;
  c.add_option("--zoo", o.zoo_dir,
               "the zoo: what tools/export_zoo.py, or this run on demand, exported")
      ->capture_default_str();
  c.add_flag("--no-export", f.no_export,
             "run only what the zoo holds: a model it lacks (or lacks an artifact of) is an "
             "error, not exported");
  c.add_option("--batch-size", f.batch_size,
               "batch size of every model (upstream's flag): the zoo keeps these entries in "
               "ZOO/batch-N and exports them when missing (default: each list's)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  c.add_option("--zoo-max-gb", o.zoo_max_gb,
               "keep the zoo under G gigabytes: the folders of models whose rows are all "
               "written are deleted, least recently finished first (--resume runs none again)")
      ->check(finite_number(0, /*inclusive=*/false));
  c.add_option("--torchbench-dir", o.torchbench_dir,
               "a TorchBench checkout (pytorch/benchmark) for exporting torchbench models")
      ->check(CLI::ExistingDirectory);
}

// Which models: the suite, the selection, the yaml's skips.
void add_selection_flags(CLI::App& c, RunFlags& f) {
  RunOptions& o = f.options;
  c.add_option("--suites-dir", o.suites_dir,
               "folder with <suite>.yaml (default: ./suites or the source tree's)")
      ->check(CLI::ExistingDirectory);
  c.add_option("--suite", o.suite, "torchbench, huggingface, timm_models, demo, ... or all")
      ->capture_default_str();
  c.add_option("--only", o.only,
               "run only this model (repeatable); one model runs in this process");
  c.add_option("-k,--filter", o.filters, "regex a model name must match (repeatable)");
  c.add_option("-x,--exclude", o.excludes, "regex of models to leave out (repeatable)");
  c.add_option("--exclude-exact", o.exclude_exact, "a model to leave out, by its exact name (repeatable)");
  c.add_flag("--no-skip", o.no_skip,
             "run the models the suite's yaml skips (skip.all, skip.device, skip.test, "
             "only_training/only_inference), as upstream's --no-skip; accuracy.skip.large_models "
             "still gives pass_due_to_skip");
  c.add_option("--total-partitions", o.total_partitions, "split the models into N partitions")
      ->capture_default_str();
  c.add_option("--partition-id", o.partition_id, "run partition I (0-based)")
      ->capture_default_str();
}

// Which backends and how they compile.
void add_backend_flags(CLI::App& c, RunFlags& f) {
  RunOptions& o = f.options;
  c.add_option(
       "--backend", f.backends,
       "one or several (comma-separated): eager, jit, cudagraphs, aot_inductor, python_eager, or a "
       "torch.compile backend NAME[:MODE] (inductor, inductor:reduce-overhead, aot_eager, ...); "
       "`zoobench list --backends` shows them")
      ->capture_default_str();
  c.add_flag("--inductor", f.inductor, "upstream's spelling of --backend inductor");
  c.add_option("--compile-options", f.compile_options,
               "torch.compile backends: torch.compile's options as a JSON object, e.g. "
               "'{\"triton.cudagraphs\": false}'");
  c.add_flag(
      "--keep-compile-cache", o.keep_compile_cache,
      "torch.compile backends: use Inductor's and Triton's own caches, which outlive the run "
      "(default: a cache of the run's own, shared by its model processes, removed at its end)");
  c.add_flag("--cold-start-latency,--cold_start_latency", f.cold_start_latency,
             "upstream's flag: every compile is cold, in a fresh cache of its own");
  c.add_flag("--ci", f.ci,
             "upstream's CI run: compiles are cold (as --cold-start-latency); the run prints "
             "which of upstream's other --ci effects it applies; gate the exit status with "
             "--expected FILE as upstream's CI gates with check_accuracy.py");
  c.add_option("--eager-reference", o.eager_reference,
               "what eager, the float64 golden run and the speedup's baseline run: python (the "
               "model's own module, as upstream), torchscript (eval.pt in the TorchScript "
               "interpreter), auto (python when every backend is of the torch.compile family: "
               "such a run exports no TorchScript)")
      ->check(CLI::IsMember({"auto", "python", "torchscript"}))
      ->capture_default_str();
  c.add_flag("--freezing", o.freezing,
             "inductor, inference: Inductor's freezing (torch._inductor.config.freezing), as "
             "upstream's --freezing");
  c.add_flag("--dynamic-shapes", o.dynamic_shapes,
             "torch.compile backends: dynamo assumes no size static "
             "(torch._dynamo.config.assume_static_by_default = False), as upstream's flag");
  c.add_flag("--channels-last", o.channels_last,
             "4-D weights and inputs in channels-last memory format, for eager and compiled "
             "alike, as upstream's flag (its timm runner)");
  c.add_flag("--disable-cudagraphs", f.disable_cudagraphs,
             "on CUDA, do not run compiled backends in CUDA graphs");
  c.add_flag("--no-patches", f.no_patches, "do not apply the models' patches");
  c.add_flag("--pause-pipelines", o.pause_pipelines,
             "with several model pipelines on a device, pause the others (SIGSTOP) while a "
             "model is timed, so that the timing has the CPUs as alone as the device (default: "
             "they run on: on the launch-bound models measured, pausing changed no eager latency; "
             "docs/performance.md)");
  c.add_flag_callback(
      "--no-retime-unstable", [&o] { o.retime_unstable = false; },
      "with several model pipelines on a device, keep a timing that came out unstable "
      "beside the others as it is (default: it is timed once more with the others paused, "
      "and the row keeps both spreads)");
  c.add_option("--disable-switches", f.disabled_switches,
               "turn these optimization switches off (comma-separated): a backend's steps "
               "(jit: freeze, fold_frozen, optimize_for_inference, executor, ...; inductor: "
               "Inductor config steps; aot_inductor: cudagraphs, narrowing_memo) or a model's "
               "patch, patch:NAME; each backend's: `zoobench list --switches --backend NAME`");
  c.add_flag("--ignore-suite-switches", f.ignore_suite_switches,
             "run with the switches the suite turns off for some models (zoobench.switches_off "
             "in <suite>.yaml) on, to see or bisect the fault they avoid");
}

// Where and how it runs: mode, precision, devices, workers, time.
void add_execution_flags(CLI::App& c, RunFlags& f) {
  RunOptions& o = f.options;
  c.add_flag("--training", f.training, "fwd + loss + bwd + optimizer step");
  c.add_flag("--inference", f.inference, "forward only (default)");
  c.add_option("--devices,--device,-d", f.devices,
               "cpu, cuda, cuda:N; several (repeated or comma-separated): one worker per device. "
               "Each device once, and only devices this machine has; the CPU twice or more "
               "only with --cpu-affinity, which gives each CPU worker its own CPUs")
      ->delimiter(',')
      ->capture_default_str();
  c.add_option("--jobs", o.jobs,
               "model pipelines at once per device: exports, loads, compiles and checks overlap, "
               "and each timed section has the device alone (default: from the CPUs and the "
               "GPU's memory, printed at the start; 1 on the CPU)")
      ->check(CLI::Range(1, 64));
  c.add_option("--accuracy-workers", o.accuracy_workers,
               "accuracy checks at once per device (they are not timed); all of them run "
               "first, then the performance runs, one at a time per device")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  c.add_option(
      "--cpu-affinity", f.cpu_affinity,
      "CPUs the model processes run on, taskset's syntax (4 or 2-5,8); with several workers "
      "each gets an equal consecutive share");
  c.add_flag("--float32", f.float32, "float32 (default)");
  c.add_flag("--float16", f.float16, "cast model and float inputs to float16");
  c.add_flag("--bfloat16", f.bfloat16, "cast model and float inputs to bfloat16");
  c.add_flag("--amp", f.amp, "autocast (float16 on CUDA, bfloat16 on CPU)");
  c.add_option("--timeout", o.timeout_s, "seconds per model before its process is killed (0: none)")
      ->check(finite_number(0))
      ->capture_default_str();
  c.add_option("--time-budget", o.time_budget_s,
               "seconds the run may take: a job starts only while it can end within them, "
               "judged by the rows' job_s (its model's check with that backend, scaled by the "
               "backend's timing-to-check ratio); the jobs left over are listed for --resume "
               "(0: no budget)")
      ->check(finite_number(0))
      ->capture_default_str();
  c.add_option("--optimizer", o.optimizer.kind,
               "training optimizer: upstream (upstream's choice for the torch.compile family on "
               "CUDA: Adam, SGD for the models its lists name; SGD elsewhere), sgd or adam")
      ->check(CLI::IsMember({"upstream", "sgd", "adam"}))
      ->capture_default_str();
  c.add_option("--lr", f.lr, "training learning rate")
      ->check(finite_number(0, /*inclusive=*/false))
      ->capture_default_str();
}

// How latency is measured.
void add_performance_flags(CLI::App& c, RunFlags& f) {
  RunOptions& o = f.options;
  c.add_flag("--performance", o.performance,
             "measure eager vs compiled latency, kernel time, memory");
  c.add_option("--iterations-per-run", o.measurement.iterations_per_run,
               "iterations per timed sample (default: chosen so a sample lasts >= 1 ms)")
      ->check(CLI::NonNegativeNumber);
  c.add_option("-n,--repeat", o.measurement.repeat,
               "timed samples per side, interleaved (-n: upstream's spelling)")
      ->capture_default_str();
  c.add_option("--max-repeat", o.measurement.max_repeat,
               "keep sampling past --repeat while the speedup's 95% interval is wider than "
               "--target-interval, up to this many samples per side (0: --repeat only)")
      ->check(CLI::NonNegativeNumber);
  c.add_option("--target-interval", o.measurement.target_interval,
               "with --max-repeat: the interval's half-width to reach, a fraction of the speedup")
      ->check(finite_range(0.001, 1.0))
      ->capture_default_str();
  c.add_option("--warmup", o.measurement.warmup_iterations, "untimed warm-up iterations per side")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  c.add_option("--settle-iterations", o.measurement.settle_iterations,
               "untimed iterations of a side before each of its samples (0: none)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  c.add_option("--unstable-cov", o.measurement.unstable_cov,
               "a side whose spread (1.4826 MAD / median) is above this fraction makes the row "
               "unstable (the rows' unstable_cov column)")
      ->check(finite_range(0.0, 1.0))
      ->capture_default_str();
}

// How accuracy is judged.
void add_accuracy_flags(CLI::App& c, RunFlags& f) {
  RunOptions& o = f.options;
  c.add_flag("--accuracy", o.accuracy,
             "check the compiled result against eager and a float64 golden run");
  c.add_option("--tolerance", f.tolerance,
               "upstream's mode: an accuracy check that prints each model's tolerance, the "
               "smallest one it passes with (min_passing_tol)")
      ->expected(0, 1);
  c.add_option("--tol", f.tol, "tolerance for every model (overrides the suite's rule)")
      ->check(finite_number(0));
  c.add_flag("--skip-accuracy-check", o.skip_accuracy_check,
             "a compiled result that does not match is pass_due_to_skip (its reason says by how "
             "much), not fail_accuracy, as upstream's flag");
  c.add_option("--iterations", o.training_steps, "training steps in an accuracy check")
      ->capture_default_str();
  c.add_flag("--cosine", o.cosine, "compare with cosine similarity instead of allclose/RMSE");
  c.add_flag("--accu-summary", o.accu_summary,
             "print per-group accuracy figures and the worst tensors");
  c.add_option("--save-outputs", o.save_outputs,
               "accuracy, inference: write the float64, eager and compiled outputs of each model "
               "to DIR/<suite>/<model>/{float64,eager,<backend>}.pt (compare them with zoobench same)");
  c.add_option("--input-layouts", f.input_layouts,
               "with --accuracy: feed the compiled backend these layouts "
               "(contiguous,transposed,gapped,overlapping,expanded)");
}

// Where the rows go, what the terminal says, what the exit status means.
void add_output_flags(CLI::App& c, RunFlags& f) {
  RunOptions& o = f.options;
  c.add_option("--output", o.output,
               "result CSV (with both experiments: <stem>_accuracy / _performance)");
  c.add_option("--output-directory", o.output_directory, "where results and logs go")
      ->capture_default_str();
  c.add_flag("--resume", o.resume, "skip models that already have their rows in the output");
  c.add_flag("--allow-empty-selection", o.allow_empty_selection,
             "a filter or partition that selects no model is a success (exit 0), not an error");
  c.add_flag("--in-process", o.in_process,
             "debugging: run the one --only model in this process (under a debugger); a crash "
             "then ends zoobench and --timeout does not apply");
  c.add_option("--output-format", f.output_format,
               "upstream: also write upstream's files ({backend}_{suite}_{dtype}_{mode}_{device}_"
               "{accuracy|performance}.csv, its columns, speedup against Python eager) beside "
               "zoobench's own")
      ->check(CLI::IsMember({"zoobench", "upstream"}))
      ->capture_default_str();
  c.add_option("--expected", o.expected,
               "the exit status's expected statuses (upstream's name,accuracy CSV, as `zoobench "
               "compare` reads it), judged as upstream's check_accuracy.py: a failure it expects "
               "does not fail the run; a new failure, an improvement and a model it does not "
               "name do (default: any failed row exits 1)");
  auto* quiet = c.add_flag("-q,--quiet", f.quiet, "warnings and errors only (and dynamo's errors)");
  c.add_flag("-v,--verbose", f.verbose, "debug messages (and dynamo's debug log)")->excludes(quiet);
  // Internal: how a suite run talks to its per-model child processes.
  c.add_option("--row-out", o.row_out)->group("");
  c.add_option("--log-file", o.log_file)->group("");
  c.add_option("--device-gate", o.device_gate)->group("");
  c.add_option("--export-here", o.export_here)->group("");
  c.add_option("--accuracy-batch-here", o.accuracy_batch_here)->group("");
}

// Upstream's flags zoobench has no flag for, each taken with or without a value (refused by
// finish_run_flags, so its value need not parse).
void add_refused_upstream_flags(CLI::App& c) {
  for (const auto& flag : refused_upstream_flags()) {
    for (const auto& name : split(flag.names, ',')) {  // one option each: the message names it
      c.add_option(name)
          ->expected(0, 1)
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
          ->group("");
    }
  }
}

}  // namespace

void add_run_flags(CLI::App& c, RunFlags& f) {
  add_zoo_flags(c, f);
  add_selection_flags(c, f);
  add_backend_flags(c, f);
  add_execution_flags(c, f);
  add_performance_flags(c, f);
  add_accuracy_flags(c, f);
  add_output_flags(c, f);
  add_refused_upstream_flags(c);
}

const std::vector<RefusedUpstreamFlag>& refused_upstream_flags() {
  static const std::vector<RefusedUpstreamFlag> kFlags = {
      {"--batch_size", "zoobench spells it --batch-size N"},
      {"--threads,-t",
       "zoobench sets no thread count: set OMP_NUM_THREADS=N in the environment (LibTorch and "
       "the models' processes read it), and --cpu-affinity CPUS to pin the models' processes"},
      {"--print-graph-breaks,--log-graph-breaks,--explain",
       "the rows' graph_breaks, graphs and recompiles columns count them; TORCH_LOGS=graph_breaks "
       "in the environment writes each break's reason to the model's log (the rows' log column)"},
      {"--export-profiler-trace,--profiler-trace-name,--profiler_trace_name",
       "not supported: zoobench writes no profiler trace; --performance on CUDA lists each "
       "side's kernels (eager_kernels, compiled_kernels in the JSON results; "
       "scripts/kernel_listing.py), or run zoobench under nsys"},
      {"--timing,--print-compilation-time",
       "the rows keep the times: compilation_latency (--performance), compile_s and "
       "dynamo_compile_s (dynamo's own phases, the JSON results), export_s and job_s"},
      {"--print-memory", "--performance rows carry eager_peak_mem and dynamo_peak_mem"},
      {"--progress",
       "zoobench always shows its progress (a live line on a terminal, a line per "
       "model otherwise)"},
      {"--device-index", "name the device: -d cuda:N"},
      {"--inductor-config,-c",
       "--compile-options '{\"key\": value}' gives torch.compile Inductor's settings"},
      {"--nothing", "--backend python_eager runs the model's own module uncompiled"},
      {"--torchscript-jit-trace",
       "--backend jit (or eager: the TorchScript interpreter, "
       "optimizations off) runs the zoo's TorchScript"},
      {"--export-aot-inductor", "--backend aot_inductor"},
      {"--export",
       "not supported as a backend of its own: --backend aot_inductor runs what "
       "torch.export and AOTInductor make"},
      {"--warm-start-latency,--warm_start_latency",
       "not supported: --keep-compile-cache compiles with Inductor's own caches, warm after "
       "their first run"},
      {"--dynamic-batch-only,--unbacked-batch-only",
       "not supported: --dynamic-shapes makes every size dynamic"},
      {"--amp-dtype",
       "not supported: --amp autocasts to float16 on CUDA and bfloat16 on the CPU; "
       "--float16 and --bfloat16 cast the model"},
      {"--minify", "zoobench bisect finds the switch, the step and the op that break a model"},
      {"--baseline",
       "zoobench report RESULTS --baseline OLD compares with an earlier run (exit 1 "
       "on a regression)"},
      {"--retain-output",
       "--resume keeps the rows already in the output and runs the models "
       "that lack them"},
      {"--no-translation-validation",
       "zoobench never turns translation validation on (--ci says which of upstream's --ci "
       "effects it applies): leave the flag out"},
      {"--multiprocess,--ddp,--fsdp", "not supported: zoobench runs each model on one device"},
  };
  return kFlags;
}

std::string upstream_ci_effects(const RunOptions& options) {
  return fmt::format(
      "--ci: applied as upstream's: a fresh Inductor cache for every compile (upstream keeps "
      "a TORCHINDUCTOR_CACHE_DIR you set, zoobench does not); the exit status gates on "
      "--expected FILE as upstream's CI gates with check_accuracy.py; {}.\n"
      "--ci: not applied: translation validation of accuracy runs (set "
      "TORCHDYNAMO_TRANSLATION_VALIDATION=1, with z3 installed); --repeat capped at 2 with "
      "--accuracy (upstream's accuracy runs time nothing; --performance here keeps --repeat "
      "{}); TORCH_COMPILE_DEBUG for CI_PRESERVE_COMPILE_DEBUG's models (empty upstream); "
      "timm's batch_size.ci_accuracy (none in upstream's timm_models.yaml)",
      options.optimizer.kind == "upstream"
          ? "SGD for CI_USE_SGD's models in CUDA training with the torch.compile backends"
          : "not CI_USE_SGD's SGD: every model trains with --optimizer " + options.optimizer.kind,
      options.measurement.repeat);
}

const std::vector<std::string>& parent_decided_flags() {
  static const std::vector<std::string> kFlags = {"--zoo",
                                                  "--no-export",
                                                  "--batch-size",
                                                  "--zoo-max-gb",
                                                  "--torchbench-dir",
                                                  "--suite",
                                                  "--only",
                                                  "--filter",
                                                  "--exclude",
                                                  "--exclude-exact",
                                                  "--no-skip",
                                                  "--accuracy",
                                                  "--performance",
                                                  "--backend",
                                                  "--inductor",
                                                  "--devices",
                                                  "--cpu-affinity",
                                                  "--accuracy-workers",
                                                  "--jobs",
                                                  "--eager-reference",
                                                  "--timeout",
                                                  "--time-budget",
                                                  "--output",
                                                  "--output-directory",
                                                  "--total-partitions",
                                                  "--partition-id",
                                                  "--resume",
                                                  "--expected",
                                                  "--output-format",
                                                  "--tolerance",
                                                  "--row-out",
                                                  "--log-file",
                                                  "--device-gate",
                                                  "--export-here",
                                                  "--accuracy-batch-here",
                                                  "--in-process",
                                                  "--allow-empty-selection"};
  return kFlags;
}

namespace {

std::vector<std::string> backend_names(const std::string& list) {
  std::vector<std::string> names;
  for (const auto& part : split(list, ',')) {
    const std::string name = trim(part);
    if (name.empty()) continue;
    if (std::find(names.begin(), names.end(), name) != names.end()) {
      throw UsageError("--backend names " + name + " twice");
    }
    make_backend(name);  // UsageError for an unknown name, before anything runs
    names.push_back(name);
  }
  if (names.empty()) throw UsageError("--backend needs at least one backend name");
  return names;
}

// The flags the user gave, as tokens, minus those the parent decides per child.
std::vector<std::string> flags_for_children(const CLI::App& command) {
  const auto& decided = parent_decided_flags();
  std::vector<std::string> tokens;
  for (const CLI::Option* option : command.get_options()) {
    if (option->count() == 0 || option->get_lnames().empty()) continue;
    const std::string name = "--" + option->get_lnames().front();
    if (name == "--help" || std::find(decided.begin(), decided.end(), name) != decided.end())
      continue;
    if (option->get_expected_max() == 0) {
      tokens.push_back(name);  // a flag
      continue;
    }
    for (const auto& value : option->results()) {
      tokens.push_back(name);
      tokens.push_back(value);
    }
  }
  return tokens;
}

void finish_compile_options(RunFlags& f) {
  RunOptions& o = f.options;
  if (f.compile_options.empty()) return;
  // torch.compile's options are a flat mapping; a document nested thousands deep would crash
  // the recursive dump below.
  const nlohmann::json parsed =
      parse_json_object_flag("--compile-options", f.compile_options, /*max_depth=*/16,
                             "torch.compile's options are a flat {\"key\": value} mapping",
                             "e.g. '{\"triton.cudagraphs\": false}'");
  for (const auto& name : o.backends) {
    const std::string bare = starts_with(name, "compile:") ? name.substr(8) : name;
    if (bare.find(':') != std::string::npos) {
      throw UsageError("--compile-options with " + name +
                       ": torch.compile takes a mode or options, not both; "
                       "write the mode's settings as options instead");
    }
  }
  o.compile_options_json = parsed.dump();
}

// A flag that only some backends take: refused when none of the run's backends takes it, a
// warning naming those that ignore it otherwise.
void require_backend_for(const char* flag, const std::vector<std::string>& backends,
                         bool (*takes)(const std::string&, Mode), Mode mode, const char* who) {
  std::vector<std::string> ignoring;
  for (const auto& name : backends)
    if (!takes(name, mode)) ignoring.push_back(name);
  if (ignoring.size() == backends.size())
    throw UsageError(std::string(flag) + " means nothing to " + join(backends, ", ") + ": it is " +
                     who);
  if (!ignoring.empty())
    log::warn("{} does not apply to {} (it is {})", flag, join(ignoring, ", "), who);
}

bool takes_freezing(const std::string& name, Mode mode) {
  return dynamo_backend_of(name) == std::optional<std::string>("inductor") &&
         mode == Mode::kInference;
}
bool takes_dynamo_config(const std::string& name, Mode) { return is_torch_compile_backend(name); }

// Upstream's flags zoobench lacks: all that were given, each with zoobench's way instead.
void refuse_upstream_only_flags(const CLI::App& command) {
  std::vector<std::string> refused;
  for (const auto& flag : refused_upstream_flags()) {
    for (const auto& name : split(flag.names, ',')) {
      const CLI::Option* option = command.get_option_no_throw(name);
      if (option != nullptr && option->count() > 0)
        refused.push_back(fmt::format("{} (upstream's): {}", name, flag.instead));
    }
  }
  if (refused.empty()) return;
  throw UsageError("flags of upstream's benchmarks/dynamo that zoobench run does not take:\n  " +
                   join(refused, "\n  "));
}

// Upstream's spellings and modes (benchmarks/dynamo/common.py), checked against zoobench's.
void finish_upstream_flags(const CLI::App& command, RunFlags& f) {
  RunOptions& o = f.options;
  refuse_upstream_only_flags(command);
  if (f.inductor) {
    if (command.get_option("--backend")->count() > 0)
      throw UsageError("--inductor is upstream's --backend inductor: give one of the two");
    f.backends = "inductor";
  }
  if ((f.ci || f.cold_start_latency) && o.keep_compile_cache)
    throw UsageError(std::string(f.ci ? "--ci" : "--cold-start-latency") +
                     " compiles cold, in fresh caches; --keep-compile-cache keeps them: drop one");
  o.cold_compile_cache = f.ci || f.cold_start_latency;
  o.ci = f.ci;
  if (!f.tolerance.empty() && !f.tolerance.front().empty())
    throw UsageError("--tolerance is upstream's mode now (each model's tolerance, printed after "
                     "an accuracy check); the tolerance for every model is --tol " +
                     f.tolerance.front());
  o.tolerance_mode = command.get_option("--tolerance")->count() > 0;
  if (o.tolerance_mode) o.accuracy = true;
  if (f.quiet || f.verbose) {
    log::set_level(f.quiet ? log::Level::kWarn : log::Level::kDebug);
    // Upstream's -q/-v set dynamo's log level (torch._logging); TORCH_LOGS does, before torch is
    // imported in a model's process. A TORCH_LOGS the user set wins.
    setenv("TORCH_LOGS", f.quiet ? "-dynamo" : "+dynamo", /*overwrite=*/0);
  }
}

// Once, in the parent: a model's process (--row-out) gets --ci too, to compile cold.
void explain_ci(const RunFlags& f) {
  if (!f.ci || !f.options.row_out.empty()) return;
  for (const auto& line : split(upstream_ci_effects(f.options), '\n')) log::info("{}", line);
}

void finish_precision(RunFlags& f) {
  RunOptions& o = f.options;
  if (f.training && f.inference) throw UsageError("--training and --inference exclude each other");
  o.mode = f.training ? Mode::kTraining : Mode::kInference;
  int precisions = int(f.float32) + int(f.float16) + int(f.bfloat16) + int(f.amp);
  if (precisions > 1) throw UsageError("choose one of --float32, --float16, --bfloat16, --amp");
  o.equal_nan = !f.float32;
  o.precision = f.float16    ? Precision::kFloat16
                : f.bfloat16 ? Precision::kBFloat16
                : f.amp      ? Precision::kAmp
                             : Precision::kFloat32;
}

// --output-format upstream: upstream's speedup is against Python eager, which zoobench times
// beside the torch.compile backends only.
void finish_output_format(RunFlags& f) {
  RunOptions& o = f.options;
  o.upstream_files = f.output_format == "upstream";
  if (!o.upstream_files || !o.performance) return;
  for (const auto& name : o.backends) {
    if (!is_torch_compile_backend(name))
      throw UsageError("--output-format upstream --performance: upstream's speedup is against "
                       "Python eager, which zoobench times beside the torch.compile backends; " +
                       name + "'s is against the TorchScript reference (its own files): run it "
                       "without --output-format upstream");
  }
}

void finish_backends(RunFlags& f) {
  RunOptions& o = f.options;
  o.cudagraphs = !f.disable_cudagraphs;
  o.patches = !f.no_patches;
  o.suite_switches = !f.ignore_suite_switches;
  o.backends = backend_names(f.backends);
  o.backend = o.backends.front();
  if (!f.disabled_switches.empty()) {
    o.disabled_switches = parse_switch_list(f.disabled_switches);
    check_switch_names(o.disabled_switches, o.backends);
  }
  finish_compile_options(f);
  if (o.freezing)
    require_backend_for("--freezing", o.backends, takes_freezing, o.mode,
                        "Inductor's freezing, for inductor in inference (jit freezes by "
                        "default: its switch `freeze`)");
  for (const auto& name : o.backends) {
    if (!o.channels_last) break;
    if (auto why = make_backend(name)->channels_last_refusal())
      throw UsageError("--channels-last with " + name + ": " + *why + "; leave " + name +
                       " out of this run");
  }
  if (o.dynamic_shapes)
    require_backend_for("--dynamic-shapes", o.backends, takes_dynamo_config, o.mode,
                        "dynamo's configuration, for the torch.compile backends");
}

}  // namespace

void finish_run_flags(const CLI::App& command, RunFlags& f) {
  RunOptions& o = f.options;
  finish_upstream_flags(command, f);
  finish_precision(f);
  finish_backends(f);
  finish_output_format(f);
  o.devices.clear();
  for (const auto& d : f.devices) {
    if (!trim(d).empty()) o.devices.push_back(trim(d));
  }
  if (o.devices.empty())
    throw UsageError("--devices needs at least one device (cpu, cuda, cuda:N)");
  if (!f.cpu_affinity.empty()) o.cpu_affinity = parse_cpu_list(f.cpu_affinity);
  if (!f.input_layouts.empty()) {
    for (auto layout : boundary::parse_input_layouts(f.input_layouts)) {
      o.input_layouts.emplace_back(boundary::input_layout_name(layout));
    }
    if (!o.accuracy) throw UsageError("--input-layouts checks accuracy: add --accuracy");
  }
  if (!o.save_outputs.empty() && std::filesystem::exists(o.save_outputs) &&
      !std::filesystem::is_directory(o.save_outputs))
    throw UsageError("--save-outputs " + o.save_outputs +
                     " is a file; it names a folder (DIR/<suite>/<model>/ is written under it)");
  if (f.tol >= 0) o.tolerance = f.tol;
  o.optimizer.learning_rate = f.lr;
  if (o.measurement.repeat < 1) throw UsageError("--repeat must be at least 1");
  if (o.training_steps < 1) throw UsageError("--iterations must be at least 1");
  o.export_missing = !f.no_export;
  if (o.zoo_max_gb > 0 && !o.export_missing)
    throw UsageError("--zoo-max-gb deletes models the run exported; with --no-export it has "
                     "nothing to manage: drop one of the two");
  if (f.batch_size > 0) o.batch_size = f.batch_size;
  o.zoo_dir = zoo_for_batch_size(o.zoo_dir, o.batch_size);
  o.child_flags = flags_for_children(command);
  explain_ci(f);
}

}  // namespace zoobench
