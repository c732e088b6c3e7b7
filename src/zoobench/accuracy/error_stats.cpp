// One pass over (ref, res[, fp64]): a fused loop over CPU memory, and the same statistics from
// ATen operators for CUDA and the dtypes the loop does not cover.
#include "zoobench/accuracy/error_stats.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

namespace zoobench::accuracy::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Elements per unit of parallel work. Fixed, so that the float64 sums do not depend on the
// number of threads.
constexpr int64_t kChunk = int64_t{1} << 15;

struct Partial {
  int64_t mismatched = 0;
  double tol_needed = 0;
  double max_abs = 0;
  double sum_abs = 0;
  double sum_sq_ref = 0;
  double sum_sq_res = 0;
  bool nan_abs = false;
  bool ref_nan = false;
  bool res_nan = false;
  bool fp64_nan = false;

  void merge(const Partial& o) {
    mismatched += o.mismatched;
    tol_needed = std::max(tol_needed, o.tol_needed);
    max_abs = std::max(max_abs, o.max_abs);
    sum_abs += o.sum_abs;
    sum_sq_ref += o.sum_sq_ref;
    sum_sq_res += o.sum_sq_res;
    nan_abs |= o.nan_abs;
    ref_nan |= o.ref_nan;
    res_nan |= o.res_nan;
    fp64_nan |= o.fp64_nan;
  }
};

// torch.isclose's test for two unequal, non-NaN elements, in the arithmetic torch uses for the
// dtype:  |a - b| <= atol + |rtol * b|, where for float and double everything is computed in
// the dtype, and integers are first cast to float32 (torch's default dtype), difference
// included. `actual` is the error that test sees, in float64.
template <typename T, typename Enable = void>
struct Closeness;

template <typename T>
struct Closeness<T, std::enable_if_t<std::is_floating_point<T>::value>> {
  T atol, rtol;
  explicit Closeness(double tol) : atol(static_cast<T>(tol)), rtol(static_cast<T>(tol)) {}
  bool close(T a, T b) const {
    const T allowed = atol + std::abs(rtol * b);
    const T actual = std::abs(a - b);
    return std::isfinite(actual) && actual <= allowed;
  }
  static double actual(T a, T b) {
    return std::abs(static_cast<double>(a) - static_cast<double>(b));
  }
};

// Half and bfloat16: how torch rounds the bound (scalar converted to the dtype or kept in float,
// intermediates rounded or not) differs between releases and between CPU and CUDA, so the
// verdict for these comes from torch.isclose itself (see fused_stats); this only measures.
template <typename T>
struct Closeness<T, std::enable_if_t<std::is_same<T, c10::Half>::value ||
                                     std::is_same<T, c10::BFloat16>::value>> {
  explicit Closeness(double) {}
  bool close(T, T) const { return false; }
  static double actual(T a, T b) {
    return std::abs(static_cast<double>(static_cast<float>(a)) - static_cast<float>(b));
  }
};

template <typename T>
struct Closeness<T, std::enable_if_t<std::is_integral<T>::value>> {
  float atol, rtol;
  explicit Closeness(double tol) : atol(static_cast<float>(tol)), rtol(static_cast<float>(tol)) {}
  bool close(T a, T b) const {
    const float other = static_cast<float>(b);
    const float allowed = atol + std::abs(rtol * other);
    const float actual = std::abs(static_cast<float>(a) - other);
    return std::isfinite(actual) && actual <= allowed;
  }
  static double actual(T a, T b) { return std::abs(static_cast<float>(a) - static_cast<float>(b)); }
};

template <typename T>
constexpr bool kHasNan = !std::is_integral<T>::value;

