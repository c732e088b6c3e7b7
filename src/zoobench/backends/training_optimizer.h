// The optimizer a training step ends with (SGD by default, Adam on request), over a
// TorchScript module's parameters. Kept apart because it needs LibTorch's C++ frontend.
#pragma once

#include <ATen/ATen.h>

#include <memory>
#include <vector>

#include "zoobench/backends/backend.h"

namespace zoobench {

class TrainingOptimizer {
 public:
  TrainingOptimizer(std::vector<at::Tensor> parameters, const OptimizerSettings& settings);
  ~TrainingOptimizer();
  // Sets the gradients to None, as upstream's harness and torch.optim's default do: the
  // backward then writes each gradient instead of adding it to a zeroed one, two kernels a
  // parameter fewer. In a captured step the gradients the capture allocated stay the
  // parameters' own, and each replay writes them again.
  void zero_grad();
  void step();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace zoobench
