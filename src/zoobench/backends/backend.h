// The backend interface: how the experiments see an eager reference or a compiled backend.
// In the spirit of LoadGen's SystemUnderTest: a Backend says what it supports and prepares a
// model into an Executable; the experiments only ever call run() / step() on that.
#pragma once

#include <ATen/core/ivalue.h>
#include <torch/csrc/jit/api/module.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "zoobench/zoo/manifest.h"
#include "zoobench/zoo/run_config.h"

namespace zoobench {

struct OptimizerSettings {
  // "sgd" | "adam" | "none" (no step: upstream's CI_SKIP_OPTIMIZER); a run's --optimizer may
  // also be "upstream", which each model's plan resolves to one of these (runner/
  // upstream_optimizer.h).
  std::string kind = "sgd";
  double learning_rate = 0.01;
};

// What a backend is asked to prepare.
struct BackendRequest {
  c10::Device device = c10::Device(c10::kCPU);
  Mode mode = Mode::kInference;
  Precision precision = Precision::kFloat32;
  // Overrides the dtype the model and float inputs are cast to (the accuracy experiment's
  // float64 golden run); unset: the precision's dtype.
  std::optional<c10::ScalarType> dtype_override;
  // On CUDA, run compiled backends inside CUDA graphs (--disable-cudagraphs sets false).
  bool cudagraphs = true;
  OptimizerSettings optimizer;
  // Training loss: the manifest's rule times the suite's scale.
  double loss_scale = 1.0;
  // Applied to every TorchScript module right after it is loaded, before any run: the model's
  // patches (graph rewrites) go here so eager and compiled see the same model.
  std::function<void(torch::jit::Module&)> after_load;
  // The torch.compile family (--compile-options, --cold-start-latency): torch.compile's
  // `options` as a JSON object (empty: none), and whether a compile may find compiled code in the
  // caches the process was given (runner/compile_cache.h; false: every compile is cold, in a
  // fresh cache of its own).
  std::string compile_options_json;
  bool keep_compile_cache = false;
  // The eager reference is the model's Python module (python_eager): the torch.compile family
  // builds the module from the manifest's recipe with the recipe's seed, reuses that build for
  // every preparation of this process (so eager, float64 and compiled share its weights), and
  // needs no eval.pt. False: the module takes eval.pt's weights and is proven to compute what
  // eval.pt computes before anything compiles it.
  bool python_reference = false;
  // Upstream's --freezing (Inductor's freezing, inference) and --dynamic-shapes (dynamo assumes
  // no size static), for the torch.compile family.
  bool freezing = false;
  bool dynamic_shapes = false;
  // Upstream's accuracy settings, for the torch.compile family: Inductor draws random numbers
  // as eager does (fallback_random), and a training step runs the module in eval mode
  // (torchbench's use_eval_mode: no dropout, batch-norm's running statistics).
  bool fallback_random = false;
  bool training_in_eval_mode = false;
  // Upstream's --channels-last: the model's 4-D parameters and buffers in channels-last memory
  // format (zoobench's TorchScript modules after `after_load`, the Python module in its session);
  // the runner lays out the inputs.
  bool channels_last = false;
  // Applied right after `after_load`, by compiled backends only (jit), never by the eager
  // reference or the float64 golden run: the model's patches marked compiled_only (planted
  // faults for tests of `zoobench bisect`, adaptations the reference must not see).
  std::function<void(torch::jit::Module&)> after_load_compiled;
  // Optimization switches turned off for this run (--disable-switches, `zoobench bisect`):
  // names from the backend's switches(); everything else is on.
  std::vector<std::string> disabled_switches;