template <typename T, bool kWithFp64>
void accumulate(const T* ref, const T* res, const double* fp64, int64_t begin, int64_t end,
                const Closeness<T>& closeness, bool zero_tol, bool equal_nan, Partial& p) {
  for (int64_t i = begin; i < end; ++i) {
    const T ra = ref[i];
    const T rb = res[i];
    const double a = static_cast<double>(ra);
    const double b = static_cast<double>(rb);
    if constexpr (kWithFp64) {
      const double f = fp64[i];
      const double e_ref = f - a;
      const double e_res = f - b;
      p.sum_sq_ref += e_ref * e_ref;
      p.sum_sq_res += e_res * e_res;
      p.fp64_nan |= std::isnan(f);
    }
    if (ra == rb) continue;  // close; contributes nothing (also for equal infinities)
    if constexpr (kHasNan<T>) {
      const bool a_nan = std::isnan(a);
      const bool b_nan = std::isnan(b);
      if (a_nan || b_nan) {
        p.ref_nan |= a_nan;
        p.res_nan |= b_nan;
        if (a_nan && b_nan && equal_nan) continue;
        ++p.mismatched;
        p.nan_abs = true;
        p.tol_needed = kInf;
        continue;
      }
    }
    if (zero_tol || !closeness.close(ra, rb)) ++p.mismatched;
    const double difference = std::abs(a - b);
    p.max_abs = std::max(p.max_abs, difference);
    p.sum_abs += difference;
    // The smallest t with actual <= t·(1 + |b|); divide only when the maximum moves.
    const double actual = Closeness<T>::actual(ra, rb);
    const double scale = 1.0 + std::abs(b);
    if (actual > p.tol_needed * scale) p.tol_needed = std::isfinite(actual) ? actual / scale : kInf;
  }
}

// The same statistics for float and double chunks without NaN or infinity in ref and res (the
// common case), without branches so that the compiler can vectorize, with kLanes independent
// accumulators. Returns false, leaving `p` unspecified, when the chunk holds a NaN or an
// infinity: the caller then runs accumulate() on it.
template <typename T, bool kWithFp64>
bool accumulate_finite(const T* ref, const T* res, const double* fp64, int64_t begin, int64_t end,
                       const Closeness<T>& closeness, bool zero_tol, Partial& p) {
  constexpr int kLanes = 4;
  double sum_abs[kLanes] = {}, max_abs[kLanes] = {}, needed[kLanes] = {};
  double sq_ref[kLanes] = {}, sq_res[kLanes] = {};
  int64_t mismatched[kLanes] = {};
  auto step = [&](int lane, int64_t i) {
    const T ra = ref[i];
    const T rb = res[i];
    const double a = static_cast<double>(ra);
    const double b = static_cast<double>(rb);
    const double difference = std::abs(a - b);
    sum_abs[lane] += difference;
    max_abs[lane] = std::max(max_abs[lane], difference);
    needed[lane] = std::max(needed[lane], difference / (1.0 + std::abs(b)));
    const bool close = ra == rb || (!zero_tol && closeness.close(ra, rb));
    mismatched[lane] += close ? 0 : 1;
    if constexpr (kWithFp64) {
      const double e_ref = fp64[i] - a;
      const double e_res = fp64[i] - b;
      sq_ref[lane] += e_ref * e_ref;
      sq_res[lane] += e_res * e_res;
    }
  };
  int64_t i = begin;
  for (; i + kLanes <= end; i += kLanes) {
    for (int lane = 0; lane < kLanes; ++lane) step(lane, i + lane);
  }
  for (; i < end; ++i) step(0, i);
  for (int lane = 0; lane < kLanes; ++lane) {
    p.sum_abs += sum_abs[lane];
    p.max_abs = std::max(p.max_abs, max_abs[lane]);
    p.tol_needed = std::max(p.tol_needed, needed[lane]);
    p.mismatched += mismatched[lane];
    p.sum_sq_ref += sq_ref[lane];
    p.sum_sq_res += sq_res[lane];
  }
  // A NaN or infinity in ref or res makes some |a - b| NaN or infinite, hence the sum.
  if (!std::isfinite(p.sum_abs)) return false;
  p.fp64_nan = std::isnan(p.sum_sq_ref);  // ref and res are finite here
  return true;
}

