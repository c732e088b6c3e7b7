// CUDA kernels of zoobench::dropout_packed: the forward draws 8 Philox numbers per mask byte
// (one thread per byte, subsequence = byte index) and writes the byte and its 8 outputs; the
// backward reads the gradient through its strides in logical order, one thread per element.
#include <cuda_runtime.h>
#include <curand_kernel.h>

#include "zoobench/patches/cuda_launchers.h"
#include "zoobench/patches/cuda_numeric.cuh"

namespace zoobench::patches::cuda {
namespace {

template <typename T>
__global__ void dropout_forward_kernel(const T* x, T* y, uint8_t* mask, int64_t numel,
                                       int64_t bytes, uint64_t keep_threshold,
                                       typename Arith<T>::type scale, PhiloxArgs philox) {
  using A = typename Arith<T>::type;
  const int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (b >= bytes) return;
  const uint64_t offset = philox.offset_ptr != nullptr
                              ? static_cast<uint64_t>(*philox.offset_ptr) + philox.offset_intragraph
                              : philox.offset;
  curandStatePhilox4_32_10_t state;
  const uint64_t seed =
      philox.seed_ptr != nullptr ? static_cast<uint64_t>(*philox.seed_ptr) : philox.seed;
  curand_init(seed, static_cast<unsigned long long>(b), offset, &state);
  const uint4 r0 = curand4(&state);
  const uint4 r1 = curand4(&state);
  const uint32_t r[8] = {r0.x, r0.y, r0.z, r0.w, r1.x, r1.y, r1.z, r1.w};
  const int64_t first = 8 * b;
  uint8_t byte = 0;
  for (int k = 0; k < 8; ++k) {
    const int64_t i = first + k;
    if (i >= numel) break;
    const bool keep = static_cast<uint64_t>(r[k]) < keep_threshold;
    byte |= static_cast<uint8_t>(keep) << k;
    y[i] = from_arith<T>(to_arith(x[i]) * (keep ? scale : A(0)));
  }
  mask[b] = byte;
}

template <typename T>
__global__ void dropout_backward_kernel(const T* grad, StridedLayout layout, const uint8_t* mask,
                                        int64_t numel, typename Arith<T>::type scale, T* out) {
  using A = typename Arith<T>::type;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < numel;
       i += stride) {
    // Element i in row-major logical order, wherever grad's strides put it in memory.
    int64_t rest = i;
    int64_t offset = 0;
    for (int d = layout.dims - 1; d >= 0; --d) {
      offset += (rest % layout.sizes[d]) * layout.strides[d];
      rest /= layout.sizes[d];
    }
    const bool keep = (mask[i >> 3] >> (i & 7)) & 1;
    out[i] = from_arith<T>(to_arith(grad[offset]) * (keep ? scale : A(0)));
  }
}

template <typename T>
cudaError_t forward_as(const void* x, void* y, uint8_t* mask, int64_t numel,
                       uint64_t keep_threshold, double scale, const PhiloxArgs& philox,
                       cudaStream_t stream) {
  using A = typename Arith<T>::type;
  const int64_t bytes = (numel + 7) / 8;
  const int64_t blocks = (bytes + kThreads - 1) / kThreads;
  if (blocks > 0x7fffffff) return cudaErrorInvalidConfiguration;
  dropout_forward_kernel<T><<<static_cast<unsigned int>(blocks), kThreads, 0, stream>>>(
      static_cast<const T*>(x), static_cast<T*>(y), mask, numel, bytes, keep_threshold,
      static_cast<A>(scale), philox);
  return cudaGetLastError();
}

template <typename T>
cudaError_t backward_as(const void* grad, const StridedLayout& layout, const uint8_t* mask,
                        int64_t numel, double scale, void* out, cudaStream_t stream) {
  using A = typename Arith<T>::type;
  dropout_backward_kernel<T>
      <<<blocks_for(numel), kThreads, 0, stream>>>(static_cast<const T*>(grad), layout, mask, numel,
                                                   static_cast<A>(scale), static_cast<T*>(out));
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_dropout_packed_forward(Dtype dtype, const void* x, void* y, uint8_t* mask,
                                          int64_t numel, uint64_t keep_threshold, double scale,
                                          const PhiloxArgs& philox, cudaStream_t stream) {
  if (numel == 0) return cudaSuccess;
  switch (dtype) {
    case Dtype::kFloat32:
      return forward_as<float>(x, y, mask, numel, keep_threshold, scale, philox, stream);
    case Dtype::kFloat64:
      return forward_as<double>(x, y, mask, numel, keep_threshold, scale, philox, stream);
    case Dtype::kFloat16:
      return forward_as<__half>(x, y, mask, numel, keep_threshold, scale, philox, stream);
    case Dtype::kBFloat16:
      return forward_as<__nv_bfloat16>(x, y, mask, numel, keep_threshold, scale, philox, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t launch_dropout_packed_backward(Dtype dtype, const void* grad,
                                           const StridedLayout& layout, const uint8_t* mask,
                                           int64_t numel, double scale, void* out,
                                           cudaStream_t stream) {
  if (numel == 0) return cudaSuccess;
  switch (dtype) {
    case Dtype::kFloat32:
      return backward_as<float>(grad, layout, mask, numel, scale, out, stream);
    case Dtype::kFloat64:
      return backward_as<double>(grad, layout, mask, numel, scale, out, stream);
    case Dtype::kFloat16:
      return backward_as<__half>(grad, layout, mask, numel, scale, out, stream);
    case Dtype::kBFloat16:
      return backward_as<__nv_bfloat16>(grad, layout, mask, numel, scale, out, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace zoobench::patches::cuda
