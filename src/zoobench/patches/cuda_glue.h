// ATen side of the patches' CUDA launchers (cuda_launchers.h), shared by the *_cuda.cpp files:
// the kernel element type of a tensor, and turning a launch's cudaError_t into a Torch error.
// Compiled only where Torch has CUDA.
#pragma once

#include <ATen/ATen.h>

#include "zoobench/patches/cuda_launchers.h"

namespace zoobench::patches::cuda {

// `op` names the operator in the error; bfloat16 only where the op's kernels take it.
inline Dtype kernel_dtype(const at::Tensor& t, const char* op, bool bfloat16_supported) {
  switch (t.scalar_type()) {
    case at::kFloat:
      return Dtype::kFloat32;
    case at::kDouble:
      return Dtype::kFloat64;
    case at::kHalf:
      return Dtype::kFloat16;
    case at::kBFloat16:
      if (bfloat16_supported) return Dtype::kBFloat16;
      [[fallthrough]];
    default:
      TORCH_CHECK(false, op, " (zoobench CUDA kernel): unsupported dtype ", t.scalar_type());
  }
}

inline void check_launch(cudaError_t error, const char* op) {
  TORCH_CHECK(error == cudaSuccess, op,
              " (zoobench CUDA kernel) failed to launch: ", cudaGetErrorString(error));
}

}  // namespace zoobench::patches::cuda
