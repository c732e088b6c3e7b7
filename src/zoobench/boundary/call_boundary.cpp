// Calling compiled code across the boundary: stage inputs to the callee's contract, call,
// write mutated inputs back.
#include <stdexcept>

#include "zoobench/boundary/boundary.h"

namespace zoobench::boundary {
namespace {

// t itself when it already has `strides`, else a copy of its values laid out with them.
at::Tensor with_layout(const at::Tensor& t, const std::vector<int64_t>& strides, size_t index) {
  if (strides.size() != static_cast<size_t>(t.dim())) {
    throw std::invalid_argument("call_with_narrowed_inputs: input " + std::to_string(index) +
                                " has " + std::to_string(t.dim()) +
                                " dimensions but its contract " + std::to_string(strides.size()) +
                                " strides");
  }
  if (has_layout(t, strides)) return t;
  at::Tensor laid = at::empty_strided(t.sizes(), strides, t.options());
  laid.copy_(t);
  return laid;
}

}  // namespace

bool has_layout(const at::Tensor& t, at::IntArrayRef strides) {
  if (strides.size() != static_cast<size_t>(t.dim())) return false;
  if (t.numel() == 0) return true;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) > 1 && t.stride(d) != strides[d]) return false;
  }
  return true;
}

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
    if (!input.defined()) {
      staged.push_back(input);
      continue;
    }
    at::Tensor narrowed = input;
    if (!contract.dtype) {
      // passed through
    } else if (memo != nullptr && !contract.mutated) {
      narrowed = memo->narrow(input, *contract.dtype);
    } else {
      // A mutated input gets its own copy every call: the callee's writes must not leak into
      // a copy that a later call would reuse.
      narrowed = to_dtype_preserving_layout(input, *contract.dtype);
    }
    staged.push_back(contract.strides ? with_layout(narrowed, *contract.strides, i) : narrowed);
  }
  std::vector<at::Tensor> outputs = callee(staged);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (contracts[i].mutated && inputs[i].defined()) write_back(inputs[i], staged[i]);
  }
  return outputs;
}

}  // namespace zoobench::boundary