ErrorStats finish(const Partial& p, int64_t numel) {
  ErrorStats stats;
  stats.numel = numel;
  stats.mismatched = p.mismatched;
  stats.tol_needed = p.tol_needed;
  stats.max_abs = p.nan_abs ? kNaN : p.max_abs;
  stats.sum_abs = p.nan_abs ? kNaN : p.sum_abs;
  stats.sum_sq_ref = p.sum_sq_ref;
  stats.sum_sq_res = p.sum_sq_res;
  stats.ref_has_nan = p.ref_nan;
  stats.res_has_nan = p.res_nan;
  stats.fp64_has_nan = p.fp64_nan;
  return stats;
}

template <typename T>
ErrorStats fused_cpu(const at::Tensor& ref, const at::Tensor& res, const at::Tensor& fp64,
                     double tol, bool equal_nan) {
  const int64_t n = ref.numel();
  const T* r = ref.data_ptr<T>();
  const T* s = res.data_ptr<T>();
  const double* f = fp64.defined() ? fp64.data_ptr<double>() : nullptr;
  const Closeness<T> closeness(tol);
  const bool zero_tol = tol == 0.0;  // torch.isclose: zero tolerances mean equality
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<Partial> partials(static_cast<size_t>(chunks));
  at::parallel_for(0, chunks, 1, [&](int64_t first, int64_t last) {
    for (int64_t c = first; c < last; ++c) {
      const int64_t begin = c * kChunk;
      const int64_t end = std::min(n, begin + kChunk);
      if constexpr (std::is_floating_point<T>::value) {
        const bool done = f != nullptr ? accumulate_finite<T, true>(r, s, f, begin, end, closeness,
                                                                    zero_tol, partials[c])
                                       : accumulate_finite<T, false>(r, s, f, begin, end, closeness,
                                                                     zero_tol, partials[c]);
        if (done) continue;
        partials[c] = Partial();
      }
      if (f != nullptr) {
        accumulate<T, true>(r, s, f, begin, end, closeness, zero_tol, equal_nan, partials[c]);
      } else {
        accumulate<T, false>(r, s, f, begin, end, closeness, zero_tol, equal_nan, partials[c]);
      }
    }
  });
  Partial total;
  for (const auto& partial : partials) total.merge(partial);
  return finish(total, n);
}

// Gives every operand one dense layout (the reference's when it is dense), copying only those
// that differ, so the loop can walk memory linearly.
std::vector<at::Tensor> with_one_dense_layout(const at::Tensor& ref, const at::Tensor& res,
                                              const at::Tensor& fp64) {
  at::Tensor base = ref.is_non_overlapping_and_dense() ? ref : ref.contiguous();
  auto like_base = [&](const at::Tensor& t) {
    if (!t.defined()) return t;
    if (t.is_non_overlapping_and_dense() && t.strides() == base.strides()) return t;
    return at::empty_like(base, t.options()).copy_(t);
  };
  return {base, like_base(res), like_base(fp64)};
}

bool fused_loop_covers(c10::ScalarType dtype) {
  switch (dtype) {
    case at::kFloat:
    case at::kDouble:
    case at::kHalf:
    case at::kBFloat16:
    case at::kLong:
    case at::kInt:
    case at::kShort:
    case at::kChar:
    case at::kByte:
      return true;
    default:
      return false;
  }
}

ErrorStats fused_stats(const at::Tensor& ref, const at::Tensor& res, const at::Tensor& fp64,
                       double tol, bool equal_nan) {
  auto operands = with_one_dense_layout(ref, res, fp64);
  const at::Tensor& r = operands[0];
  const at::Tensor& s = operands[1];
  const at::Tensor& f = operands[2];
  switch (r.scalar_type()) {
    case at::kFloat:
      return fused_cpu<float>(r, s, f, tol, equal_nan);
    case at::kDouble:
      return fused_cpu<double>(r, s, f, tol, equal_nan);
    case at::kHalf:
    case at::kBFloat16: {
      ErrorStats stats = r.scalar_type() == at::kHalf
                             ? fused_cpu<c10::Half>(r, s, f, tol, equal_nan)
                             : fused_cpu<c10::BFloat16>(r, s, f, tol, equal_nan);
      stats.mismatched =
          at::isclose(ref, res, tol, tol, equal_nan).logical_not().sum().item<int64_t>();
      return stats;
    }
    case at::kLong:
      return fused_cpu<int64_t>(r, s, f, tol, equal_nan);
    case at::kInt:
      return fused_cpu<int32_t>(r, s, f, tol, equal_nan);
    case at::kShort:
      return fused_cpu<int16_t>(r, s, f, tol, equal_nan);
    case at::kChar:
      return fused_cpu<int8_t>(r, s, f, tol, equal_nan);
    case at::kByte:
      return fused_cpu<uint8_t>(r, s, f, tol, equal_nan);
    default:
      TORCH_CHECK(false, "the fused comparison loop does not cover ", r.scalar_type());
  }
}

