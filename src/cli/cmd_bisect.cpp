// `zoobench bisect`: which optimization switches break a model's accuracy, where it first goes
// wrong, and for Inductor what Inductor's own compiler bisector finds (bisect/bisect_run.h).
#include <memory>

#include "cli/command.h"
#include "zoobench/bisect/bisect_run.h"
#include "zoobench/bisect/submodule_capture.h"
#include "zoobench/util/cli_checks.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/text.h"

namespace zoobench::cli {
namespace {

struct BisectArgs {
  RunOptions options;
  std::string devices = "cpu";
  bool training = false, float16 = false, bfloat16 = false, amp = false;
  bool no_patches = false, disable_cudagraphs = false, no_submodules = false,
       ignore_suite_switches = false;
  bool no_compiler_bisector = false;
  double tolerance = -1;
  std::string from_results;
  std::string capture_children, capture_into;  // the divergence search's own child processes
};

// The options and flags of `zoobench bisect`, each bound to its field of `args`.
void add_bisect_options(CLI::App* c, BisectArgs& args) {
  RunOptions& o = args.options;
  c->add_option("--zoo", o.zoo_dir, "zoo folder")->capture_default_str();
  c->add_option("--suites-dir", o.suites_dir, "folder with <suite>.yaml")
      ->check(CLI::ExistingDirectory);
  c->add_option("--suite", o.suite, "the model's suite")->capture_default_str();
  auto* only = c->add_option("--only", o.only, "the model");
  auto* from = c->add_option("--from-results", args.from_results,
                             "an accuracy results file: bisect every failing row (its model, "
                             "backend, device, mode, dtype) and print one summary table");
  only->excludes(from);
  c->add_option("--backend", o.backend, "the backend whose switches are searched")
      ->capture_default_str();
  c->add_option("--devices", args.devices, "one device: cpu, cuda, cuda:N")->capture_default_str();
  c->add_flag("--training", args.training, "check training (default: inference)");
  c->add_flag("--float16", args.float16, "float16");
  c->add_flag("--bfloat16", args.bfloat16, "bfloat16");
  c->add_flag("--amp", args.amp, "autocast");
  c->add_option("--tol", args.tolerance, "tolerance (overrides the suite's rule), as run's --tol")
      ->check(finite_number(0));
  c->add_flag("--cosine", o.cosine, "compare with cosine similarity");
  c->add_flag("--no-patches", args.no_patches, "do not apply the model's patches");
  c->add_flag("--disable-cudagraphs", args.disable_cudagraphs, "no CUDA graphs on CUDA");
  c->add_flag("--ignore-suite-switches", args.ignore_suite_switches,
              "search the switches the suite turns off for the model too (zoobench.switches_off): "
              "they are on in every step, as in `zoobench run --ignore-suite-switches`");
  c->add_option("--timeout", o.timeout_s, "seconds per step before its process is killed (0: none)")
      ->check(finite_number(0))
      ->capture_default_str();
  c->add_option("--output-directory", o.output_directory, "bisect.json and the steps' logs")
      ->capture_default_str();
  c->add_flag("--no-submodules", args.no_submodules,
              "skip the search for the first submodule that fails alone (and its repro)");
  c->add_flag("--no-compiler-bisector", args.no_compiler_bisector,
              "inductor[:MODE]: skip Inductor's compiler bisector (each of its dozen or more "
              "checks compiles the model; where torch has none, only the switches are bisected)");
  // What a bisect runs in a child process for each level of its submodule search
  // (bisect/submodule_capture.h): not for users, so not in --help.
  c->add_option("--capture-children", args.capture_children)->group("");
  c->add_option("--capture-into", args.capture_into)->group("");
}

// The parsed flags folded into the run options the bisect reads. Throws UsageError.
void apply_bisect_flags(BisectArgs& args) {
  RunOptions& o = args.options;
  if (int(args.float16) + int(args.bfloat16) + int(args.amp) > 1)
    throw UsageError("choose one of --float16, --bfloat16, --amp");
  o.mode = args.training ? Mode::kTraining : Mode::kInference;
  // The submodule search cuts eval.pt into its submodules: bisect's steps keep the TorchScript
  // reference whatever the backend.
  o.eager_reference = "torchscript";
  o.precision = args.float16    ? Precision::kFloat16
                : args.bfloat16 ? Precision::kBFloat16
                : args.amp      ? Precision::kAmp
                                : Precision::kFloat32;
  o.patches = !args.no_patches;
  o.suite_switches = !args.ignore_suite_switches;
  o.bisect_submodules = !args.no_submodules;
  o.bisect_compiler = !args.no_compiler_bisector;
  o.cudagraphs = !args.disable_cudagraphs;
  if (args.tolerance >= 0) o.tolerance = args.tolerance;
  o.backend = trim(o.backend);
  o.backends = {o.backend};
  make_backend(o.backend);  // UsageError for an unknown name
  o.devices.clear();
  for (const auto& d : split(args.devices, ',')) {
    if (!trim(d).empty()) o.devices.push_back(trim(d));
  }
  o.accuracy = true;
}

void setup_bisect(CLI::App& app, int& exit_status) {
  auto args = std::make_shared<BisectArgs>();
  args->options.output_directory = "results/bisect";
  CLI::App* c = app.add_subcommand(
      "bisect",
      "For a model that fails accuracy: the smallest set of optimization switches whose "
      "removal makes it pass (delta debugging; each step a `zoobench run` child), the first "
      "submodule that fails alone, and for inductor[:MODE] Inductor's own compiler bisector "
      "(torch._inductor.compiler_bisector: the first failing stage among eager, aot_eager, "
      "aot_eager_decomp_partition, inductor, its subsystem, the bisect number and the op or "
      "pass), where the exporter Python's torch has it");
  add_bisect_options(c, *args);
  c->callback([args, &exit_status] {
    apply_bisect_flags(*args);
    RunOptions& o = args->options;
    if (!args->capture_into.empty()) {
      exit_status = execute_submodule_capture(
          o, args->capture_children == "." ? "" : args->capture_children, args->capture_into);
      return;
    }
    if (!args->from_results.empty()) {
      exit_status = execute_bisect_from_results(o, args->from_results);
      return;
    }
    if (o.only.empty()) throw UsageError("say which model: --only NAME, or --from-results FILE");
    exit_status = execute_bisect(o);
  });
}

}  // namespace

ZOOBENCH_COMMAND(bisect, setup_bisect);

}  // namespace zoobench::cli
