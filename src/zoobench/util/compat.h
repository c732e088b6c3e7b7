// Every difference between the LibTorch versions zoobench builds against lives here:
// Debian's LibTorch 1.13 (CPU) and PyTorch 2.11 + CUDA 13 on the GPU machine.
// ZOOBENCH_WITH_CUDA / ZOOBENCH_WITH_AOTI come from cmake/ZoobenchDependencies.cmake.
#pragma once

#include <ATen/Context.h>
#include <torch/version.h>

#include <string>

#ifndef ZOOBENCH_WITH_CUDA
#define ZOOBENCH_WITH_CUDA 0
#endif
#ifndef ZOOBENCH_WITH_AOTI
#define ZOOBENCH_WITH_AOTI 0
#endif

#define ZOOBENCH_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) ||           \
   (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

namespace zoobench::compat {

inline std::string torch_version() {
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
         std::to_string(TORCH_VERSION_PATCH);
}

constexpr bool kHasCuda = ZOOBENCH_WITH_CUDA;
constexpr bool kHasAotInductor = ZOOBENCH_WITH_AOTI;

// Deterministic algorithms on (warn only, as upstream: some ops have no deterministic
// kernel and the run should still go on) and TF32 off, so fp32 results are comparable.
inline void set_deterministic_numerics(bool on) {
  at::globalContext().setDeterministicAlgorithms(on, /*warn_only=*/true);
  at::globalContext().setDeterministicCuDNN(on);
  at::globalContext().setBenchmarkCuDNN(!on);
  // The TF32 switches are deprecated in favour of setFloat32Precision in 2.9+, but both
  // versions still honour them and they say exactly what we mean.
  at::globalContext().setAllowTF32CuBLAS(!on);
  at::globalContext().setAllowTF32CuDNN(!on);
}

}  // namespace zoobench::compat