  c10::ScalarType dtype() const { return dtype_override.value_or(parameter_dtype(precision)); }
  bool switch_on(const std::string& name) const {
    for (const auto& off : disabled_switches) {
      if (off == name) return false;
    }
    return true;
  }
};

// One optimization step a backend applies that a run can turn off (--disable-switches):
// `zoobench bisect` searches them for the ones that break a model's accuracy.
struct OptimizationSwitch {
  std::string name;         // "freeze", "nnc_fuser", ...
  std::string description;  // one line: what it does when on
  std::string applies;      // "inference", "training", "all", "cuda", "cpu"
  // A switch that does nothing while this one is off ("" none): freeze for optimize_for_inference.
  std::string requires_switch;
};

struct StepResult {
  at::Tensor loss;
  c10::IValue outputs;
};

// Named tensors of a trained model, as upstream's collect_results gathers them.
struct TrainingState {
  std::vector<std::pair<std::string, at::Tensor>> gradients;   // "<param>.grad"; zeros when None
  std::vector<std::pair<std::string, at::Tensor>> parameters;  // after the optimizer step
  std::vector<std::pair<std::string, at::Tensor>> buffers;
};

// What actually ran, for the result row.
struct ExecutionInfo {
  std::string cudagraphs = "off";  // "on" | "off" | "fallback" (not captured: failed or skipped)
  std::string note;                // e.g. the capture failure's first line
  // torch.compile's dynamo: graphs compiled, graph breaks, recompilations (other backends: unset).
  std::optional<int64_t> graphs, graph_breaks, recompiles;
  // Upstream's get_dynamo_stats() counters by name (an object; empty for other backends): what
  // --output-format upstream writes.
  nlohmann::json dynamo_stats = nlohmann::json::object();
  // Dynamo's graph breaks, [{reason, count}] most frequent first (its counters["graph_break"],
  // what upstream's --print-graph-breaks logs): where a count differs from upstream's, which
  // break it is. Empty for other backends and where nothing broke.
  nlohmann::json graph_break_reasons = nlohmann::json::array();
  // The frames dynamo left to run eagerly, [{frame, reason}] (what upstream's
  // fallbacks_to_eager counts): which ones, where that count differs from upstream's.
  nlohmann::json frames_not_converted = nlohmann::json::array();
  // The compile alone, where the backend can tell it from the rest of its preparation (the
  // torch.compile family: its first calls, not the model's rebuilding); unset: the whole
  // preparation counts as compilation.
  std::optional<double> compile_seconds;
  // Dynamo's own seconds by compile phase ({phase: s}; `total_wall_time` is upstream's
  // compilation_latency of an accuracy row): the compile measured as upstream's harness measures
  // it. Empty for other backends.
  nlohmann::json compile_phases = nlohmann::json::object();
};

class Executable {
 public:
  virtual ~Executable() = default;

  // Inference: one forward pass (no autograd). The outputs may alias internal buffers that
  // the next call overwrites (CUDA graphs): clone what must outlive the call.
  virtual c10::IValue run(const std::vector<c10::IValue>& inputs) = 0;

  // Training: zero gradients, forward, loss, backward, optimizer step.
  virtual StepResult step(const std::vector<c10::IValue>& inputs) = 0;

  // Gradients, parameters and buffers after the last step (training executables only).
  virtual TrainingState training_state() const = 0;

  virtual ExecutionInfo info() const { return {}; }

  // Why a CUDA graph cannot hold this executable's work, found without trying (empty: try).
  virtual std::string uncapturable_reason() const { return {}; }

