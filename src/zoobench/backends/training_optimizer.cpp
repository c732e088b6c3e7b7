// torch::optim behind a small interface.
#include "zoobench/backends/training_optimizer.h"

#include <torch/optim.h>

#include "zoobench/util/errors.h"

namespace zoobench {

struct TrainingOptimizer::State {
  std::vector<at::Tensor> parameters;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
};

TrainingOptimizer::TrainingOptimizer(std::vector<at::Tensor> parameters, const OptimizerSettings& settings)
    : state_(std::make_unique<State>()) {
  state_->parameters = parameters;
  if (settings.kind == "sgd") {
    state_->optimizer = std::make_unique<torch::optim::SGD>(
        parameters, torch::optim::SGDOptions(settings.learning_rate));
  } else if (settings.kind == "adam") {
    state_->optimizer = std::make_unique<torch::optim::Adam>(
        parameters, torch::optim::AdamOptions(settings.learning_rate));
  } else {
    throw UsageError("unknown optimizer '" + settings.kind + "': use sgd or adam");
  }
}

TrainingOptimizer::~TrainingOptimizer() = default;

void TrainingOptimizer::zero_grad() {
  for (auto& p : state_->parameters) {
    if (p.grad().defined()) {
      p.mutable_grad().detach_();
      p.mutable_grad().zero_();
    }
  }
}

void TrainingOptimizer::step() { state_->optimizer->step(); }

}  // namespace zoobench
