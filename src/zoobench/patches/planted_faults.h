// Planted faults: test-only patches that perturb the compiled side of a model (compiled_only),
// so that tests can check that `zoobench bisect` finds the patch that breaks accuracy, the layer
// it breaks, and a pair of patches that break it only together. Each rewrites the forward of
// every module of one class (the model's own, wherever it sits, or the module itself: a repro
// of that layer alone is rewritten too, as real patches are):
//   test_scale_planted   class PlantedLinear: output x 1.5 (fails any tolerance alone)
//   test_offset_pair_a   class PairA:  output + 0.006
//   test_offset_pair_b   class PairB:  output + 0.006
// With --tol 0.01 and outputs below 0.2 in magnitude, one offset (0.006) stays within
// allclose's atol + rtol * |ref|, both together (0.012) do not. Never assign them to a real model.
#pragma once

#include <vector>

#include "zoobench/patches/registry.h"

namespace zoobench::patches {

// The table entries (registry.cpp's builtin table holds them).
std::vector<Patch> planted_fault_patches();

// Rewrites the forward of `module` and of each of its submodules whose class is named `type`
// (TorchScript's prefix left out): it returns `output * factor + offset`. Each class's graph is
// rewritten once. Returns the number of classes changed.
int perturb_class_output(torch::jit::Module& module, const std::string& type, double factor,
                         double offset);

}  // namespace zoobench::patches
