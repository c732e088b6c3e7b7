// --channels-last: see channels_last.h.
#include "zoobench/runner/channels_last.h"

namespace zoobench {

void to_channels_last(torch::jit::Module& module) {
  torch::NoGradGuard no_grad;
  for (auto parameter : module.parameters())
    if (parameter.dim() == 4)
      parameter.set_data(parameter.contiguous(at::MemoryFormat::ChannelsLast));
  for (auto buffer : module.buffers())
    if (buffer.dim() == 4) buffer.set_data(buffer.contiguous(at::MemoryFormat::ChannelsLast));
}

std::vector<c10::IValue> channels_last_inputs(const std::vector<c10::IValue>& inputs) {
  std::vector<c10::IValue> out;
  for (const auto& input : inputs) {
    if (input.isTensor() && input.toTensor().dim() == 4)
      out.emplace_back(input.toTensor().contiguous(at::MemoryFormat::ChannelsLast));
    else
      out.push_back(input);
  }
  return out;
}

}  // namespace zoobench
