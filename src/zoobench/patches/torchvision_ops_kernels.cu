// CUDA kernels of torchvision::nms (a bitmask of suppressions per 64-box tile; the greedy pass
// runs on the host) and torchvision::roi_align (one thread per output element; the backward
// scatters with atomics).
#include <cuda_runtime.h>

#include "zoobench/patches/cuda_launchers.h"
#include "zoobench/patches/cuda_numeric.cuh"
#include "zoobench/patches/roi_align_sampling.h"

namespace zoobench::patches::cuda {
namespace {

// IoU with explicitly rounded operations: no fused multiply-adds, so the comparison with the
// threshold decides exactly as the CPU kernel's float/double arithmetic does.
struct Rounded {
  __device__ static float mul(float a, float b) { return __fmul_rn(a, b); }
  __device__ static float add(float a, float b) { return __fadd_rn(a, b); }
  __device__ static float sub(float a, float b) { return __fsub_rn(a, b); }
  __device__ static float div(float a, float b) { return __fdiv_rn(a, b); }
  __device__ static double mul(double a, double b) { return __dmul_rn(a, b); }
  __device__ static double add(double a, double b) { return __dadd_rn(a, b); }
  __device__ static double sub(double a, double b) { return __dsub_rn(a, b); }
  __device__ static double div(double a, double b) { return __ddiv_rn(a, b); }
};

// std::max / std::min semantics, including which operand wins when a comparison is false.
template <typename A>
__device__ __forceinline__ A larger(A a, A b) {
  return a < b ? b : a;
}
template <typename A>
__device__ __forceinline__ A smaller(A a, A b) {
  return b < a ? b : a;
}

template <typename T>
__global__ void nms_mask_kernel(const T* boxes, int64_t n, double threshold, uint64_t* mask,
                                int64_t words) {
  using A = typename Arith<T>::type;
  using R = Rounded;
  const int64_t row_block = blockIdx.y;
  const int64_t col_block = blockIdx.x;
  // Boxes of an earlier tile come before every box of this row: never suppressed by it.
  if (col_block < row_block) return;
  __shared__ A tile[kNmsBlock * 4];
  const int64_t col_start = col_block * kNmsBlock;
  const int64_t remaining = n - col_start;
  const int col_count = static_cast<int>(remaining < kNmsBlock ? remaining : kNmsBlock);
  const int t = threadIdx.x;
  if (t < col_count) {
    for (int k = 0; k < 4; ++k) tile[4 * t + k] = to_arith(boxes[4 * (col_start + t) + k]);
  }
  __syncthreads();
  const int64_t i = row_block * kNmsBlock + t;
  if (i >= n) return;
  A box[4];
  for (int k = 0; k < 4; ++k) box[k] = to_arith(boxes[4 * i + k]);
  const A area_i = R::mul(R::sub(box[2], box[0]), R::sub(box[3], box[1]));
  uint64_t bits = 0;
  const int first = row_block == col_block ? t + 1 : 0;
  for (int c = first; c < col_count; ++c) {
    const A* other = tile + 4 * c;
    const A w = larger(A(0), R::sub(smaller(box[2], other[2]), larger(box[0], other[0])));
    const A h = larger(A(0), R::sub(smaller(box[3], other[3]), larger(box[1], other[1])));
    const A inter = R::mul(w, h);
    const A area_j = R::mul(R::sub(other[2], other[0]), R::sub(other[3], other[1]));
    const A iou = R::div(inter, R::sub(R::add(area_i, area_j), inter));
    if (static_cast<double>(iou) > threshold) bits |= uint64_t{1} << c;
  }
  mask[i * words + col_block] = bits;
}

struct Strides4 {
  int64_t s[4];
};

// One output element of roi_align ([K, C, PH, PW], row-major `index`): its roi, channel and
// bin, and the roi's sampling geometry. Forward and backward visit the same samples.
template <typename A>
struct RoiBin {
  int64_t n, c, ph, pw;
  RoiGeometry<A> g;
};

template <typename T, typename A = typename Arith<T>::type>
__device__ RoiBin<A> roi_bin(int64_t index, const T* rois, const RoiAlignShape& shape) {
  RoiBin<A> b;
  b.pw = index % shape.pooled_width;
  b.ph = (index / shape.pooled_width) % shape.pooled_height;
  b.c = (index / shape.pooled_width / shape.pooled_height) % shape.channels;
  b.n = index / shape.pooled_width / shape.pooled_height / shape.channels;
  A roi[5];
  for (int k = 0; k < 5; ++k) roi[k] = to_arith(rois[5 * b.n + k]);
  b.g = roi_geometry<A>(roi, static_cast<A>(shape.spatial_scale), shape.pooled_height,
                        shape.pooled_width, shape.sampling_ratio, shape.aligned);
  return b;
}

template <typename T>
__global__ void roi_align_forward_kernel(const T* input, const T* rois, RoiAlignShape shape,
                                         T* output, int64_t total) {
  using A = typename Arith<T>::type;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; index < total;
       index += stride) {
    const RoiBin<A> bin = roi_bin(index, rois, shape);
    const RoiGeometry<A>& g = bin.g;
    if (g.batch < 0 || g.batch >= shape.batch) {  // malformed roi: no out-of-bounds read
      output[index] = from_arith<T>(A(0));
      continue;
    }
    const T* plane = input + (g.batch * shape.channels + bin.c) * shape.height * shape.width;
    A sum = 0;
    for (int64_t iy = 0; iy < g.grid_h; ++iy) {
      const A y = sample_y(g, bin.ph, iy);
      for (int64_t ix = 0; ix < g.grid_w; ++ix) {
        const BilinearTap<A> tap =
            bilinear_tap<A>(shape.height, shape.width, y, sample_x(g, bin.pw, ix));
        if (!tap.valid) continue;
        sum += tap.w1 * to_arith(plane[tap.y_low * shape.width + tap.x_low]) +
               tap.w2 * to_arith(plane[tap.y_low * shape.width + tap.x_high]) +
               tap.w3 * to_arith(plane[tap.y_high * shape.width + tap.x_low]) +
               tap.w4 * to_arith(plane[tap.y_high * shape.width + tap.x_high]);
      }
    }
    output[index] = from_arith<T>(sum / g.count);
  }
}

template <typename T>
__global__ void roi_align_backward_kernel(const T* grad, Strides4 gs, const T* rois,
                                          RoiAlignShape shape, T* grad_input, int64_t total) {
  using A = typename Arith<T>::type;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; index < total;
       index += stride) {
    const RoiBin<A> bin = roi_bin(index, rois, shape);
    const RoiGeometry<A>& g = bin.g;
    if (g.batch < 0 || g.batch >= shape.batch) continue;
    const A top =
        to_arith(grad[bin.n * gs.s[0] + bin.c * gs.s[1] + bin.ph * gs.s[2] + bin.pw * gs.s[3]]);
    T* plane = grad_input + (g.batch * shape.channels + bin.c) * shape.height * shape.width;
    for (int64_t iy = 0; iy < g.grid_h; ++iy) {
      const A y = sample_y(g, bin.ph, iy);
      for (int64_t ix = 0; ix < g.grid_w; ++ix) {
        const BilinearTap<A> tap =
            bilinear_tap<A>(shape.height, shape.width, y, sample_x(g, bin.pw, ix));
        if (!tap.valid) continue;
        atomicAdd(plane + tap.y_low * shape.width + tap.x_low,
                  from_arith<T>(top * tap.w1 / g.count));
        atomicAdd(plane + tap.y_low * shape.width + tap.x_high,
                  from_arith<T>(top * tap.w2 / g.count));
        atomicAdd(plane + tap.y_high * shape.width + tap.x_low,
                  from_arith<T>(top * tap.w3 / g.count));
        atomicAdd(plane + tap.y_high * shape.width + tap.x_high,
                  from_arith<T>(top * tap.w4 / g.count));
      }
    }
  }
}

}  // namespace

