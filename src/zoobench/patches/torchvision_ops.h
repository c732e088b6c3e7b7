// torchvision's detection operators for processes without torchvision's native library:
// torchvision::nms, torchvision::roi_align and torchvision::_roi_align_backward, declared with
// torchvision's own schemas, with CPU (and, in CUDA builds, CUDA) kernels and roi_align's
// autograd. Registered only while the `torchvision_ops` patch is active.
#pragma once

#include <ATen/ATen.h>

#include "zoobench/patches/registry.h"
#include "zoobench/util/compat.h"

namespace zoobench::patches {

// Declares the operators that are not declared yet and registers kernels for every dispatch
// key that has none, so that torchvision's own library, when it was loaded first, keeps its
// kernels (torchvision loaded *after* this patch fails: its static registration would declare
// the operators a second time).
Registrations register_torchvision_ops();

// The kernels themselves (what the dispatcher calls), for tests and benchmarks.
namespace torchvision_kernels {

// Greedy NMS: indices of kept boxes (int64) in decreasing score order; boxes with equal scores
// are taken in input order (a stable sort, as torchvision's CPU kernel does). `dets` is [N, 4]
// (x1, y1, x2, y2); a box is suppressed when IoU > iou_threshold.
at::Tensor nms_cpu(const at::Tensor& dets, const at::Tensor& scores, double iou_threshold);
at::Tensor roi_align_forward_cpu(const at::Tensor& input, const at::Tensor& rois,
                                 double spatial_scale, int64_t pooled_height, int64_t pooled_width,
                                 int64_t sampling_ratio, bool aligned);
at::Tensor roi_align_backward_cpu(const at::Tensor& grad, const at::Tensor& rois,
                                  double spatial_scale, int64_t pooled_height, int64_t pooled_width,
                                  int64_t batch_size, int64_t channels, int64_t height,
                                  int64_t width, int64_t sampling_ratio, bool aligned);
// Autograd-connected roi_align (what the Autograd key runs).
at::Tensor roi_align_autograd(const at::Tensor& input, const at::Tensor& rois, double spatial_scale,
                              int64_t pooled_height, int64_t pooled_width, int64_t sampling_ratio,
                              bool aligned);
at::Tensor roi_align_backward_autograd(const at::Tensor& grad, const at::Tensor& rois,
                                       double spatial_scale, int64_t pooled_height,
                                       int64_t pooled_width, int64_t batch_size, int64_t channels,
                                       int64_t height, int64_t width, int64_t sampling_ratio,
                                       bool aligned);

// Autocast: run in float32, as torchvision's autocast kernels do.
at::Tensor nms_autocast(const at::Tensor& dets, const at::Tensor& scores, double iou_threshold);
at::Tensor roi_align_autocast(const at::Tensor& input, const at::Tensor& rois, double spatial_scale,
                              int64_t pooled_height, int64_t pooled_width, int64_t sampling_ratio,
                              bool aligned);

#if ZOOBENCH_WITH_CUDA
at::Tensor nms_cuda(const at::Tensor& dets, const at::Tensor& scores, double iou_threshold);
at::Tensor roi_align_forward_cuda(const at::Tensor& input, const at::Tensor& rois,
                                  double spatial_scale, int64_t pooled_height, int64_t pooled_width,
                                  int64_t sampling_ratio, bool aligned);
at::Tensor roi_align_backward_cuda(const at::Tensor& grad, const at::Tensor& rois,
                                   double spatial_scale, int64_t pooled_height,
                                   int64_t pooled_width, int64_t batch_size, int64_t channels,
                                   int64_t height, int64_t width, int64_t sampling_ratio,
                                   bool aligned);
#endif

}  // namespace torchvision_kernels
}  // namespace zoobench::patches
