// Upstream's --channels-last (its timm runner): a model's 4-D weights and its 4-D inputs in
// channels-last memory format, the same values with NHWC strides, for eager and compiled alike.
#pragma once

#include <torch/script.h>

#include <vector>

namespace zoobench {

// The module's 4-D parameters and buffers (submodules' too), in place.
void to_channels_last(torch::jit::Module& module);

// The inputs with each 4-D tensor in channels-last format; other inputs as they are.
std::vector<c10::IValue> channels_last_inputs(const std::vector<c10::IValue>& inputs);

}  // namespace zoobench
