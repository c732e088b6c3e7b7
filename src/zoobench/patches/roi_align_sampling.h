// RoIAlign's sampling geometry, shared by the CPU and CUDA kernels (no Torch headers, so the
// .cu files include it too): where a roi's bins are, how many bilinear samples each bin
// averages, and the four taps and weights of one sample. T is the arithmetic type (float for
// half inputs).
#pragma once

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define ZOOBENCH_HOST_DEVICE __host__ __device__
#else
#define ZOOBENCH_HOST_DEVICE
#endif

namespace zoobench::patches {

template <typename T>
struct RoiGeometry {
  int64_t batch;
  T start_h, start_w;      // top-left corner in feature-map coordinates
  T bin_h, bin_w;          // bin size
  int64_t grid_h, grid_w;  // samples per bin along each axis
  T count;                 // samples per bin, at least 1
};

// `roi` is (batch index, x1, y1, x2, y2) in image coordinates. aligned=true shifts by half a
// pixel so that pixel centres sit at integer + 0.5; aligned=false keeps the legacy behaviour
// of forcing degenerate rois to at least 1x1. sampling_ratio <= 0 picks an adaptive grid of
// ceil(roi size / pooled size) samples per bin.
template <typename T>
ZOOBENCH_HOST_DEVICE inline RoiGeometry<T> roi_geometry(const T* roi, T spatial_scale,
                                                        int64_t pooled_height, int64_t pooled_width,
                                                        int64_t sampling_ratio, bool aligned) {
  RoiGeometry<T> g;
  g.batch = static_cast<int64_t>(roi[0]);
  const T offset = aligned ? static_cast<T>(0.5) : static_cast<T>(0);
  g.start_w = roi[1] * spatial_scale - offset;
  g.start_h = roi[2] * spatial_scale - offset;
  const T end_w = roi[3] * spatial_scale - offset;
  const T end_h = roi[4] * spatial_scale - offset;
  T roi_w = end_w - g.start_w;
  T roi_h = end_h - g.start_h;
  if (!aligned) {
    roi_w = roi_w < static_cast<T>(1) ? static_cast<T>(1) : roi_w;
    roi_h = roi_h < static_cast<T>(1) ? static_cast<T>(1) : roi_h;
  }
  g.bin_h = roi_h / static_cast<T>(pooled_height);
  g.bin_w = roi_w / static_cast<T>(pooled_width);
  // ceil is exact in any precision, so doing it in double changes nothing.
  g.grid_h =
      sampling_ratio > 0
          ? sampling_ratio
          : static_cast<int64_t>(ceil(static_cast<double>(roi_h / static_cast<T>(pooled_height))));
  g.grid_w =
      sampling_ratio > 0
          ? sampling_ratio
          : static_cast<int64_t>(ceil(static_cast<double>(roi_w / static_cast<T>(pooled_width))));
  const int64_t samples = g.grid_h * g.grid_w;
  g.count = static_cast<T>(samples > 1 ? samples : 1);
  return g;
}

// Sample iy of bin row ph: bins are split into grid_h equal parts, sampled at their centres.
template <typename T>
ZOOBENCH_HOST_DEVICE inline T sample_y(const RoiGeometry<T>& g, int64_t ph, int64_t iy) {
  return g.start_h + static_cast<T>(ph) * g.bin_h +
         static_cast<T>(static_cast<float>(iy) + 0.5f) * g.bin_h / static_cast<T>(g.grid_h);
}
template <typename T>
ZOOBENCH_HOST_DEVICE inline T sample_x(const RoiGeometry<T>& g, int64_t pw, int64_t ix) {
  return g.start_w + static_cast<T>(pw) * g.bin_w +
         static_cast<T>(static_cast<float>(ix) + 0.5f) * g.bin_w / static_cast<T>(g.grid_w);
}

template <typename T>
struct BilinearTap {
  bool valid;  // false: the sample lies more than one pixel outside the map and counts as 0
  int64_t y_low, y_high, x_low, x_high;
  T w1, w2, w3,
      w4;  // weights of (y_low, x_low), (y_low, x_high), (y_high, x_low), (y_high, x_high)
};

// Bilinear interpolation at (y, x) of a height x width map; samples within one pixel outside
// the map are clamped to its border.
template <typename T>
ZOOBENCH_HOST_DEVICE inline BilinearTap<T> bilinear_tap(int64_t height, int64_t width, T y, T x) {
  BilinearTap<T> t{};
  if (y < static_cast<T>(-1) || y > static_cast<T>(height) || x < static_cast<T>(-1) ||
      x > static_cast<T>(width)) {
    t.valid = false;
    return t;
  }
  t.valid = true;
  if (y <= static_cast<T>(0)) y = 0;
  if (x <= static_cast<T>(0)) x = 0;
  t.y_low = static_cast<int64_t>(y);
  t.x_low = static_cast<int64_t>(x);
  if (t.y_low >= height - 1) {
    t.y_high = t.y_low = height - 1;
    y = static_cast<T>(t.y_low);
  } else {
    t.y_high = t.y_low + 1;
  }
  if (t.x_low >= width - 1) {
    t.x_high = t.x_low = width - 1;
    x = static_cast<T>(t.x_low);
  } else {
    t.x_high = t.x_low + 1;
  }
  const T ly = y - static_cast<T>(t.y_low);
  const T lx = x - static_cast<T>(t.x_low);
  const T hy = static_cast<T>(1) - ly;
  const T hx = static_cast<T>(1) - lx;
  t.w1 = hy * hx;
  t.w2 = hy * lx;
  t.w3 = ly * hx;
  t.w4 = ly * lx;
  return t;
}

}  // namespace zoobench::patches
