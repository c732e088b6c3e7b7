// CPU kernels of torchvision::nms and torchvision::roi_align (forward and backward), written
// from the algorithms: greedy NMS over a stable descending sort, and RoIAlign's average of
// bilinear samples on a regular grid per bin (Mask R-CNN, He et al. 2017).
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "zoobench/patches/roi_align_sampling.h"
#include "zoobench/patches/torchvision_ops.h"

namespace zoobench::patches::torchvision_kernels {
namespace {

void check_nms_inputs(const at::Tensor& dets, const at::Tensor& scores) {
  TORCH_CHECK(dets.dim() == 2 && dets.size(1) == 4, "nms: boxes must be [N, 4], got ",
              dets.sizes());
  TORCH_CHECK(scores.dim() == 1 && scores.size(0) == dets.size(0),
              "nms: scores must be [N] with N = ", dets.size(0), ", got ", scores.sizes());
  TORCH_CHECK(dets.scalar_type() == scores.scalar_type(),
              "nms: boxes and scores must have the same dtype, got ", dets.scalar_type(), " and ",
              scores.scalar_type());
}

template <typename T>
at::Tensor nms_impl(const at::Tensor& dets, const at::Tensor& scores, double iou_threshold) {
  const int64_t n = dets.size(0);
  const at::Tensor boxes_t = dets.contiguous();
  const at::Tensor order_t =
      std::get<1>(scores.sort(/*stable=*/true, /*dim=*/0, /*descending=*/true)).contiguous();
  const T* boxes = boxes_t.data_ptr<T>();
  const int64_t* order = order_t.data_ptr<int64_t>();

  std::vector<T> area(n);
  for (int64_t i = 0; i < n; ++i) {
    const T* b = boxes + 4 * i;
    area[i] = (b[2] - b[0]) * (b[3] - b[1]);
  }
  std::vector<char> suppressed(n, 0);
  std::vector<int64_t> keep;
  for (int64_t a = 0; a < n; ++a) {
    const int64_t i = order[a];
    if (suppressed[i]) continue;
    keep.push_back(i);
    const T* bi = boxes + 4 * i;
    for (int64_t c = a + 1; c < n; ++c) {
      const int64_t j = order[c];
      if (suppressed[j]) continue;
      const T* bj = boxes + 4 * j;
      const T w = std::max(T(0), std::min(bi[2], bj[2]) - std::max(bi[0], bj[0]));
      const T h = std::max(T(0), std::min(bi[3], bj[3]) - std::max(bi[1], bj[1]));
      const T inter = w * h;
      const T iou = inter / (area[i] + area[j] - inter);
      if (iou > iou_threshold) suppressed[j] = 1;
    }
  }
  at::Tensor result =
      at::empty({static_cast<int64_t>(keep.size())}, dets.options().dtype(at::kLong));
  std::copy(keep.begin(), keep.end(), result.data_ptr<int64_t>());
  return result;
}

void check_roi_align_inputs(const at::Tensor& input, const at::Tensor& rois) {
  TORCH_CHECK(input.dim() == 4, "roi_align: input must be [N, C, H, W], got ", input.sizes());
  TORCH_CHECK(rois.dim() == 2 && rois.size(1) == 5,
              "roi_align: rois must be [K, 5] (batch index, x1, y1, x2, y2), got ", rois.sizes());
  TORCH_CHECK(input.scalar_type() == rois.scalar_type(),
              "roi_align: input and rois must have the same dtype, got ", input.scalar_type(),
              " and ", rois.scalar_type());
}

template <typename T>
void check_batch_indices(const T* rois, int64_t num_rois, int64_t batch_size) {
  for (int64_t n = 0; n < num_rois; ++n) {
    const auto b = static_cast<int64_t>(rois[5 * n]);
    TORCH_CHECK(b >= 0 && b < batch_size, "roi_align: roi ", n, " has batch index ", rois[5 * n],
                " outside [0, ", batch_size, ")");
  }
}

template <typename T>
void roi_align_forward_impl(const at::Tensor& input, const at::Tensor& rois, T spatial_scale,
                            int64_t pooled_height, int64_t pooled_width, int64_t sampling_ratio,
                            bool aligned, at::Tensor& output) {
  const int64_t channels = input.size(1), height = input.size(2), width = input.size(3);
  const int64_t num_rois = rois.size(0);
  const T* in = input.data_ptr<T>();
  const T* boxes = rois.data_ptr<T>();
  T* out = output.data_ptr<T>();
  check_batch_indices(boxes, num_rois, input.size(0));

  // One task per (roi, channel): every output element is written by exactly one task.
  at::parallel_for(0, num_rois * channels, 1, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t n = task / channels, c = task % channels;
      const RoiGeometry<T> g = roi_geometry<T>(boxes + 5 * n, spatial_scale, pooled_height,
                                               pooled_width, sampling_ratio, aligned);
      const T* plane = in + (g.batch * channels + c) * height * width;
      T* out_plane = out + (n * channels + c) * pooled_height * pooled_width;
      for (int64_t ph = 0; ph < pooled_height; ++ph) {
        for (int64_t pw = 0; pw < pooled_width; ++pw) {
          T sum = 0;
          for (int64_t iy = 0; iy < g.grid_h; ++iy) {
            const T y = sample_y(g, ph, iy);
            for (int64_t ix = 0; ix < g.grid_w; ++ix) {
              const BilinearTap<T> tap = bilinear_tap<T>(height, width, y, sample_x(g, pw, ix));
              if (!tap.valid) continue;
              sum += tap.w1 * plane[tap.y_low * width + tap.x_low] +
                     tap.w2 * plane[tap.y_low * width + tap.x_high] +
                     tap.w3 * plane[tap.y_high * width + tap.x_low] +
                     tap.w4 * plane[tap.y_high * width + tap.x_high];
            }
          }
          out_plane[ph * pooled_width + pw] = sum / g.count;
        }
      }
    }
  });
}

