// Forward passes and training steps of a TorchScript module.
#include "zoobench/backends/torchscript_executable.h"

#include <c10/core/InferenceMode.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include "zoobench/backends/host_sync_ops.h"
#include "zoobench/backends/training_optimizer.h"
#include "zoobench/util/compat.h"
#include "zoobench/zoo/model_files.h"
#include "zoobench/zoo/training_loss.h"

namespace zoobench {

TorchScriptExecutable::TorchScriptExecutable(torch::jit::Module module, const Manifest& manifest,
                                             const BackendRequest& request, bool optimize)
    : module_(std::move(module)),
      forward_(module_.get_method("forward")),
      request_(request),
      loss_rule_(manifest.loss),
      loss_scale_(manifest.loss_scale * request.loss_scale),
      optimize_(optimize) {
  if (request_.mode == Mode::kTraining) {
    module_.train();
    std::vector<at::Tensor> parameters;
    for (const auto& p : module_.parameters()) {
      if (p.requires_grad()) parameters.push_back(p);
    }
    optimizer_ = std::make_unique<TrainingOptimizer>(std::move(parameters), request_.optimizer);
  } else {
    module_.eval();
  }
}

TorchScriptExecutable::~TorchScriptExecutable() = default;

c10::IValue TorchScriptExecutable::forward(const std::vector<c10::IValue>& inputs) {
  // The executor mode is process-wide; eager and compiled modules alternate in one process,
  // so each call sets the mode it means.
  torch::jit::GraphOptimizerEnabledGuard executor_mode(optimize_);
  std::vector<c10::IValue> stack = inputs;
  if (request_.precision == Precision::kAmp) {
    c10::ScalarType amp_dtype = request_.device.is_cuda() ? c10::kHalf : c10::kBFloat16;
    compat::AutocastGuard autocast(request_.device.type(), amp_dtype);
    return forward_(std::move(stack));
  }
  return forward_(std::move(stack));
}

c10::IValue TorchScriptExecutable::run(const std::vector<c10::IValue>& inputs) {
  c10::InferenceMode no_autograd;
  return forward(inputs);
}

StepResult TorchScriptExecutable::step(const std::vector<c10::IValue>& inputs) {
  if (!optimizer_) throw std::logic_error("step() on an executable prepared for inference");
  optimizer_->zero_grad();
  StepResult result;
  result.outputs = forward(inputs);
  result.loss = training_loss(result.outputs, loss_rule_, loss_scale_);
  result.loss.backward();
  optimizer_->step();
  return result;
}

std::string TorchScriptExecutable::uncapturable_reason() const {
  std::vector<std::string> ops = data_dependent_host_ops(module_);
  if (ops.empty()) return {};
  std::string names;
  for (std::size_t i = 0; i < ops.size() && i < 4; ++i) names += (i ? ", " : "") + ops[i];
  if (ops.size() > 4) names += ", ...";
  return "the graph reads values back to the host (" + names + "), which a CUDA graph cannot hold";
}

TrainingState TorchScriptExecutable::training_state() const {
  TrainingState state;
  for (const auto& item : module_.named_parameters(/*recurse=*/true)) {
    at::Tensor grad = item.value.grad();
    // Upstream's collect_results: a parameter without a gradient contributes zeros.
    state.gradients.emplace_back(item.name + ".grad", grad.defined() ? grad : at::zeros_like(item.value));
    state.parameters.emplace_back(item.name, item.value);
  }
  for (const auto& item : module_.named_buffers(/*recurse=*/true)) {
    state.buffers.emplace_back(item.name, item.value);
  }
  return state;
}

}  // namespace zoobench
