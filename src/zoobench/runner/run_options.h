// Everything `zoobench run` was asked to do, as parsed from its flags (runner/run_flags.cpp).
// A child process is `zoobench run --only NAME --backend B --devices D ...` plus the flags the
// user gave that the parent does not decide (child_flags): suite_run.h's child_arguments.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "zoobench/backends/backend.h"
#include "zoobench/perf/measurement.h"
#include "zoobench/zoo/run_config.h"

namespace zoobench {

struct RunOptions {
  std::string zoo_dir = "zoo";             // with --batch-size N, the zoo's batch-<N> folder
  bool export_missing = true;             // --no-export sets false: the zoo must have the models
  std::optional<int64_t> batch_size;      // --batch-size: every model at this batch size
  double zoo_max_gb = 0;                  // --zoo-max-gb: the zoo's budget (0: none)
  std::string torchbench_dir;             // --torchbench-dir: the exporter's TorchBench checkout
  std::string suites_dir;                 // default_suites_dir() when empty
  std::string suite = "all";
  std::vector<std::string> only;          // --only (repeatable)
  std::vector<std::string> filters;       // -k/--filter regexes
  std::vector<std::string> excludes;      // -x/--exclude regexes
  bool accuracy = false;
  bool performance = false;
  Mode mode = Mode::kInference;
  std::vector<std::string> backends = {"jit"};  // --backend: one or several
  std::string backend = "jit";            // the one this process runs (a child, or --only): backends[0]
  std::string compile_options_json;       // --compile-options (torch.compile backends)
  bool keep_compile_cache = false;        // --keep-compile-cache: the user's own caches
  bool cold_compile_cache = false;        // --cold-start-latency, --ci: a fresh cache per compile
  // --eager-reference: what the eager reference, the float64 golden and the speedup's baseline
  // run: "python" (the model's own Python module, as upstream's harness), "torchscript" (eval.pt
  // through the TorchScript interpreter), or "auto" (python when every backend of the run is of
  // the torch.compile family, which then needs no TorchScript at all). A child gets its parent's.
  std::string eager_reference = "auto";
  bool cudagraphs = true;
  std::vector<std::string> devices = {"cpu"};
  int accuracy_workers = 1;               // --accuracy-workers: accuracy children at once per device
  int jobs = 0;                           // --jobs: model pipelines at once per device (0: chosen)
  bool pause_pipelines = false;           // --pause-pipelines: a timed section pauses the others
  bool retime_unstable = true;            // --no-retime-unstable turns it off (perf/experiment.h)
  std::vector<int> cpu_affinity;          // --cpu-affinity: CPUs for the model processes, split among workers
  Precision precision = Precision::kFloat32;
  // Accuracy compares NaN as equal to NaN unless --float32 was given: upstream's equal_nan
  // (its runs without a precision flag run the model as loaded, in float32, NaN-equal).
  bool equal_nan = true;
  int training_steps = 2;                 // --iterations
  MeasurementSettings measurement;        // --repeat, --warmup, --settle-iterations, --iterations-per-run
  double timeout_s = 1800;
  double time_budget_s = 0;               // --time-budget (0: none)
  bool cosine = false;
  bool accu_summary = false;
  std::string save_outputs;               // --save-outputs DIR: accuracy outputs for `zoobench same`
  std::optional<double> tolerance;        // --tol: overrides the suite's rule
  std::string output;                     // --output FILE (one experiment) or stem
  std::string output_directory = "results";
  int total_partitions = 1;
  int partition_id = 0;
  bool resume = false;
  bool allow_empty_selection = false;     // --allow-empty-selection: no model selected is a success
  // --in-process: the one --only model runs in zoobench's own process (a debugger's view); a
  // crash then ends zoobench and --timeout does not apply
  bool in_process = false;
  std::string expected;                   // --expected FILE: the statuses the exit status allows
  // Upstream's flags with upstream's meaning (benchmarks/dynamo/common.py):
  std::vector<std::string> exclude_exact; // --exclude-exact NAME: leave these models out
  bool no_skip = false;                   // --no-skip: run what the yaml's skip lists skip
  bool skip_accuracy_check = false;       // --skip-accuracy-check: a mismatch is pass_due_to_skip
  bool freezing = false;                  // --freezing: Inductor's freezing, inference
  bool dynamic_shapes = false;            // --dynamic-shapes: dynamo assumes no size static
  bool channels_last = false;             // --channels-last: 4-D weights and inputs NHWC
  bool tolerance_mode = false;            // --tolerance: each model's passing tolerance, printed
  bool upstream_files = false;            // --output-format upstream: upstream's CSVs as well
  bool patches = true;                    // --no-patches sets false
  bool bisect_submodules = true;          // zoobench bisect --no-submodules sets false
  bool bisect_compiler = true;            // zoobench bisect --no-compiler-bisector sets false
  std::vector<std::string> disabled_switches;  // --disable-switches: optimization switches off
  bool suite_switches = true;             // --ignore-suite-switches sets false: the suite's
                                          // zoobench.switches_off are not applied
  std::vector<std::string> input_layouts; // --input-layouts, empty: contiguous only
  OptimizerSettings optimizer = {"upstream", 0.01};  // --optimizer, --lr
  bool ci = false;                        // --ci (upstream's CI lists apply)
  std::vector<std::string> child_flags;   // the user's flags that every child gets as they are
  std::string row_out;                    // child mode: write rows as JSON here, not to the CSVs
  std::string log_file;                   // child mode: the log file the parent captures into
  std::string device_gate;                // child mode: the run's device gate (util/device_gate.h)
  // child mode: export the model's recipe in this process when the zoo lacks it
  // (runner/recipe_export.h), at this batch size ("list": the list's); "" the parent exported
  std::string export_here;
  // The run is upstream_passes' accuracy pass: batch_size is upstream's accuracy batch size,
  // which a model's accuracy.max_batch_size caps when it is exported.
  bool accuracy_batch = false;
  // child mode: the model's accuracy check runs at this batch size (upstream's, from its own
  // zoo entry), then its timings at the run's, both in this one process (accuracy_batch.h); 0:
  // the run's batch size for both
  int64_t accuracy_batch_here = 0;
};

// The eager reference of `options` resolved: "python" or "torchscript" (resolve_eager_reference
// of the run's backends when options.eager_reference is "auto").
std::string eager_reference(const RunOptions& options);

// The input layouts the accuracy experiment runs: --input-layouts, or the default alone.
std::vector<std::string> accuracy_layouts(const RunOptions& options);

// The CSV path of one experiment of this run: --output when given (with _accuracy /
// _performance inserted before the extension when both experiments run), else
// <output-directory>/<suite>_<backend>_<mode>_<dtype>_<device>_<experiment>.csv, for
// options.backend (a torch.compile mode's ':' becomes '-': inductor-reduce-overhead).
std::string result_csv_path(const RunOptions& options, const std::string& experiment,
                            const std::string& device);

// A backend's name as a file name part: ':' (torch.compile's NAME:MODE) becomes '-'.
std::string backend_file_part(const std::string& backend);

}  // namespace zoobench
