// `zoobench run`'s option table and its second step. Flag names follow PyTorch's
// benchmarks/dynamo runners.
#include "zoobench/runner/run_flags.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "zoobench/backends/backend.h"
#include "zoobench/backends/switches.h"
#include "zoobench/boundary/boundary.h"
#include "zoobench/util/cli_checks.h"
#include "zoobench/util/cpu_affinity.h"
#include "zoobench/util/errors.h"
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

}  // namespace

void add_run_flags(CLI::App& c, RunFlags& f) {
  RunOptions& o = f.options;
  add_zoo_flags(c, f);
  c.add_option("--suites-dir", o.suites_dir,
               "folder with <suite>.yaml (default: ./suites or the source tree's)")
      ->check(CLI::ExistingDirectory);
  c.add_option("--suite", o.suite, "torchbench, huggingface, timm_models, demo, ... or all")
      ->capture_default_str();
  c.add_flag("--accuracy", o.accuracy,
             "check the compiled result against eager and a float64 golden run");
  c.add_flag("--performance", o.performance,
             "measure eager vs compiled latency, kernel time, memory");
  c.add_flag("--training", f.training, "fwd + loss + bwd + optimizer step");
  c.add_flag("--inference", f.inference, "forward only (default)");
  c.add_option("--only", o.only,
               "run only this model (repeatable); one model runs in this process");
  c.add_option("-k,--filter", o.filters, "regex a model name must match (repeatable)");
  c.add_option("-x,--exclude", o.excludes, "regex of models to leave out (repeatable)");
  c.add_option(
       "--backend", f.backends,
       "one or several (comma-separated): eager, jit, cudagraphs, aot_inductor, python_eager, or a "
       "torch.compile backend NAME[:MODE] (inductor, inductor:reduce-overhead, aot_eager, ...); "
       "`zoobench list --backends` shows them")
      ->capture_default_str();
  c.add_option("--compile-options", f.compile_options,
               "torch.compile backends: torch.compile's options as a JSON object, e.g. "
               "'{\"triton.cudagraphs\": false}'");
  c.add_flag(
      "--keep-compile-cache", o.keep_compile_cache,
      "torch.compile backends: let Inductor's and Triton's caches carry compiled code between "
      "preparations (default: every compile is cold)");
  c.add_flag("--disable-cudagraphs", f.disable_cudagraphs,
             "on CUDA, do not run compiled backends in CUDA graphs");
  c.add_option("--devices", f.devices, "cpu, cuda, cuda:N, or a comma list: one worker per device")
      ->capture_default_str();
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
  c.add_option("--iterations", o.training_steps, "training steps in an accuracy check")
      ->capture_default_str();
  c.add_option("--iterations-per-run", o.measurement.iterations_per_run,
               "iterations per timed sample (default: chosen so a sample lasts >= 1 ms)")
      ->check(CLI::NonNegativeNumber);
  c.add_option("--repeat", o.measurement.repeat, "timed samples per side, interleaved")
      ->capture_default_str();
  c.add_option("--warmup", o.measurement.warmup_iterations, "untimed warm-up iterations per side")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  c.add_option("--settle-iterations", o.measurement.settle_iterations,
               "untimed iterations of a side before each of its samples (0: none)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
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
  c.add_flag("--cosine", o.cosine, "compare with cosine similarity instead of allclose/RMSE");
  c.add_flag("--accu-summary", o.accu_summary,
             "print per-group accuracy figures and the worst tensors");
  c.add_option("--save-outputs", o.save_outputs,
               "accuracy, inference: write the float64, eager and compiled outputs of each model "
               "to DIR/<suite>/<model>/{float64,eager,<backend>}.pt (compare them with zoobench same)");
  c.add_option("--tolerance", f.tolerance,
               "tolerance for every model (overrides the suite's rule)")
      ->check(finite_number(0));
  c.add_option("--output", o.output,
               "result CSV (with both experiments: <stem>_accuracy / _performance)");
  c.add_option("--output-directory", o.output_directory, "where results and logs go")
      ->capture_default_str();
  c.add_option("--total-partitions", o.total_partitions, "split the models into N partitions")
      ->capture_default_str();
  c.add_option("--partition-id", o.partition_id, "run partition I (0-based)")
      ->capture_default_str();
  c.add_flag("--resume", o.resume, "skip models that already have their rows in the output");
  c.add_flag("--no-patches", f.no_patches, "do not apply the models' patches");
  c.add_option("--disable-switches", f.disabled_switches,
               "turn these optimization switches off (comma-separated): a backend's steps "
               "(jit: freeze, fold_frozen, optimize_for_inference, executor, ...; inductor: "
               "Inductor config steps; aot_inductor: cudagraphs, narrowing_memo) or a model's "
               "patch, patch:NAME; each backend's: `zoobench list --switches --backend NAME`");
  c.add_flag("--ignore-suite-switches", f.ignore_suite_switches,
             "run with the switches the suite turns off for some models (zoobench.switches_off "
             "in <suite>.yaml) on, to see or bisect the fault they avoid");
  c.add_option("--input-layouts", f.input_layouts,
               "with --accuracy: feed the compiled backend these layouts "
               "(contiguous,transposed,gapped,overlapping,expanded)");
  c.add_option("--optimizer", o.optimizer.kind, "training optimizer: sgd or adam")
      ->capture_default_str();
  c.add_option("--lr", f.lr, "training learning rate")
      ->check(finite_number(0, /*inclusive=*/false))
      ->capture_default_str();
  // Internal: how a suite run talks to its per-model child processes.
  c.add_option("--row-out", o.row_out)->group("");
  c.add_option("--log-file", o.log_file)->group("");
  c.add_option("--timing-lock", o.timing_lock)->group("");
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
                                                  "--accuracy",
                                                  "--performance",
                                                  "--backend",
                                                  "--devices",
                                                  "--cpu-affinity",
                                                  "--accuracy-workers",
                                                  "--timeout",
                                                  "--time-budget",
                                                  "--output",
                                                  "--output-directory",
                                                  "--total-partitions",
                                                  "--partition-id",
                                                  "--resume",
                                                  "--row-out",
                                                  "--log-file",
                                                  "--timing-lock"};
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

}  // namespace

