// Planted faults: test-only patches that perturb the compiled side of a model (compiled_only),
// so that tests can check that `zoobench bisect` finds the patch that breaks accuracy, and a
// pair of patches that break it only together. Each rewrites the model's top-level forward:
// the output of its direct child submodule of a fixed name is changed where it is used.
//   test_scale_planted   child `planted`: output x 1.5 (fails any tolerance alone)
//   test_offset_pair_a   child `pair_a`:  output + 0.006
//   test_offset_pair_b   child `pair_b`:  output + 0.006
// With --tolerance 0.01 and outputs below 0.2 in magnitude, one offset (0.006) stays within
// allclose's atol + rtol * |ref|, both together (0.012) do not. Never assign them to a real model.
#pragma once

#include <vector>

#include "zoobench/patches/registry.h"

namespace zoobench::patches {

// The table entries (registry.cpp's builtin table holds them).
std::vector<Patch> planted_fault_patches();

// Rewrites `module`'s forward: every use of the output of its child `child`'s forward becomes
// `output * factor + offset`. Returns the number of call sites changed.
int perturb_child_output(torch::jit::Module& module, const std::string& child, double factor,
                         double offset);

}  // namespace zoobench::patches
