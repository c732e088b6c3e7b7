// ATen glue of the torchvision ops' CUDA kernels (cuda_launchers.h): argument checks, dtype,
// allocation and stream, and NMS's greedy pass over the suppression bitmask on the host.
#include "zoobench/patches/torchvision_ops.h"

#if ZOOBENCH_WITH_CUDA

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include <cstring>
#include <vector>

#include "zoobench/patches/cuda_glue.h"

namespace zoobench::patches::torchvision_kernels {
namespace {

void check_same_cuda_device(const at::Tensor& a, const at::Tensor& b, const char* op) {
  TORCH_CHECK(a.is_cuda() && b.is_cuda() && a.device() == b.device(), op,
              " (zoobench CUDA kernel): tensors must be on the same CUDA device, got ", a.device(),
              " and ", b.device());
}

cuda::RoiAlignShape shape_of(int64_t batch, int64_t channels, int64_t height, int64_t width,
                             int64_t num_rois, double spatial_scale, int64_t pooled_height,
                             int64_t pooled_width, int64_t sampling_ratio, bool aligned) {
  cuda::RoiAlignShape s;
  s.batch = batch;
  s.channels = channels;
  s.height = height;
  s.width = width;
  s.num_rois = num_rois;
  s.pooled_height = pooled_height;
  s.pooled_width = pooled_width;
  s.sampling_ratio = sampling_ratio;
  s.spatial_scale = spatial_scale;
  s.aligned = aligned;
  return s;
}

}  // namespace

at::Tensor nms_cuda(const at::Tensor& dets, const at::Tensor& scores, double iou_threshold) {
  TORCH_CHECK(dets.dim() == 2 && dets.size(1) == 4, "nms: boxes must be [N, 4], got ",
              dets.sizes());
  TORCH_CHECK(scores.dim() == 1 && scores.size(0) == dets.size(0),
              "nms: scores must be [N] with N = ", dets.size(0), ", got ", scores.sizes());
  TORCH_CHECK(dets.scalar_type() == scores.scalar_type(),
              "nms: boxes and scores must have the same dtype");
  check_same_cuda_device(dets, scores, "nms");
  c10::cuda::CUDAGuard guard(dets.device());
  const int64_t n = dets.size(0);
  if (n == 0) return at::empty({0}, dets.options().dtype(at::kLong));

  // Stable, like the CPU kernel: equal scores keep their input order.
  const at::Tensor order =
      std::get<1>(scores.sort(/*stable=*/true, /*dim=*/0, /*descending=*/true));
  const at::Tensor sorted = dets.index_select(0, order).contiguous();
  const int64_t words = (n + cuda::kNmsBlock - 1) / cuda::kNmsBlock;
  at::Tensor mask = at::zeros({n, words}, dets.options().dtype(at::kLong));
  cuda::check_launch(
      cuda::launch_nms_mask(cuda::kernel_dtype(dets, "nms", /*bfloat16_supported=*/false),
                            sorted.data_ptr(), n, iou_threshold,
                            reinterpret_cast<uint64_t*>(mask.data_ptr<int64_t>()),
                            at::cuda::getCurrentCUDAStream()),
      "nms");
  // The greedy pass is sequential: a few microseconds per box on the host.
  const at::Tensor host_mask = mask.cpu();
  const auto* rows = reinterpret_cast<const uint64_t*>(host_mask.data_ptr<int64_t>());
  std::vector<uint64_t> removed(words, 0);
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < n; ++i) {
    if ((removed[i / 64] >> (i % 64)) & 1) continue;
    kept.push_back(i);
    const uint64_t* row = rows + i * words;
    for (int64_t w = i / 64; w < words; ++w) removed[w] |= row[w];
  }
  at::Tensor kept_positions = at::empty({static_cast<int64_t>(kept.size())}, at::kLong);
  std::memcpy(kept_positions.data_ptr<int64_t>(), kept.data(), kept.size() * sizeof(int64_t));
  return order.index_select(0, kept_positions.to(dets.device()));
}