template <typename T>
void roi_align_backward_impl(const at::Tensor& grad, const at::Tensor& rois, T spatial_scale,
                             int64_t pooled_height, int64_t pooled_width, int64_t sampling_ratio,
                             bool aligned, at::Tensor& grad_input) {
  const int64_t channels = grad_input.size(1), height = grad_input.size(2),
                width = grad_input.size(3);
  const int64_t num_rois = rois.size(0);
  const T* g_out = grad.data_ptr<T>();
  const auto gs = grad.strides();
  const T* boxes = rois.data_ptr<T>();
  T* g_in = grad_input.data_ptr<T>();
  check_batch_indices(boxes, num_rois, grad_input.size(0));

  // Parallel over channels only: rois of the same image add into the same planes, and within
  // a channel they are visited in a fixed order, so the sums are deterministic.
  at::parallel_for(0, channels, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      for (int64_t n = 0; n < num_rois; ++n) {
        const RoiGeometry<T> g = roi_geometry<T>(boxes + 5 * n, spatial_scale, pooled_height,
                                                 pooled_width, sampling_ratio, aligned);
        T* plane = g_in + (g.batch * channels + c) * height * width;
        for (int64_t ph = 0; ph < pooled_height; ++ph) {
          for (int64_t pw = 0; pw < pooled_width; ++pw) {
            const T top = g_out[n * gs[0] + c * gs[1] + ph * gs[2] + pw * gs[3]];
            for (int64_t iy = 0; iy < g.grid_h; ++iy) {
              const T y = sample_y(g, ph, iy);
              for (int64_t ix = 0; ix < g.grid_w; ++ix) {
                const BilinearTap<T> tap = bilinear_tap<T>(height, width, y, sample_x(g, pw, ix));
                if (!tap.valid) continue;
                plane[tap.y_low * width + tap.x_low] += top * tap.w1 / g.count;
                plane[tap.y_low * width + tap.x_high] += top * tap.w2 / g.count;
                plane[tap.y_high * width + tap.x_low] += top * tap.w3 / g.count;
                plane[tap.y_high * width + tap.x_high] += top * tap.w4 / g.count;
              }
            }
          }
        }
      }
    }
  });
}

