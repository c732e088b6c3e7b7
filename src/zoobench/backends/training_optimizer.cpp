// SGD as torch.optim's multi-tensor update; Adam through torch::optim.
#include "zoobench/backends/training_optimizer.h"

#include <ATen/ATen.h>
#include <torch/optim.h>

#include "zoobench/util/errors.h"

namespace zoobench {

struct TrainingOptimizer::State {
  std::vector<at::Tensor> parameters;
  double learning_rate = 0;
  std::unique_ptr<torch::optim::Optimizer> adam;  // null for SGD
  bool stepless = false;  // "none": upstream's CI_SKIP_OPTIMIZER models step no optimizer
};

TrainingOptimizer::TrainingOptimizer(std::vector<at::Tensor> parameters, const OptimizerSettings& settings)
    : state_(std::make_unique<State>()) {
  state_->parameters = parameters;
  state_->learning_rate = settings.learning_rate;
  if (settings.kind == "adam") {
    state_->adam = std::make_unique<torch::optim::Adam>(
        parameters, torch::optim::AdamOptions(settings.learning_rate));
  } else if (settings.kind == "none") {
    state_->stepless = true;
  } else if (settings.kind != "sgd") {
    throw UsageError("unknown optimizer '" + settings.kind + "': use sgd or adam");
  }
}

TrainingOptimizer::~TrainingOptimizer() = default;

void TrainingOptimizer::zero_grad() {
  for (auto& p : state_->parameters) p.mutable_grad() = at::Tensor();
}

void TrainingOptimizer::step() {
  if (state_->stepless) return;
  if (state_->adam) {
    state_->adam->step();
    return;
  }
  // p -= lr * grad for every parameter the backward reached, in one multi-tensor update
  // (torch.optim.SGD's default on CUDA, `foreach`) instead of a kernel per parameter: resnet50
  // has 161. The arithmetic per element is the same as the per-parameter add.
  std::vector<at::Tensor> parameters, gradients;
  for (auto& p : state_->parameters) {
    if (!p.grad().defined()) continue;
    parameters.push_back(p);
    gradients.push_back(p.grad());
  }
  if (parameters.empty()) return;
  at::NoGradGuard no_grad;
  at::_foreach_add_(parameters, gradients, -state_->learning_rate);
}

}  // namespace zoobench
