// The numbers a report leads with: a series' geomean speedup, its band (the geomean of the
// models' interval ends) and whether an unstable model is in it, against a hand computation.
#include "zoobench/report/summary.h"

#include <gtest/gtest.h>

#include <cmath>

#include "report_rows.h"

namespace zoobench::report {
namespace {

using testing::performance_row;

ResultRow with_interval(const std::string& name, double eager_ms, double compiled_ms,
                        const std::string& low, const std::string& high, bool unstable = false) {
  return performance_row(
      "cpu", name, "jit", eager_ms, compiled_ms,
      {{"speedup_ci_low", low}, {"speedup_ci_high", high}, {"unstable", unstable ? "1" : "0"}});
}

TEST(Summary, TheGeomeanBandIsTheGeomeanOfTheIntervalsEnds) {
  const ReportSummary summary = summarize(join_results({
      with_interval("a", 20, 10, "1", "4"),   // 2x
      with_interval("b", 80, 10, "4", "16"),  // 8x
      // A failed row is in no geomean, its unstable flag neither.
      performance_row("cpu", "c", "jit", 1, 1,
                      {{"status", "fail_to_run"}, {"speedup", "0"}, {"unstable", "1"}}),
  }));
  const SeriesSummary& jit = summary.per_series.at(0);
  EXPECT_NEAR(*jit.geomean_speedup, std::sqrt(2.0 * 8.0), 1e-12);
  ASSERT_TRUE(jit.geomean_speedup_band);
  EXPECT_NEAR(jit.geomean_speedup_band->low, std::sqrt(1.0 * 4.0), 1e-12);
  EXPECT_NEAR(jit.geomean_speedup_band->high, std::sqrt(4.0 * 16.0), 1e-12);
  EXPECT_FALSE(jit.geomean_unstable);
  EXPECT_EQ(jit.unstable, 1);
}

TEST(Summary, NoBandWhenAModelHasNoIntervalAndTheMarkWhenOneIsUnstable) {
  const ReportSummary summary = summarize(join_results({
      with_interval("a", 20, 10, "1.9", "2.1", /*unstable=*/true),
      performance_row("cpu", "b", "jit", 40, 10),  // no interval
  }));
  const SeriesSummary& jit = summary.per_series.at(0);
  EXPECT_NEAR(*jit.geomean_speedup, std::sqrt(2.0 * 4.0), 1e-12);
  EXPECT_FALSE(jit.geomean_speedup_band);
  EXPECT_TRUE(jit.geomean_unstable);
}

// A hand-edited or corrupt row's speedup of 1e308, -3 or nan stays in its cell but enters no
// geomean: one such row made the series' geomean inf, nan or 1e25.
TEST(Summary, AbsurdRatiosStayOutOfTheGeomeans) {
  std::vector<ResultRow> rows = {performance_row("cpu", "a", "jit", 20, 10),
                                 performance_row("cpu", "b", "jit", 80, 10)};
  for (const std::string absurd : {"1e308", "-3", "nan", "inf", "0"}) {
    rows.push_back(performance_row("cpu", "z" + absurd, "jit", 1, 1,
                                   {{"speedup", absurd}, {"compression_ratio", absurd}}));
  }
  const ReportSummary summary = summarize(join_results(rows));
  const SeriesSummary& jit = summary.per_series.at(0);
  EXPECT_NEAR(*jit.geomean_speedup, std::sqrt(2.0 * 8.0), 1e-12);
  EXPECT_EQ(jit.models_with_speedup, 2);
  EXPECT_FALSE(jit.geomean_compression_ratio);
}

}  // namespace
}  // namespace zoobench::report
