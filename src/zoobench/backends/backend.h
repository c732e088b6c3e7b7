// The backend interface: how the experiments see an eager reference or a compiled backend.
// In the spirit of LoadGen's SystemUnderTest: a Backend says what it supports and prepares a
// model into an Executable; the experiments only ever call run() / step() on that.
#pragma once

#include <ATen/core/ivalue.h>
#include <torch/csrc/jit/api/module.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "zoobench/zoo/manifest.h"
#include "zoobench/zoo/run_config.h"

namespace zoobench {

struct OptimizerSettings {
  std::string kind = "sgd";  // "sgd" | "adam"
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

  c10::ScalarType dtype() const { return dtype_override.value_or(parameter_dtype(precision)); }
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
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // One line for `--backend` help and listings.
  virtual std::string description() const = 0;
  // Why this backend cannot run `request` for this model (device, dtype, mode, missing
  // artifact), or nullopt. The runner turns a reason into a clear row instead of a crash.
  virtual std::optional<std::string> unsupported_reason(const Manifest& manifest,
                                                        const BackendRequest& request) const = 0;
  // Loads and prepares the model (compilation, capture, profiling runs happen here and count
  // as compile time). Throws ModelLoadError when the model's files are unusable.
  virtual std::unique_ptr<Executable> prepare(const Manifest& manifest,
                                              const BackendRequest& request,
                                              const std::vector<c10::IValue>& example_inputs) = 0;
};

// The registry. Throws UsageError listing the available names for an unknown one.
std::unique_ptr<Backend> make_backend(const std::string& name);
std::vector<std::pair<std::string, std::string>> list_backends();  // name, description

}  // namespace zoobench
