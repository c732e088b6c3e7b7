// One model's plan: everything its run takes from the suite configuration, its manifest and the
// flags (batch size, artifacts, patches, tolerance rule, switches off, loss scale, check runs),
// resolved once before anything runs, passed down as one value and printed at the top of the
// model's log, so that a row can be explained from the log alone.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "zoobench/backends/backend.h"
#include "zoobench/perf/measurement.h"
#include "zoobench/runner/run_options.h"
#include "zoobench/zoo/catalog.h"
#include "zoobench/zoo/export_request.h"
#include "zoobench/zoo/manifest.h"
#include "zoobench/zoo/suite_config.h"

namespace zoobench {

struct ModelPlan {
  std::string model;
  std::string backend;
  std::string device;  // as given: cpu, cuda, cuda:1
  Mode mode = Mode::kInference;
  Precision precision = Precision::kFloat32;
  int64_t batch_size = 0;                 // the zoo entry's (--batch-size chose the entry)
  // What eager, the float64 golden run and the speedup's baseline run: "python" (the model's own
  // Python module, built from the manifest's recipe) or "torchscript" (eval.pt).
  std::string eager_reference = "torchscript";
  std::vector<std::string> artifacts;     // roles the eager reference and the backend load
  std::vector<std::string> patches;       // applied, in order (none with --no-patches)
  std::vector<std::string> switches_off;  // --disable-switches and the suite's, for this backend
  std::string suite_switches_reason;      // why the suite turns some off ("" when it does not)
  ToleranceDecision tolerance;            // the comparison rule and where it came from
  bool non_deterministic = false;         // eager runs may differ (upstream's non_deterministic)
  // Upstream's accuracy.skip.eager_not_deterministic in training: not judged (pass_due_to_skip)
  bool eager_not_deterministic = false;
  bool equal_nan = true;                  // NaN == NaN in accuracy (unless --float32)
  // Accuracy checks enforce torch's deterministic algorithms (upstream's setup_determinism),
  // except for the suite's zoobench.deterministic_algorithms_off (upstream's exception list).
  bool deterministic_algorithms = true;
  // cuDNN's switches as the model's TorchBench code leaves them (zoobench.cudnn_set_by_model),
  // over the check's and the timings' own settings, as in upstream's harness.
  CudnnSwitches cudnn_by_model;
  // Training accuracy with the module in eval mode, as upstream checks torchbench models
  // (use_eval_mode); applied where eager is the Python module (eval.pt's train.pt twin is a
  // trace in train mode).
  bool training_in_eval_mode = false;
  int check_runs = 1;                     // compiled runs the verdict votes over
  double loss_scale = 1.0;                // training: extra factor on the loss
  // On CUDA, compiled runs inside CUDA graphs: off with --disable-cudagraphs, and for the
  // models of the suite's disable_cudagraph list (all backends but `cudagraphs` itself).
  bool cudagraphs = true;
  std::string cudagraphs_off_reason;      // why not, when not
  // Set when the suite's configuration cannot be applied (a switch the backend does not
  // have): the rows then say so instead of running with the pass on.
  std::optional<std::string> invalid;

  // What the run asks of the model (the flags), resolved for it.
  bool accuracy = false, performance = false;
  std::vector<std::string> input_layouts;  // one accuracy row each
  int training_steps = 2;                  // --iterations
  bool accuracy_summary = false;           // --accu-summary
  bool skip_accuracy_check = false;        // --skip-accuracy-check
  std::string save_outputs_dir;            // --save-outputs DIR/<suite>/<model>, "" none
  MeasurementSettings measurement;         // --repeat, --warmup, ...
  bool pause_pipelines = false;            // its timed section pauses the run's other pipelines
  bool retime_unstable = true;             // an unstable timing is timed again, others paused
  // How its backends prepare it (BackendRequest's fields from the flags).
  OptimizerSettings optimizer;  // resolved: sgd, adam or none
  std::string optimizer_why;    // the flag, or upstream's list or rule that chose it
  std::string compile_options_json;
  bool cold_compile_cache = false, freezing = false, dynamic_shapes = false;
  bool channels_last = false;
  std::string log_file;  // the model's log, for its rows
};

// The backend that runs a plan's eager reference: python_eager or eager (TorchScript).
std::string reference_backend(const ModelPlan& plan);

// The plan of `manifest`'s model with `options.backend` on `device`.
ModelPlan plan_model(const ZooEntry& entry, const Manifest& manifest, const RunOptions& options,
                     const SuiteConfig& config, const std::string& device);

// The artifact roles `backends` load, with `eager_reference` (python | torchscript), in `mode`
// at `precision` on a device of `device_type`: the reference's and the backends'. The Python
// module as reference with backends all of the torch.compile family loads the recipe alone:
// no TorchScript is made.
std::vector<std::string> needed_roles(const std::string& eager_reference,
                                      const std::vector<std::string>& backends, Mode mode,
                                      Precision precision, const std::string& device_type);

// What a run asks of the exporter for a model its zoo lacks (export on demand): those roles,
// its mode, batch size and folders (the device gate is the caller's).
ExportRequest export_request(const RunOptions& options, const std::string& suites_dir);

// The plan as the model's log shows it: one fact a line, "plan: <fact>".
std::string describe(const ModelPlan& plan);

}  // namespace zoobench