// The same statistics from ATen operators: what runs on CUDA. The allclose verdict is
// torch.isclose itself; the rest is float64 (complex128 for complex inputs).
ErrorStats aten_stats(const at::Tensor& ref, const at::Tensor& res, const at::Tensor& fp64,
                      double tol, bool equal_nan) {
  ErrorStats stats;
  stats.numel = ref.numel();
  if (stats.numel == 0) return stats;
  const auto wide = ref.is_complex() ? at::kComplexDouble : at::kDouble;
  const at::Tensor close = at::isclose(ref, res, tol, tol, equal_nan);
  const at::Tensor a = ref.to(wide);
  const at::Tensor b = res.to(wide);
  const at::Tensor a_nan = at::isnan(a);
  const at::Tensor b_nan = at::isnan(b);
  at::Tensor same = at::eq(a, b);
  if (equal_nan) same = same.logical_or(a_nan.logical_and(b_nan));
  at::Tensor difference = at::abs(a - b);
  difference.masked_fill_(same, 0.0);
  const at::Tensor needed = at::nan_to_num(difference / (at::abs(b) + 1.0), kInf, kInf, kInf);
  std::vector<at::Tensor> parts = {
      close.logical_not().sum().to(at::kDouble),
      needed.max().to(at::kDouble),
      difference.max(),
      difference.sum(),
      a_nan.any().to(at::kDouble),
      b_nan.any().to(at::kDouble),
  };
  if (fp64.defined()) {
    parts.push_back((fp64 - a).square().sum());
    parts.push_back((fp64 - b).square().sum());
    parts.push_back(at::isnan(fp64).any().to(at::kDouble));
  }
  const at::Tensor host = at::stack(parts).to(at::kCPU);  // the one device synchronization
  const auto values = host.accessor<double, 1>();
  stats.mismatched = static_cast<int64_t>(values[0]);
  stats.tol_needed = values[1];
  stats.max_abs = values[2];
  stats.sum_abs = values[3];
  stats.ref_has_nan = values[4] != 0;
  stats.res_has_nan = values[5] != 0;
  if (fp64.defined()) {
    stats.sum_sq_ref = values[6];
    stats.sum_sq_res = values[7];
    stats.fp64_has_nan = values[8] != 0;
  }
  return stats;
}

}  // namespace

ErrorStats error_stats(const at::Tensor& ref, const at::Tensor& res, const at::Tensor& fp64,
                       double tol, bool equal_nan, StatsBackend backend) {
  TORCH_CHECK(ref.scalar_type() == res.scalar_type(), "error_stats: dtypes differ");
  TORCH_CHECK(ref.sizes() == res.sizes(), "error_stats: shapes differ");
  TORCH_CHECK(!fp64.defined() || (fp64.scalar_type() == at::kDouble && fp64.sizes() == ref.sizes()),
              "error_stats: the fp64 reference must be float64 of the same shape");
  at::NoGradGuard no_grad;
  if (backend == StatsBackend::kAuto) {
    const bool on_cpu = ref.device().is_cpu() && res.device().is_cpu() &&
                        (!fp64.defined() || fp64.device().is_cpu());
    backend = on_cpu && fused_loop_covers(ref.scalar_type()) ? StatsBackend::kFusedCpu
                                                             : StatsBackend::kAten;
  }
  if (backend == StatsBackend::kFusedCpu) return fused_stats(ref, res, fp64, tol, equal_nan);
  return aten_stats(ref, res, fp64, tol, equal_nan);
}

}  // namespace zoobench::accuracy::detail
