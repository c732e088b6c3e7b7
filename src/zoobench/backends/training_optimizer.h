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
  // Zeroes gradients in place (not set to None: CUDA graph replays write into the same memory).
  void zero_grad();
  void step();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace zoobench
