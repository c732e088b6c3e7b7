// CUDA kernels of zoobench::dropout_packed, written to run at memory speed. Both directions walk
// the tensor in warp tiles: vector j of lane l is the tile's 16-byte vector 32j + l, so each load
// and store instruction of a warp covers 512 contiguous bytes, and every lane has two or more
// loads in flight. The forward's grid fills the device once and loops over the tiles; each thread
// initialises its own Philox subsequence once and draws one number per element, and the lanes
// exchange their keep bits by shuffles, so each mask byte is assembled in registers and a warp
// stores 32 of them at once. The backward of a contiguous gradient reads one mask byte per 8
// elements; other layouts are read through their strides, one thread per element.
#include <cuda_runtime.h>
#include <curand_kernel.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "zoobench/patches/cuda_launchers.h"
#include "zoobench/patches/cuda_numeric.cuh"

namespace zoobench::patches::cuda {
namespace {

constexpr int kWarp = 32;
constexpr unsigned int kFullWarp = 0xffffffffu;

// The warp tile of element type T.
template <typename T>
struct Tile {
  static constexpr int kVec = 16 / sizeof(T);  // elements in one 16-byte access
  static_assert(kVec <= 8 && 8 % kVec == 0, "a vector's keep bits must lie in one mask byte");
  static constexpr int kVecsPerByte = 8 / kVec;
  // Whole mask bytes per lane, and at least 32 bytes of loads in flight per lane.
  static constexpr int kVecsPerLane = kVecsPerByte > 2 ? kVecsPerByte : 2;
  static constexpr int kLaneElems = kVec * kVecsPerLane;  // 8 or 16: one or two mask bytes
  static constexpr int kLaneMaskBytes = kLaneElems / 8;
  static constexpr int kElems = kWarp * kLaneElems;
  static constexpr int kWarpsPerBlock = kThreads / kWarp;