  // The same model run uncompiled, where the backend has it at no extra cost (the torch.compile
  // family: its Python module called directly), or nullptr. The performance experiment times it
  // beside the compiled side, so a row also gives upstream's speedup (Python eager / compiled).
  virtual Executable* uncompiled() { return nullptr; }
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // One line for `--backend` help and listings.
  virtual std::string description() const = 0;
  // Which family the report's latency matrix puts it in: "zoobench" (the C++ deployment
  // paths), "torch.compile", or "python" (the uncompiled Python module).
  virtual std::string family() const { return "zoobench"; }
  // Whether the backend is CUDA graphs itself (cudagraphs), which a suite's disable_cudagraph
  // list does not turn off: the list is about the graphs other backends add on CUDA.
  virtual bool is_cuda_graphs() const { return false; }
  // Why upstream's --channels-last cannot apply to it (aot_inductor: the package is compiled
  // for the layout it was exported with), or nullopt.
  virtual std::optional<std::string> channels_last_refusal() const { return std::nullopt; }
  // Why `zoobench bisect` cannot run its prepared model's submodules one by one, or nullopt
  // where the prepared model is a TorchScript module (eager, jit, cudagraphs).
  virtual std::optional<std::string> submodules_refusal() const {
    return name() + " compiles the Python module, not TorchScript submodules that could run alone";
  }
  // Why this backend cannot run on this machine at all, whatever the model (a CUDA-only
  // backend in a CPU build, torch.compile on a Python whose torch is older than 2.0), or
  // nullopt. `zoobench list --backends` shows it.
  virtual std::optional<std::string> unavailable_reason() const { return std::nullopt; }
  // The optimization steps this backend applies that a run can turn off one by one (see
  // switches.h; the model's patches are switches of every backend, "patch:<name>").
  virtual std::vector<OptimizationSwitch> switches() const { return {}; }
  // One line for `zoobench list --switches`, "" for none: what this backend applies that no
  // switch can turn off at run time, and what to do instead (aot_inductor: Inductor's options
  // were compiled into the package; re-export it with others).
  virtual std::string fixed_steps() const { return {}; }
  // Why this backend cannot run any model in a run of `mode` at `precision` on a device of
  // `device_type` ("cpu"/"cuda"), or nullopt: `zoobench run` refuses such a run before any
  // model starts instead of writing one failed row per model. Default: unavailable_reason().
  virtual std::optional<std::string> unsupported_run(Mode mode, Precision precision,
                                                     const std::string& device_type) const;
  // Why this backend cannot run `request` for this model (device, dtype, mode, missing
  // artifact), or nullopt. The runner turns a reason into a clear row instead of a crash.
  virtual std::optional<std::string> unsupported_reason(const Manifest& manifest,
                                                        const BackendRequest& request) const = 0;
  // The manifest's artifact roles this backend loads for a run of `mode` at `precision` on a
  // device of `device_type` ("cpu"/"cuda"): what `zoobench run` has the exporter make when the
  // zoo lacks them. Default: the TorchScript files (eval, and train for training).
  virtual std::vector<std::string> needed_artifacts(Mode mode, Precision precision,
                                                    const std::string& device_type) const;
  // Loads and prepares the model (compilation, capture, profiling runs happen here and count
  // as compile time). Throws ModelLoadError when the model's files are unusable.
  virtual std::unique_ptr<Executable> prepare(const Manifest& manifest,
                                              const BackendRequest& request,
                                              const std::vector<c10::IValue>& example_inputs) = 0;
};

// The registry. Names are the built-in backends (eager, jit, cudagraphs, aot_inductor) and the
// torch.compile family: python_eager, and NAME[:MODE] for a dynamo backend NAME (inductor,
// aot_eager, ...; `compile:NAME` reaches dynamo's backends whose names zoobench's own take)
// with torch.compile's MODE. Throws UsageError naming the choices for a name that is neither.
std::unique_ptr<Backend> make_backend(const std::string& name);
// The backend that runs an eager reference ("python": the model's Python module, python_eager;
// "torchscript": eval.pt, eager).
std::string eager_reference_backend(const std::string& eager_reference);
// The eager reference a run of `backends` needs: "python" when every one is of the
// torch.compile family or python_eager, else "torchscript" (zoobench's own load eval.pt).
std::string resolve_eager_reference(const std::vector<std::string>& backends);
// Whether `name` is one of torch.compile's (NAME[:MODE], compile:NAME), not zoobench's own.
bool is_torch_compile_backend(const std::string& name);
// The dynamo backend of a torch.compile name ("inductor" for inductor:reduce-overhead and
// compile:inductor), or nullopt for zoobench's own backends.
std::optional<std::string> dynamo_backend_of(const std::string& name);
// A torch.compile name whose dynamo backend the embedded Python does not know is a typo:
// UsageError naming the ones it knows. Silent where that cannot be asked (the rows say why).
// Starts the embedded Python for torch.compile names.
void require_known_backend(const std::string& name);

// Refuses (UsageError, naming each backend and why) a run of these backends that one of them
// cannot do at all here: not built in, torch.compile missing, a mode, dtype or device it never
// supports. Typos in torch.compile names too (require_known_backend). Starts the embedded
// Python for torch.compile names.
void require_runnable_backends(const std::vector<std::string>& names, Mode mode,
                               Precision precision, const std::string& device_type);

struct BackendListing {
  std::string name;
  std::string description;
  std::optional<std::string> unavailable;  // why it cannot run here
};
// Every backend zoobench knows, the torch.compile family by its forms; `probe_python` also
// starts the embedded Python to say whether torch.compile can run and which dynamo backends
// exist (seconds: it imports torch).
std::vector<BackendListing> list_backends(bool probe_python = false);

}  // namespace zoobench