void finish_run_flags(const CLI::App& command, RunFlags& f) {
  RunOptions& o = f.options;
  if (f.training && f.inference) throw UsageError("--training and --inference exclude each other");
  o.mode = f.training ? Mode::kTraining : Mode::kInference;
  int precisions = int(f.float32) + int(f.float16) + int(f.bfloat16) + int(f.amp);
  if (precisions > 1) throw UsageError("choose one of --float32, --float16, --bfloat16, --amp");
  o.precision = f.float16    ? Precision::kFloat16
                : f.bfloat16 ? Precision::kBFloat16
                : f.amp      ? Precision::kAmp
                             : Precision::kFloat32;
  o.cudagraphs = !f.disable_cudagraphs;
  o.patches = !f.no_patches;
  o.suite_switches = !f.ignore_suite_switches;
  o.backends = backend_names(f.backends);
  o.backend = o.backends.front();
  if (!f.disabled_switches.empty()) {
    o.disabled_switches = parse_switch_list(f.disabled_switches);
    check_switch_names(o.disabled_switches, o.backends);
  }
  if (!f.compile_options.empty()) {
    nlohmann::json parsed;
    try {
      parsed = nlohmann::json::parse(f.compile_options);
    } catch (const std::exception& e) {
      throw UsageError("--compile-options is not JSON: " + first_line(e.what()));
    }
    if (!parsed.is_object())
      throw UsageError(
          "--compile-options must be a JSON object, e.g. '{\"triton.cudagraphs\": false}'");
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
  o.devices.clear();
  for (const auto& d : split(f.devices, ',')) {
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
  if (f.tolerance >= 0) o.tolerance = f.tolerance;
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
}

}  // namespace zoobench
