// The one-pass statistics behind `same`: the fused CPU loop and the ATen path (what runs on
// CUDA) against torch.isclose itself and against element-by-element float64 arithmetic.
#include "zoobench/accuracy/error_stats.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace zoobench::accuracy::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Expected {
  double max_abs = 0, sum_abs = 0, sum_sq_ref = 0, sum_sq_res = 0, tol_needed = 0;
  bool nan_abs = false;
};

// Element by element in float64, straight from the definitions in error_stats.h.
Expected brute_force(const at::Tensor& ref, const at::Tensor& res, const at::Tensor& fp64,
                     bool equal_nan) {
  Expected e;
  at::Tensor a = ref.to(at::kDouble).contiguous().reshape(-1);
  at::Tensor b = res.to(at::kDouble).contiguous().reshape(-1);
  at::Tensor f = fp64.defined() ? fp64.contiguous().reshape(-1) : at::Tensor();
  auto pa = a.accessor<double, 1>();
  auto pb = b.accessor<double, 1>();
  const double* pf = f.defined() ? f.data_ptr<double>() : nullptr;
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (pf != nullptr) {
      double fi = pf[i];
      e.sum_sq_ref += (fi - pa[i]) * (fi - pa[i]);
      e.sum_sq_res += (fi - pb[i]) * (fi - pb[i]);
    }
    if (pa[i] == pb[i]) continue;
    if (std::isnan(pa[i]) || std::isnan(pb[i])) {
      if (std::isnan(pa[i]) && std::isnan(pb[i]) && equal_nan) continue;
      e.nan_abs = true;
      e.tol_needed = kInf;
      continue;
    }
    double d = std::abs(pa[i] - pb[i]);
    e.max_abs = std::max(e.max_abs, d);
    e.sum_abs += d;
    e.tol_needed = std::max(e.tol_needed, std::isfinite(d) ? d / (1 + std::abs(pb[i])) : kInf);
  }
  return e;
}

int64_t torch_mismatches(const at::Tensor& ref, const at::Tensor& res, double tol, bool equal_nan) {
  return at::isclose(ref, res, tol, tol, equal_nan).logical_not().sum().item<int64_t>();
}

void expect_near_relative(double got, double want, double rel, const char* what) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what << " got " << got;
  } else if (std::isinf(want)) {
    EXPECT_EQ(got, want) << what;
  } else {
    EXPECT_NEAR(got, want, rel * std::max(1.0, std::abs(want))) << what;
  }
}

// ref, res close to each other near the tolerance boundary, with exact ties, NaN and inf.
std::pair<at::Tensor, at::Tensor> boundary_pair(c10::ScalarType dtype, int64_t n, double tol,
                                                bool specials) {
  at::Tensor base = at::randn({n}, at::kDouble) * 4;
  if (at::isIntegralType(dtype, /*includeBool=*/false)) {
    base = (base * 10).round();
    if (dtype == at::kByte) base = base.abs();
    if (dtype == at::kChar || dtype == at::kByte) base = base.clamp(-100, 100);
  }
  at::Tensor ref = base.to(dtype);
  // Offsets of about the allowed error tol * (1 + |x|), scaled 0.5 .. 1.5, plus exact ties.
  at::Tensor scale = at::rand({n}, at::kDouble) + 0.5;
  at::Tensor offset = scale * tol * (1 + base.abs());
  if (at::isIntegralType(dtype, false)) offset = (at::rand({n}, at::kDouble) * 3).floor();
  at::Tensor tie = at::rand({n}) < 0.2;
  offset.masked_fill_(tie, 0);
  at::Tensor res = (ref.to(at::kDouble) + offset).to(dtype);
  if (specials && at::isFloatingType(dtype)) {
    ref.index_put_({0}, kNaN);
    res.index_put_({1}, kNaN);
    ref.index_put_({2}, kNaN);
    res.index_put_({2}, kNaN);
    ref.index_put_({3}, kInf);
    res.index_put_({3}, kInf);
    ref.index_put_({4}, kInf);
    res.index_put_({4}, 1.0);
    ref.index_put_({5}, -kInf);
    res.index_put_({5}, kInf);
  }
  return {ref, res};
}