  static __host__ __device__ int64_t count(int64_t numel) { return (numel + kElems - 1) / kElems; }
  // Index of the first element of vector j of `lane` in the tile that starts at `base`.
  static __device__ int64_t first(int64_t base, int j, int lane) {
    return base + (static_cast<int64_t>(j) * kWarp + lane) * kVec;
  }
  // How many of the kVec elements from `first` on exist (0 past the end).
  static __device__ int present(int64_t first, int64_t numel) {
    const int64_t left = numel - first;
    return left >= kVec ? kVec : left > 0 ? static_cast<int>(left) : 0;
  }
};

template <typename T>
struct alignas(16) Vector {
  T v[Tile<T>::kVec];
};

// Elements [first, first + kVec) of p, of which `present` exist. A whole vector at a 16-byte
// aligned address is one access; the tail and tensors whose data pointer is not 16-byte aligned
// (views with a storage offset) go element by element, and missing elements read as zero.
template <typename T>
__device__ __forceinline__ Vector<T> load_vector(const T* __restrict__ p, int64_t first,
                                                 int present, bool aligned) {
  if (aligned && present == Tile<T>::kVec) return *reinterpret_cast<const Vector<T>*>(p + first);
  Vector<T> out;
#pragma unroll
  for (int e = 0; e < Tile<T>::kVec; ++e) out.v[e] = e < present ? p[first + e] : from_arith<T>(0);
  return out;
}

template <typename T>
__device__ __forceinline__ void store_vector(T* __restrict__ p, int64_t first, int present,
                                             bool aligned, const Vector<T>& value) {
  if (aligned && present == Tile<T>::kVec) {
    *reinterpret_cast<Vector<T>*>(p + first) = value;
    return;
  }
#pragma unroll
  for (int e = 0; e < Tile<T>::kVec; ++e) {
    if (e < present) p[first + e] = value.v[e];
  }
}

inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// This thread's Philox stream: subsequence = its index in the grid, seed and offset from the
// generator (read on the device under CUDA graph capture, where replays advance them).
__device__ __forceinline__ curandStatePhilox4_32_10_t philox_stream(const PhiloxArgs& philox,
                                                                    uint64_t subsequence) {
  const uint64_t seed =
      philox.seed_ptr != nullptr ? static_cast<uint64_t>(*philox.seed_ptr) : philox.seed;
  const uint64_t offset = philox.offset_ptr != nullptr
                              ? static_cast<uint64_t>(*philox.offset_ptr) + philox.offset_intragraph
                              : philox.offset;
  curandStatePhilox4_32_10_t state;
  curand_init(seed, subsequence, offset, &state);
  return state;
}

template <int N>
__device__ __forceinline__ void draw(curandStatePhilox4_32_10_t& state, uint32_t (&r)[N]) {
  static_assert(N % 4 == 0, "curand4 draws four numbers at a time");
#pragma unroll
  for (int i = 0; i < N; i += 4) {
    const uint4 q = curand4(&state);
    r[i] = q.x;
    r[i + 1] = q.y;
    r[i + 2] = q.z;
    r[i + 3] = q.w;
  }
}

// Byte k of the tile's mask, gathered from the lanes' keep bits (bit kVec * j + e of a lane is
// element e of its vector j). Byte k covers the tile's vectors kVecsPerByte * k + m; every lane
// of the warp must call it.
template <typename T>
__device__ __forceinline__ uint8_t gather_mask_byte(uint32_t keep_bits, int k) {
  using S = Tile<T>;
  uint32_t byte = 0;
#pragma unroll
  for (int m = 0; m < S::kVecsPerByte; ++m) {
    const int vector = k * S::kVecsPerByte + m;
    const uint32_t lane_bits = __shfl_sync(kFullWarp, keep_bits, vector % kWarp);
    const uint32_t vector_bits = (lane_bits >> (vector / kWarp * S::kVec)) & ((1u << S::kVec) - 1);
    byte |= vector_bits << (m * S::kVec);
  }
  return static_cast<uint8_t>(byte);
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    dropout_forward_kernel(const T* __restrict__ x, T* __restrict__ y, uint8_t* __restrict__ mask,
                           int64_t numel, bool aligned, uint64_t keep_threshold,
                           typename Arith<T>::type scale, PhiloxArgs philox) {
  using S = Tile<T>;
  using A = typename Arith<T>::type;
  const int64_t thread = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int lane = threadIdx.x % kWarp;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * S::kWarpsPerBlock;
  const int64_t mask_bytes = (numel + 7) / 8;
  curandStatePhilox4_32_10_t state = philox_stream(philox, static_cast<uint64_t>(thread));
  const int64_t tiles = S::count(numel);
  for (int64_t tile = thread / kWarp; tile < tiles; tile += warps) {
    const int64_t base = tile * S::kElems;
    Vector<T> v[S::kVecsPerLane];
    int present[S::kVecsPerLane];
#pragma unroll
    for (int j = 0; j < S::kVecsPerLane; ++j) {
      present[j] = S::present(S::first(base, j, lane), numel);
      v[j] = load_vector(x, S::first(base, j, lane), present[j], aligned);
    }
    uint32_t r[S::kLaneElems];
    draw(state, r);
    uint32_t keep_bits = 0;
#pragma unroll
    for (int j = 0; j < S::kVecsPerLane; ++j) {
#pragma unroll
      for (int e = 0; e < S::kVec; ++e) {
        // Elements past the end stay dropped: the unused bits of the last byte are 0.
        const bool keep = e < present[j] && r[j * S::kVec + e] < keep_threshold;
        keep_bits |= static_cast<uint32_t>(keep) << (j * S::kVec + e);
        v[j].v[e] = from_arith<T>(to_arith(v[j].v[e]) * (keep ? scale : A(0)));
      }
      store_vector(y, S::first(base, j, lane), present[j], aligned, v[j]);
    }
#pragma unroll
    for (int b = 0; b < S::kLaneMaskBytes; ++b) {
      const int k = b * kWarp + lane;
      const uint8_t byte = gather_mask_byte<T>(keep_bits, k);
      if (base / 8 + k < mask_bytes) mask[base / 8 + k] = byte;
    }
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    dropout_backward_contiguous_kernel(const T* __restrict__ grad, const uint8_t* __restrict__ mask,
                                       int64_t numel, bool aligned, typename Arith<T>::type scale,
                                       T* __restrict__ out) {
  using S = Tile<T>;
  using A = typename Arith<T>::type;
  const int64_t thread = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int lane = threadIdx.x % kWarp;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * S::kWarpsPerBlock;
  const int64_t tiles = S::count(numel);
  for (int64_t tile = thread / kWarp; tile < tiles; tile += warps) {
    const int64_t base = tile * S::kElems;
    Vector<T> v[S::kVecsPerLane];
    int present[S::kVecsPerLane];
    uint32_t bits[S::kVecsPerLane];
#pragma unroll
    for (int j = 0; j < S::kVecsPerLane; ++j) {
      const int64_t first = S::first(base, j, lane);
      present[j] = S::present(first, numel);
      v[j] = load_vector(grad, first, present[j], aligned);
      // A vector's kVec bits lie in one byte: kVec divides 8 and `first`.
      bits[j] = present[j] > 0 ? mask[first >> 3] >> (first & 7) : 0;
    }
#pragma unroll
    for (int j = 0; j < S::kVecsPerLane; ++j) {
#pragma unroll
      for (int e = 0; e < S::kVec; ++e) {
        const bool keep = (bits[j] >> e) & 1;
        v[j].v[e] = from_arith<T>(to_arith(v[j].v[e]) * (keep ? scale : A(0)));
      }
      store_vector(out, S::first(base, j, lane), present[j], aligned, v[j]);
    }
  }
}

template <typename T>
__global__ void dropout_backward_strided_kernel(const T* grad, StridedLayout layout,
                                                const uint8_t* mask, int64_t numel,
                                                typename Arith<T>::type scale, T* out) {
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

// Blocks of kThreads of `kernel` that the current device holds at once: SMs times blocks per SM.
// Asked of the runtime once per device (every call needs it, and the occupancy query costs
// microseconds of host time).
template <auto kernel>
cudaError_t device_resident_blocks(int64_t* resident) {
  constexpr int kCachedDevices = 64;
  static std::atomic<int64_t> cached[kCachedDevices] = {};
  int device = 0;
  cudaError_t error = cudaGetDevice(&device);
  if (error != cudaSuccess) return error;
  if (device < kCachedDevices) {
    *resident = cached[device].load();
    if (*resident > 0) return cudaSuccess;
  }
  int sms = 0;
  int per_sm = 0;
  error = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (error == cudaSuccess) {
    error = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0);
  }
  if (error != cudaSuccess) return error;
  *resident = static_cast<int64_t>(sms) * std::max(per_sm, 1);
  if (device < kCachedDevices) cached[device].store(*resident);
  return cudaSuccess;
}

// At most `needed` blocks, and no more than are resident at once: a grid-stride loop then gives
// every thread an equal share, with no second wave of blocks.
template <auto kernel>
cudaError_t resident_grid(int64_t needed, unsigned int* blocks) {
  int64_t resident = 0;
  const cudaError_t error = device_resident_blocks<kernel>(&resident);
  if (error != cudaSuccess) return error;
  *blocks = static_cast<unsigned int>(std::max<int64_t>(1, std::min(needed, resident)));
  return cudaSuccess;
}

template <typename T>
cudaError_t plan_forward_as(int64_t numel, DropoutForwardGrid* grid) {
  using S = Tile<T>;
  const int64_t tiles = S::count(numel);
  const int64_t needed = (tiles + S::kWarpsPerBlock - 1) / S::kWarpsPerBlock;
  const cudaError_t error = resident_grid<dropout_forward_kernel<T>>(needed, &grid->blocks);
  if (error != cudaSuccess) return error;
  // Each warp visits at most ceil(tiles / warps) tiles and draws kLaneElems numbers per lane in
  // each: the offset increment that keeps this call's numbers apart from the next call's.
  const int64_t warps = static_cast<int64_t>(grid->blocks) * S::kWarpsPerBlock;
  grid->randoms_per_thread = static_cast<uint64_t>(S::kLaneElems) * ((tiles + warps - 1) / warps);
  return cudaSuccess;
}

template <typename T>
cudaError_t forward_as(const DropoutForwardGrid& grid, const void* x, void* y, uint8_t* mask,
                       int64_t numel, uint64_t keep_threshold, double scale,
                       const PhiloxArgs& philox, cudaStream_t stream) {
  using A = typename Arith<T>::type;
  dropout_forward_kernel<T><<<grid.blocks, kThreads, 0, stream>>>(
      static_cast<const T*>(x), static_cast<T*>(y), mask, numel, aligned16(x) && aligned16(y),
      keep_threshold, static_cast<A>(scale), philox);
  return cudaGetLastError();
}

// The host side collapses a contiguous gradient to one dimension of stride 1.
bool is_contiguous(const StridedLayout& layout) {
  return layout.dims == 1 && layout.strides[0] == 1;
}

template <typename T>
cudaError_t backward_as(const void* grad, const StridedLayout& layout, const uint8_t* mask,
                        int64_t numel, double scale, void* out, cudaStream_t stream) {
  using A = typename Arith<T>::type;
  const T* g = static_cast<const T*>(grad);
  T* o = static_cast<T*>(out);
  if (!is_contiguous(layout)) {
    dropout_backward_strided_kernel<T>
        <<<blocks_for(numel), kThreads, 0, stream>>>(g, layout, mask, numel, A(scale), o);
    return cudaGetLastError();
  }
  using S = Tile<T>;
  const int64_t needed = (S::count(numel) + S::kWarpsPerBlock - 1) / S::kWarpsPerBlock;
  unsigned int blocks = 0;
  const cudaError_t error = resident_grid<dropout_backward_contiguous_kernel<T>>(needed, &blocks);
  if (error != cudaSuccess) return error;
  dropout_backward_contiguous_kernel<T>
      <<<blocks, kThreads, 0, stream>>>(g, mask, numel, aligned16(g) && aligned16(o), A(scale), o);
  return cudaGetLastError();
}

// Calls f(T{}) with the element type of `dtype`.
template <typename F>
cudaError_t with_element_type(Dtype dtype, F&& f) {
  switch (dtype) {
    case Dtype::kFloat32:
      return f(float{});
    case Dtype::kFloat64:
      return f(double{});
    case Dtype::kFloat16:
      return f(__half{});
    case Dtype::kBFloat16:
      return f(__nv_bfloat16{});
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t plan_dropout_packed_forward(Dtype dtype, int64_t numel, DropoutForwardGrid* grid) {
  *grid = DropoutForwardGrid{};
  if (numel == 0) return cudaSuccess;
  return with_element_type(dtype,
                           [&](auto tag) { return plan_forward_as<decltype(tag)>(numel, grid); });
}

cudaError_t launch_dropout_packed_forward(Dtype dtype, const DropoutForwardGrid& grid,
                                          const void* x, void* y, uint8_t* mask, int64_t numel,
                                          uint64_t keep_threshold, double scale,
                                          const PhiloxArgs& philox, cudaStream_t stream) {
  if (numel == 0) return cudaSuccess;
  return with_element_type(dtype, [&](auto tag) {
    return forward_as<decltype(tag)>(grid, x, y, mask, numel, keep_threshold, scale, philox,
                                     stream);
  });
}

cudaError_t launch_dropout_packed_backward(Dtype dtype, const void* grad,
                                           const StridedLayout& layout, const uint8_t* mask,
                                           int64_t numel, double scale, void* out,
                                           cudaStream_t stream) {
  if (numel == 0) return cudaSuccess;
  return with_element_type(dtype, [&](auto tag) {
    return backward_as<decltype(tag)>(grad, layout, mask, numel, scale, out, stream);
  });
}

}  // namespace zoobench::patches::cuda
