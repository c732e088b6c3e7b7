// `t[index] = v` as TorchScript compiles it (aten::index_put_ with a one-element index list),
// on a copy of t: the model of the mask_fill_index_put rewrite's tests, CPU and CUDA.
#pragma once

#include <torch/script.h>

namespace zoobench::testing_models {

inline torch::jit::Module masked_assignment() {
  torch::jit::Module module("m");
  module.define(R"(
def forward(self, t, index, v):
    t = t.clone()
    t[index] = v
    return t
)");
  return module;
}

}  // namespace zoobench::testing_models
