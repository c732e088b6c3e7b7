// How a training step turns a model's outputs into the scalar it differentiates.
#pragma once

#include <ATen/core/ivalue.h>

#include <string>

namespace zoobench {

// Upstream's reduce_to_scalar_loss: tensor -> sum/numel; list/tuple -> mean of the elements'
// losses; dict -> mean over values. Non-floating tensors (ids, masks) contribute nothing and
// are not counted. Throws std::runtime_error when no floating tensor is reachable.
at::Tensor reduce_to_scalar_loss(const c10::IValue& outputs);

// `rule` is a manifest's training.loss: "mean_of_floating_outputs" or "first_output" (the
// model computed its own loss, as HuggingFace models do when given labels).
at::Tensor training_loss(const c10::IValue& outputs, const std::string& rule, double scale);

}  // namespace zoobench
