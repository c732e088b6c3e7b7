// Launchers of the patches' CUDA kernels. Plain C++ over raw pointers, sizes and a stream (no
// Torch headers), so the .cu files compile with nvcc alone; the ATen glue (device checks,
// dtype dispatch, allocation, streams, generators) lives in *_cuda.cpp. Each launcher returns
// the launch's cudaError_t.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace zoobench::patches::cuda {

// Element types the kernels take (half/bfloat16 compute in float).
enum class Dtype { kFloat32, kFloat64, kFloat16, kBFloat16 };

// --- torchvision::nms. `boxes` are [n, 4] contiguous, already sorted by descending score. Row
// i of `mask` ([n, ceil(n / 64)] 64-bit words, zero-initialised) gets bit j % 64 of word j / 64
// set for each j > i whose IoU with box i exceeds iou_threshold. kFloat32/kFloat64/kFloat16.
constexpr int kNmsBlock = 64;
cudaError_t launch_nms_mask(Dtype dtype, const void* boxes, int64_t n, double iou_threshold,
                            uint64_t* mask, cudaStream_t stream);

// --- torchvision::roi_align. input [N, C, H, W] and rois [K, 5] contiguous; output
// [K, C, pooled_height, pooled_width] contiguous. kFloat32/kFloat64/kFloat16.
struct RoiAlignShape {
  int64_t batch, channels, height, width;  // of the input (the gradient's target)
  int64_t num_rois, pooled_height, pooled_width, sampling_ratio;
  double spatial_scale;
  bool aligned;
};
cudaError_t launch_roi_align_forward(Dtype dtype, const void* input, const void* rois,
                                     const RoiAlignShape& shape, void* output, cudaStream_t stream);
// grad [K, C, PH, PW] with any strides (grad_strides, in elements); grad_input [N, C, H, W]
// contiguous and zero-initialised; accumulated with atomics.
cudaError_t launch_roi_align_backward(Dtype dtype, const void* grad, const int64_t grad_strides[4],
                                      const void* rois, const RoiAlignShape& shape,
                                      void* grad_input, cudaStream_t stream);

// --- zoobench::dropout_packed. A Philox seed/offset from the CUDA generator; under CUDA graph
// capture they are read on the device (*seed_ptr, *offset_ptr + offset_intragraph) when set.
struct PhiloxArgs {
  uint64_t seed = 0;
  uint64_t offset = 0;
  const int64_t* seed_ptr = nullptr;
  const int64_t* offset_ptr = nullptr;
  uint32_t offset_intragraph = 0;
};
// The forward's grid for `numel` elements on the current device: blocks of kThreads, no more
// than are resident at once (the kernel loops over warp tiles of 256 or 512 elements), and the
// Philox numbers each thread draws, which is the offset increment to reserve from the generator
// before the launch. The mask therefore depends on the seed, the offset, numel and the grid (the
// device's SM count), as the mask of ATen's dropout does.
struct DropoutForwardGrid {
  unsigned int blocks = 0;
  uint64_t randoms_per_thread = 0;
};
cudaError_t plan_dropout_packed_forward(Dtype dtype, int64_t numel, DropoutForwardGrid* grid);
// x and y contiguous, numel elements, any alignment (16-byte aligned data is read and written
// 16 bytes at a time); mask ceil(numel / 8) bytes; `grid` planned for the same dtype, numel and
// device. Thread t draws from Philox(seed, subsequence t, offset), one number for each element
// of its share of each tile it visits. Element i is kept when its 32-bit draw r < keep_threshold
// and is bit i % 8 of byte i / 8 (the unused high bits of the last byte are 0);
// y = x * (kept ? scale : 0).
cudaError_t launch_dropout_packed_forward(Dtype dtype, const DropoutForwardGrid& grid,
                                          const void* x, void* y, uint8_t* mask, int64_t numel,
                                          uint64_t keep_threshold, double scale,
                                          const PhiloxArgs& philox, cudaStream_t stream);
// grad in any layout (sizes/strides in elements, up to kMaxDims dims), read in logical
// row-major order; out contiguous: out[i] = grad[i] * (bit i of mask ? scale : 0). A contiguous
// grad, given as one dimension of stride 1, takes a vectorised path; other layouts go through
// their strides element by element.
constexpr int kMaxDims = 12;
struct StridedLayout {
  int dims = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};
};
cudaError_t launch_dropout_packed_backward(Dtype dtype, const void* grad,
                                           const StridedLayout& layout, const uint8_t* mask,
                                           int64_t numel, double scale, void* out,
                                           cudaStream_t stream);

}  // namespace zoobench::patches::cuda
