// Everything the `same` rules and the diagnosis need from one (ref, res[, fp64]) tensor triple,
// gathered in one pass over the data where it lives: the exact torch.allclose verdict, the
// smallest tolerance allclose would accept, |ref - res| statistics and the float64 squared-error
// sums behind rmse. Internal to the accuracy component.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace zoobench::accuracy::detail {

struct ErrorStats {
  int64_t numel = 0;
  // Elements where torch.isclose(ref, res, rtol=tol, atol=tol, equal_nan) is false, computed in
  // the tensors' dtype as torch does (so the verdict matches torch.allclose bit for bit); for
  // half and bfloat16, and off the CPU, torch.isclose itself is asked.
  int64_t mismatched = 0;
  // Smallest t with |ref - res| <= t + t·|res| for every element (float64 arithmetic); +inf when
  // no tolerance helps (a NaN or an infinity that the other side lacks).
  double tol_needed = 0;
  // |ref - res| in float64. Elements equal on both sides (including two NaNs when equal_nan)
  // count 0; a NaN on one side only makes max_abs and sum_abs NaN.
  double max_abs = 0;
  double sum_abs = 0;
  // Sum of (fp64 - ref)² and (fp64 - res)² in float64; 0 without fp64.
  double sum_sq_ref = 0;
  double sum_sq_res = 0;
  bool ref_has_nan = false;
  bool res_has_nan = false;
  bool fp64_has_nan = false;

  bool allclose() const { return mismatched == 0; }
};

enum class StatsBackend {
  kAuto,      // the fused CPU loop where it applies, ATen operators elsewhere (CUDA, complex, bool)
  kFusedCpu,  // one pass over CPU memory; float, double, half, bfloat16 and integer dtypes
  kAten,      // ATen operators on any device: what runs on CUDA (tests force it on CPU)
};

// `ref` and `res`: one dtype, one shape, one device. `fp64`: undefined, or a float64 tensor of
// the same shape on the same device. Any layouts: differing ones are reconciled by one copy.
ErrorStats error_stats(const at::Tensor& ref, const at::Tensor& res, const at::Tensor& fp64,
                       double tol, bool equal_nan, StatsBackend backend = StatsBackend::kAuto);

}  // namespace zoobench::accuracy::detail
