// `zoobench run`: flags (named after PyTorch's benchmarks/dynamo runners) -> RunOptions ->
// runner::execute_run.
#include <memory>

#include "cli/command.h"
#include "zoobench/boundary/boundary.h"
#include "zoobench/runner/suite_run.h"
#include "zoobench/util/cpu_affinity.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/text.h"

namespace zoobench::cli {
namespace {

struct RunArgs {
  RunOptions options;
  bool training = false, inference = false;
  bool float32 = false, float16 = false, bfloat16 = false, amp = false;
  bool disable_cudagraphs = false, no_patches = false;
  std::string devices = "cpu";
  std::string cpu_affinity;
  std::string input_layouts;
  double tolerance = -1;
  double lr = 0.01;
  std::vector<std::string> command_line;
};

void finish_options(RunArgs& args) {
  RunOptions& o = args.options;
  if (args.training && args.inference) throw UsageError("--training and --inference exclude each other");
  o.mode = args.training ? Mode::kTraining : Mode::kInference;
  int precisions = int(args.float32) + int(args.float16) + int(args.bfloat16) + int(args.amp);
  if (precisions > 1) throw UsageError("choose one of --float32, --float16, --bfloat16, --amp");
  o.precision = args.float16 ? Precision::kFloat16 : args.bfloat16 ? Precision::kBFloat16
                : args.amp   ? Precision::kAmp     : Precision::kFloat32;
  o.cudagraphs = !args.disable_cudagraphs;
  o.patches = !args.no_patches;
  o.devices.clear();
  for (const auto& d : split(args.devices, ',')) {
    if (!trim(d).empty()) o.devices.push_back(trim(d));
  }
  if (o.devices.empty()) throw UsageError("--devices needs at least one device (cpu, cuda, cuda:N)");
  if (!args.cpu_affinity.empty()) o.cpu_affinity = parse_cpu_list(args.cpu_affinity);
  if (!args.input_layouts.empty()) {
    for (auto layout : boundary::parse_input_layouts(args.input_layouts)) {
      o.input_layouts.emplace_back(boundary::input_layout_name(layout));
    }
    if (!o.accuracy) throw UsageError("--input-layouts checks accuracy: add --accuracy");
  }
  if (args.tolerance >= 0) o.tolerance = args.tolerance;
  o.optimizer.learning_rate = args.lr;
  if (o.measurement.repeat < 1) throw UsageError("--repeat must be at least 1");
  if (o.training_steps < 1) throw UsageError("--iterations must be at least 1");
}

void setup_run(CLI::App& app, int& exit_status) {
  auto args = std::make_shared<RunArgs>();
  RunOptions& o = args->options;
  CLI::App* c = app.add_subcommand("run", "Run models through eager and a compiled backend: accuracy and/or performance");
  c->add_option("--zoo", o.zoo_dir, "zoo folder written by tools/export_zoo.py")->capture_default_str();
  c->add_option("--suites-dir", o.suites_dir, "folder with <suite>.yaml (default: ./suites or the source tree's)");
  c->add_option("--suite", o.suite, "torchbench, huggingface, timm_models, demo, ... or all")->capture_default_str();
  c->add_flag("--accuracy", o.accuracy, "check the compiled result against eager and a float64 golden run");
  c->add_flag("--performance", o.performance, "measure eager vs compiled latency, kernel time, memory");
  c->add_flag("--training", args->training, "fwd + loss + bwd + optimizer step");
  c->add_flag("--inference", args->inference, "forward only (default)");
  c->add_option("--only", o.only, "run only this model (repeatable); one model runs in this process");
  c->add_option("-k,--filter", o.filters, "regex a model name must match (repeatable)");
  c->add_option("-x,--exclude", o.excludes, "regex of models to leave out (repeatable)");
  c->add_option("--backend", o.backend, "eager, jit, cudagraphs, aot_inductor")->capture_default_str();
  c->add_flag("--disable-cudagraphs", args->disable_cudagraphs, "on CUDA, do not run compiled backends in CUDA graphs");
  c->add_option("--devices", args->devices, "cpu, cuda, cuda:N, or a comma list: one worker per device")
      ->capture_default_str();
  c->add_option("--cpu-affinity", args->cpu_affinity,
                "CPUs the model processes run on, taskset's syntax (4 or 2-5,8); with several workers "
                "each gets an equal consecutive share");
  c->add_flag("--float32", args->float32, "float32 (default)");
  c->add_flag("--float16", args->float16, "cast model and float inputs to float16");
  c->add_flag("--bfloat16", args->bfloat16, "cast model and float inputs to bfloat16");
  c->add_flag("--amp", args->amp, "autocast (float16 on CUDA, bfloat16 on CPU)");
  c->add_option("--iterations", o.training_steps, "training steps in an accuracy check")->capture_default_str();
  c->add_option("--iterations-per-run", o.measurement.iterations_per_run,
                "iterations per timed sample (default: chosen so a sample lasts >= 1 ms)");
  c->add_option("--repeat", o.measurement.repeat, "timed samples per side, interleaved")->capture_default_str();
  c->add_option("--warmup", o.measurement.warmup_iterations, "untimed warm-up iterations per side")
      ->capture_default_str();
  c->add_option("--settle-iterations", o.measurement.settle_iterations,
                "untimed iterations of a side before each of its samples (0: none)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  c->add_option("--timeout", o.timeout_s, "seconds per model before its process is killed (0: none)")
      ->capture_default_str();
  c->add_flag("--cosine", o.cosine, "compare with cosine similarity instead of allclose/RMSE");
  c->add_flag("--accu-summary", o.accu_summary, "print per-group accuracy figures and the worst tensors");
  c->add_option("--tolerance", args->tolerance, "tolerance for every model (overrides the suite's rule)");
  c->add_option("--output", o.output, "result CSV (with both experiments: <stem>_accuracy / _performance)");
  c->add_option("--output-directory", o.output_directory, "where results and logs go")->capture_default_str();
  c->add_option("--total-partitions", o.total_partitions, "split the models into N partitions")->capture_default_str();
  c->add_option("--partition-id", o.partition_id, "run partition I (0-based)")->capture_default_str();
  c->add_flag("--resume", o.resume, "skip models that already have their rows in the output");
  c->add_flag("--no-patches", args->no_patches, "do not apply the models' patches");
  c->add_option("--input-layouts", args->input_layouts,
                "with --accuracy: feed the compiled backend these layouts (contiguous,transposed,gapped,overlapping,expanded)");
  c->add_option("--optimizer", o.optimizer.kind, "training optimizer: sgd or adam")->capture_default_str();
  c->add_option("--lr", args->lr, "training learning rate")->capture_default_str();
  // Internal: how a suite run talks to its per-model child processes.
  c->add_option("--row-out", o.row_out)->group("");
  c->add_option("--log-file", o.log_file)->group("");
  c->callback([args, &exit_status] {
    finish_options(*args);
    exit_status = execute_run(args->options, args->command_line);
  });
  // The command line is recorded with the results (run context).
  c->preparse_callback([args](std::size_t) {});
  c->parse_complete_callback([args, c] {
    args->command_line = {"zoobench", "run"};
    for (const auto* option : c->get_options()) {
      for (const auto& value : option->results()) {
        args->command_line.push_back(option->get_name() + "=" + value);
      }
    }
  });
}

}  // namespace

ZOOBENCH_COMMAND(run, setup_run);

}  // namespace zoobench::cli