cudaError_t launch_nms_mask(Dtype dtype, const void* boxes, int64_t n, double iou_threshold,
                            uint64_t* mask, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  const int64_t words = (n + kNmsBlock - 1) / kNmsBlock;
  if (words > 65535) return cudaErrorInvalidConfiguration;  // gridDim.y limit: n <= 4194240
  const dim3 grid(static_cast<unsigned int>(words), static_cast<unsigned int>(words));
  switch (dtype) {
    case Dtype::kFloat32:
      nms_mask_kernel<<<grid, kNmsBlock, 0, stream>>>(static_cast<const float*>(boxes), n,
                                                      iou_threshold, mask, words);
      break;
    case Dtype::kFloat64:
      nms_mask_kernel<<<grid, kNmsBlock, 0, stream>>>(static_cast<const double*>(boxes), n,
                                                      iou_threshold, mask, words);
      break;
    case Dtype::kFloat16:
      nms_mask_kernel<<<grid, kNmsBlock, 0, stream>>>(static_cast<const __half*>(boxes), n,
                                                      iou_threshold, mask, words);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launch_roi_align_forward(Dtype dtype, const void* input, const void* rois,
                                     const RoiAlignShape& shape, void* output,
                                     cudaStream_t stream) {
  const int64_t total = shape.num_rois * shape.channels * shape.pooled_height * shape.pooled_width;
  if (total == 0) return cudaSuccess;
  const unsigned int blocks = blocks_for(total);
  switch (dtype) {
    case Dtype::kFloat32:
      roi_align_forward_kernel<<<blocks, kThreads, 0, stream>>>(
          static_cast<const float*>(input), static_cast<const float*>(rois), shape,
          static_cast<float*>(output), total);
      break;
    case Dtype::kFloat64:
      roi_align_forward_kernel<<<blocks, kThreads, 0, stream>>>(
          static_cast<const double*>(input), static_cast<const double*>(rois), shape,
          static_cast<double*>(output), total);
      break;
    case Dtype::kFloat16:
      roi_align_forward_kernel<<<blocks, kThreads, 0, stream>>>(
          static_cast<const __half*>(input), static_cast<const __half*>(rois), shape,
          static_cast<__half*>(output), total);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launch_roi_align_backward(Dtype dtype, const void* grad, const int64_t grad_strides[4],
                                      const void* rois, const RoiAlignShape& shape,
                                      void* grad_input, cudaStream_t stream) {
  const int64_t total = shape.num_rois * shape.channels * shape.pooled_height * shape.pooled_width;
  if (total == 0) return cudaSuccess;
  const Strides4 gs{{grad_strides[0], grad_strides[1], grad_strides[2], grad_strides[3]}};
  const unsigned int blocks = blocks_for(total);
  switch (dtype) {
    case Dtype::kFloat32:
      roi_align_backward_kernel<<<blocks, kThreads, 0, stream>>>(
          static_cast<const float*>(grad), gs, static_cast<const float*>(rois), shape,
          static_cast<float*>(grad_input), total);
      break;
    case Dtype::kFloat64:
      roi_align_backward_kernel<<<blocks, kThreads, 0, stream>>>(
          static_cast<const double*>(grad), gs, static_cast<const double*>(rois), shape,
          static_cast<double*>(grad_input), total);
      break;
    case Dtype::kFloat16:
      roi_align_backward_kernel<<<blocks, kThreads, 0, stream>>>(
          static_cast<const __half*>(grad), gs, static_cast<const __half*>(rois), shape,
          static_cast<__half*>(grad_input), total);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace zoobench::patches::cuda