class ErrorStatsByDtype : public ::testing::TestWithParam<c10::ScalarType> {};

TEST_P(ErrorStatsByDtype, FusedAndAtenAgreeWithTorchIscloseAndFloat64) {
  const c10::ScalarType dtype = GetParam();
  at::manual_seed(static_cast<uint64_t>(dtype) + 1);
  for (double tol : {0.0, 1e-4, 1e-3, 1e-2, 4e-2, 1.0}) {
    for (bool specials : {false, true}) {
      for (bool equal_nan : {false, true}) {
        SCOPED_TRACE(::testing::Message() << c10::toString(dtype) << " tol=" << tol << " specials="
                                          << specials << " equal_nan=" << equal_nan);
        auto [ref, res] = boundary_pair(dtype, 70001, std::max(tol, 1e-3), specials);
        at::Tensor fp64 = (ref.to(at::kDouble) + at::randn({ref.numel()}, at::kDouble) * 1e-3);
        const int64_t want_mismatches = torch_mismatches(ref, res, tol, equal_nan);
        const Expected want = brute_force(ref, res, fp64, equal_nan);
        for (auto backend : {StatsBackend::kFusedCpu, StatsBackend::kAten}) {
          SCOPED_TRACE(backend == StatsBackend::kFusedCpu ? "fused" : "aten");
          ErrorStats got = error_stats(ref, res, fp64, tol, equal_nan, backend);
          EXPECT_EQ(got.numel, ref.numel());
          EXPECT_EQ(got.mismatched, want_mismatches);
          expect_near_relative(got.max_abs, want.nan_abs ? kNaN : want.max_abs, 0, "max_abs");
          expect_near_relative(got.sum_abs, want.nan_abs ? kNaN : want.sum_abs, 1e-12, "sum_abs");
          expect_near_relative(got.sum_sq_ref, want.sum_sq_ref, 1e-12, "sum_sq_ref");
          expect_near_relative(got.sum_sq_res, want.sum_sq_res, 1e-12, "sum_sq_res");
          if (at::isFloatingType(dtype)) {
            // Integers: the fused loop measures the float32 difference torch uses.
            expect_near_relative(got.tol_needed, want.tol_needed, 1e-15, "tol_needed");
          }
          EXPECT_EQ(got.ref_has_nan, specials && at::isFloatingType(dtype));
          EXPECT_EQ(got.res_has_nan, specials && at::isFloatingType(dtype));
          EXPECT_FALSE(got.fp64_has_nan && !specials);
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllDtypes, ErrorStatsByDtype,
                         ::testing::Values(at::kFloat, at::kDouble, at::kHalf, at::kBFloat16,
                                           at::kLong, at::kInt, at::kShort, at::kChar, at::kByte),
                         [](const auto& info) { return std::string(c10::toString(info.param)); });

TEST(ErrorStats, TolNeededIsTheBoundaryOfAllclose) {
  at::manual_seed(7);
  at::Tensor ref = at::randn({5000}, at::kDouble);
  at::Tensor res = ref + at::randn({5000}, at::kDouble) * 1e-3;
  ErrorStats stats = error_stats(ref, res, at::Tensor(), 1e-4, false);
  EXPECT_TRUE(at::allclose(ref, res, stats.tol_needed * (1 + 1e-9), stats.tol_needed * (1 + 1e-9)));
  EXPECT_FALSE(
      at::allclose(ref, res, stats.tol_needed * (1 - 1e-9), stats.tol_needed * (1 - 1e-9)));
}

TEST(ErrorStats, LayoutsDoNotChangeTheResult) {
  at::manual_seed(3);
  at::Tensor ref = at::randn({4, 5, 6, 7});
  at::Tensor res = ref + at::randn({4, 5, 6, 7}) * 1e-3;
  at::Tensor fp64 = ref.to(at::kDouble) + 1e-4;
  ErrorStats plain = error_stats(ref, res, fp64, 1e-4, false, StatsBackend::kFusedCpu);
  const at::Tensor layouts[] = {
      ref.contiguous(at::MemoryFormat::ChannelsLast),
      ref.transpose(0, 3).contiguous().transpose(0, 3),  // permuted, dense
      at::cat({ref, ref}, 1).slice(1, 0, 5),             // not dense
  };
  for (const auto& r : layouts) {
    for (const auto& f : {fp64, fp64.contiguous(at::MemoryFormat::ChannelsLast)}) {
      for (auto backend : {StatsBackend::kFusedCpu, StatsBackend::kAten}) {
        ErrorStats got = error_stats(r, res, f, 1e-4, false, backend);
        EXPECT_EQ(got.mismatched, plain.mismatched);
        EXPECT_EQ(got.max_abs, plain.max_abs);
        EXPECT_NEAR(got.sum_abs, plain.sum_abs, 1e-9 * plain.sum_abs);
        EXPECT_NEAR(got.sum_sq_ref, plain.sum_sq_ref, 1e-9 * plain.sum_sq_ref);
        EXPECT_NEAR(got.sum_sq_res, plain.sum_sq_res, 1e-9 * plain.sum_sq_res);
      }
    }
  }
}

TEST(ErrorStats, EmptyTensorsAreClose) {
  at::Tensor empty = at::empty({0, 3});
  for (auto backend : {StatsBackend::kFusedCpu, StatsBackend::kAten}) {
    ErrorStats stats = error_stats(empty, empty, at::Tensor(), 1e-4, false, backend);
    EXPECT_TRUE(stats.allclose());
    EXPECT_EQ(stats.numel, 0);
    EXPECT_EQ(stats.max_abs, 0);
  }
}

TEST(ErrorStats, ComplexAndBoolGoThroughAten) {
  at::Tensor a = at::randn({100}, at::kComplexFloat);
  at::Tensor b = a + 1e-2;
  ErrorStats stats = error_stats(a, b, at::Tensor(), 1e-4, false);
  EXPECT_EQ(stats.mismatched, torch_mismatches(a, b, 1e-4, false));
  EXPECT_NEAR(stats.max_abs, 1e-2, 1e-6);
  at::Tensor m = at::rand({100}) > 0.5;
  at::Tensor n = m.logical_not();
  EXPECT_EQ(error_stats(m, n, at::Tensor(), 1e-4, false).mismatched, 100);
}

TEST(ErrorStats, IntegersCompareThroughFloat32AsTorchDoes) {
  // torch.isclose casts integers to float32 first: 0 vs 1 in uint8 is |0 - 1| = 1, not 255.
  at::Tensor zero = at::zeros({1}, at::kByte);
  at::Tensor one = at::ones({1}, at::kByte);
  EXPECT_TRUE(error_stats(one, zero, at::Tensor(), 1.0, false, StatsBackend::kFusedCpu).allclose());
  EXPECT_TRUE(error_stats(zero, one, at::Tensor(), 1.0, false, StatsBackend::kFusedCpu).allclose());
  EXPECT_FALSE(
      error_stats(zero, one, at::Tensor(), 0.4, false, StatsBackend::kFusedCpu).allclose());
  // 2^24 + 1 and 2^24 are one float32: close at any tolerance above zero.
  at::Tensor big = at::full({1}, (int64_t{1} << 24) + 1, at::kLong);
  at::Tensor other = at::full({1}, int64_t{1} << 24, at::kLong);
  EXPECT_EQ(error_stats(big, other, at::Tensor(), 1e-9, false, StatsBackend::kFusedCpu).allclose(),
            at::allclose(big, other, 1e-9, 1e-9));
  EXPECT_FALSE(
      error_stats(big, other, at::Tensor(), 0.0, false, StatsBackend::kFusedCpu).allclose());
}

}  // namespace
}  // namespace zoobench::accuracy::detail
