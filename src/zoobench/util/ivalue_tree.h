// A model's outputs as a tree of IValues (tensors inside tuples, lists and dicts): the same
// tree with every tensor replaced.
#pragma once

#include <ATen/core/ivalue.h>

#include <functional>

namespace zoobench {

// `value` with each tensor t replaced by f(t); tuples stay tuples, lists become generic lists
// (elements of any type), dicts keep their key and value types; other leaves are kept.
c10::IValue map_tensors(const c10::IValue& value, const std::function<at::Tensor(const at::Tensor&)>& f);

// Copies that later in-place writes cannot change (detached clones).
inline c10::IValue clone_tree(const c10::IValue& value) {
  return map_tensors(value, [](const at::Tensor& t) { return t.detach().clone(); });
}

}  // namespace zoobench