at::Tensor roi_align_forward_cuda(const at::Tensor& input, const at::Tensor& rois,
                                  double spatial_scale, int64_t pooled_height, int64_t pooled_width,
                                  int64_t sampling_ratio, bool aligned) {
  TORCH_CHECK(input.dim() == 4, "roi_align: input must be [N, C, H, W], got ", input.sizes());
  TORCH_CHECK(rois.dim() == 2 && rois.size(1) == 5, "roi_align: rois must be [K, 5], got ",
              rois.sizes());
  TORCH_CHECK(input.scalar_type() == rois.scalar_type(),
              "roi_align: input and rois must have the same dtype");
  check_same_cuda_device(input, rois, "roi_align");
  c10::cuda::CUDAGuard guard(input.device());
  if (input.scalar_type() == at::kBFloat16) {
    return roi_align_forward_cuda(input.to(at::kFloat), rois.to(at::kFloat), spatial_scale,
                                  pooled_height, pooled_width, sampling_ratio, aligned)
        .to(at::kBFloat16);
  }
  at::Tensor output =
      at::zeros({rois.size(0), input.size(1), pooled_height, pooled_width}, input.options());
  if (output.numel() == 0) return output;
  const at::Tensor in = input.contiguous();
  const at::Tensor boxes = rois.contiguous();
  const auto shape =
      shape_of(input.size(0), input.size(1), input.size(2), input.size(3), rois.size(0),
               spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned);
  cuda::check_launch(
      cuda::launch_roi_align_forward(
          cuda::kernel_dtype(input, "roi_align", /*bfloat16_supported=*/false), in.data_ptr(),
          boxes.data_ptr(), shape, output.data_ptr(), at::cuda::getCurrentCUDAStream()),
      "roi_align");
  return output;
}

at::Tensor roi_align_backward_cuda(const at::Tensor& grad, const at::Tensor& rois,
                                   double spatial_scale, int64_t pooled_height,
                                   int64_t pooled_width, int64_t batch_size, int64_t channels,
                                   int64_t height, int64_t width, int64_t sampling_ratio,
                                   bool aligned) {
  TORCH_CHECK(grad.dim() == 4 && grad.size(1) == channels && grad.size(2) == pooled_height &&
                  grad.size(3) == pooled_width,
              "roi_align backward: grad must be [K, ", channels, ", ", pooled_height, ", ",
              pooled_width, "], got ", grad.sizes());
  TORCH_CHECK(rois.dim() == 2 && rois.size(1) == 5 && rois.size(0) == grad.size(0),
              "roi_align backward: rois must be [K, 5] with K = ", grad.size(0));
  TORCH_CHECK(grad.scalar_type() == rois.scalar_type(),
              "roi_align backward: grad and rois must have the same dtype");
  check_same_cuda_device(grad, rois, "roi_align backward");
  c10::cuda::CUDAGuard guard(grad.device());
  if (grad.scalar_type() == at::kBFloat16) {
    return roi_align_backward_cuda(grad.to(at::kFloat), rois.to(at::kFloat), spatial_scale,
                                   pooled_height, pooled_width, batch_size, channels, height, width,
                                   sampling_ratio, aligned)
        .to(at::kBFloat16);
  }
  // Atomic adds from many rois into one map: the summation order varies between runs.
  at::globalContext().alertNotDeterministic("zoobench roi_align_backward (CUDA)");
  at::Tensor grad_input = at::zeros({batch_size, channels, height, width}, grad.options());
  if (grad.numel() == 0 || grad_input.numel() == 0) return grad_input;
  const int64_t strides[4] = {grad.stride(0), grad.stride(1), grad.stride(2), grad.stride(3)};
  const at::Tensor boxes = rois.contiguous();
  const auto shape = shape_of(batch_size, channels, height, width, rois.size(0), spatial_scale,
                              pooled_height, pooled_width, sampling_ratio, aligned);
  cuda::check_launch(
      cuda::launch_roi_align_backward(
          cuda::kernel_dtype(grad, "roi_align backward", /*bfloat16_supported=*/false),
          grad.data_ptr(), strides, boxes.data_ptr(), shape, grad_input.data_ptr(),
          at::cuda::getCurrentCUDAStream()),
      "roi_align backward");
  return grad_input;
}

}  // namespace zoobench::patches::torchvision_kernels

#endif  // ZOOBENCH_WITH_CUDA