// Half and bfloat16 run through float, like the CUDA kernels accumulate.
bool is_reduced(const at::Tensor& t) {
  return t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16;
}

}  // namespace

at::Tensor nms_cpu(const at::Tensor& dets, const at::Tensor& scores, double iou_threshold) {
  check_nms_inputs(dets, scores);
  TORCH_CHECK(dets.device().is_cpu() && scores.device().is_cpu(),
              "nms (zoobench CPU kernel): boxes and scores must be CPU tensors");
  if (dets.size(0) == 0) return at::empty({0}, dets.options().dtype(at::kLong));
  at::Tensor result;
  AT_DISPATCH_FLOATING_TYPES(dets.scalar_type(), "zoobench_nms_cpu",
                             [&] { result = nms_impl<scalar_t>(dets, scores, iou_threshold); });
  return result;
}

at::Tensor roi_align_forward_cpu(const at::Tensor& input, const at::Tensor& rois,
                                 double spatial_scale, int64_t pooled_height, int64_t pooled_width,
                                 int64_t sampling_ratio, bool aligned) {
  check_roi_align_inputs(input, rois);
  TORCH_CHECK(input.device().is_cpu() && rois.device().is_cpu(),
              "roi_align (zoobench CPU kernel): input and rois must be CPU tensors");
  if (is_reduced(input)) {
    return roi_align_forward_cpu(input.to(at::kFloat), rois.to(at::kFloat), spatial_scale,
                                 pooled_height, pooled_width, sampling_ratio, aligned)
        .to(input.scalar_type());
  }
  at::Tensor output =
      at::zeros({rois.size(0), input.size(1), pooled_height, pooled_width}, input.options());
  if (output.numel() == 0) return output;
  const at::Tensor in = input.contiguous();
  const at::Tensor boxes = rois.contiguous();
  AT_DISPATCH_FLOATING_TYPES(input.scalar_type(), "zoobench_roi_align_forward_cpu", [&] {
    roi_align_forward_impl<scalar_t>(in, boxes, static_cast<scalar_t>(spatial_scale), pooled_height,
                                     pooled_width, sampling_ratio, aligned, output);
  });
  return output;
}

at::Tensor roi_align_backward_cpu(const at::Tensor& grad, const at::Tensor& rois,
                                  double spatial_scale, int64_t pooled_height, int64_t pooled_width,
                                  int64_t batch_size, int64_t channels, int64_t height,
                                  int64_t width, int64_t sampling_ratio, bool aligned) {
  TORCH_CHECK(grad.dim() == 4, "roi_align backward: grad must be [K, C, PH, PW], got ",
              grad.sizes());
  TORCH_CHECK(rois.dim() == 2 && rois.size(1) == 5, "roi_align backward: rois must be [K, 5]");
  TORCH_CHECK(grad.scalar_type() == rois.scalar_type(),
              "roi_align backward: grad and rois must have the same dtype");
  TORCH_CHECK(grad.device().is_cpu() && rois.device().is_cpu(),
              "roi_align backward (zoobench CPU kernel): grad and rois must be CPU tensors");
  if (is_reduced(grad)) {
    return roi_align_backward_cpu(grad.to(at::kFloat), rois.to(at::kFloat), spatial_scale,
                                  pooled_height, pooled_width, batch_size, channels, height, width,
                                  sampling_ratio, aligned)
        .to(grad.scalar_type());
  }
  at::Tensor grad_input = at::zeros({batch_size, channels, height, width}, grad.options());
  if (grad.numel() == 0 || grad_input.numel() == 0) return grad_input;
  const at::Tensor boxes = rois.contiguous();
  AT_DISPATCH_FLOATING_TYPES(grad.scalar_type(), "zoobench_roi_align_backward_cpu", [&] {
    roi_align_backward_impl<scalar_t>(grad, boxes, static_cast<scalar_t>(spatial_scale),
                                      pooled_height, pooled_width, sampling_ratio, aligned,
                                      grad_input);
  });
  return grad_input;
}

}  // namespace zoobench::patches::torchvision_kernels
