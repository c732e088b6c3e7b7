// Running a TorchScript module: the shared machinery of the eager and jit backends (forward
// under the right graph-executor mode, autocast, the training step with its optimizer).
#pragma once

#include <torch/script.h>

#include <memory>

#include "zoobench/backends/backend.h"

namespace zoobench {

class TrainingOptimizer;  // training_optimizer.h

class TorchScriptExecutable : public Executable {
 public:
  // `optimize`: run with the graph executor's optimizations (profiling, fusion, autodiff
  // graphs) on, or off (op-by-op interpretation: the eager reference).
  TorchScriptExecutable(torch::jit::Module module, const Manifest& manifest, const BackendRequest& request,
                        bool optimize);
  ~TorchScriptExecutable() override;

  c10::IValue run(const std::vector<c10::IValue>& inputs) override;
  StepResult step(const std::vector<c10::IValue>& inputs) override;
  TrainingState training_state() const override;
  std::string uncapturable_reason() const override;

  torch::jit::Module& module() { return module_; }

 private:
  c10::IValue forward(const std::vector<c10::IValue>& inputs);

  torch::jit::Module module_;
  torch::jit::Method forward_;
  BackendRequest request_;
  std::string loss_rule_;
  double loss_scale_;
  bool optimize_;
  std::unique_ptr<TrainingOptimizer> optimizer_;
};

}  // namespace zoobench
