// Calling compiled code across the boundary: stage inputs to the callee's contract, call,
// write mutated inputs back.
#include <stdexcept>

#include "zoobench/boundary/boundary.h"

namespace zoobench::boundary {

std::vector<at::Tensor> call_with_narrowed_inputs(const std::vector<at::Tensor>& inputs,
                                                  const std::vector<InputContract>& contracts,
                                                  const NarrowedCallee& callee,
                                                  NarrowingMemo* memo) {
  if (inputs.size() != contracts.size()) {
    throw std::invalid_argument("call_with_narrowed_inputs: " + std::to_string(inputs.size()) +
                                " inputs but " + std::to_string(contracts.size()) +
                                " contracts; give one contract per input");
  }
  std::vector<at::Tensor> staged;
  staged.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const at::Tensor& input = inputs[i];
    const InputContract& contract = contracts[i];
    if (!contract.dtype || !input.defined()) {
      staged.push_back(input);
    } else if (memo != nullptr && !contract.mutated) {
      staged.push_back(memo->narrow(input, *contract.dtype));
    } else {
      // A mutated input gets its own copy every call: the callee's writes must not leak into
      // a copy that a later call would reuse.
      staged.push_back(to_dtype_preserving_layout(input, *contract.dtype));
    }
  }
  std::vector<at::Tensor> outputs = callee(staged);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (contracts[i].mutated && inputs[i].defined()) write_back(inputs[i], staged[i]);
  }
  return outputs;
}

}  // namespace zoobench::boundary
