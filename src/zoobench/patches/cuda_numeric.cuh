// Device-side helpers shared by the patches' .cu files: conversions between storage types
// (half, bfloat16) and the arithmetic type, and the launch geometry. No Torch headers.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace zoobench::patches::cuda {

template <typename T>
struct Arith {
  using type = T;
};
template <>
struct Arith<__half> {
  using type = float;
};
template <>
struct Arith<__nv_bfloat16> {
  using type = float;
};

__device__ __forceinline__ float to_arith(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_arith(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_arith(float v) { return v; }
__device__ __forceinline__ double to_arith(double v) { return v; }

template <typename T>
__device__ __forceinline__ T from_arith(typename Arith<T>::type v) {
  return v;
}
template <>
__device__ __forceinline__ __half from_arith<__half>(float v) {
  return __float2half(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_arith<__nv_bfloat16>(float v) {
  return __float2bfloat16(v);
}

constexpr int kThreads = 256;
// Blocks for a grid-stride loop over `work` items.
inline unsigned int blocks_for(int64_t work) {
  const int64_t blocks = (work + kThreads - 1) / kThreads;
  return static_cast<unsigned int>(blocks < (int64_t{1} << 20) ? blocks : (int64_t{1} << 20));
}

}  // namespace zoobench::patches::cuda
