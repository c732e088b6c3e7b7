// The numbers a report leads with: accuracy pass rate and, per performance series, the
// geometric-mean speedups (end-to-end and kernel), mean compile latency and memory compression.
// Plain functions over the joined results, testable by hand computation.
#pragma once

#include <optional>
#include <vector>

#include "zoobench/report/joined_results.h"

namespace zoobench::report {

// exp(mean(log x)); nullopt when `values` is empty. Values must be positive.
std::optional<double> geometric_mean(const std::vector<double>& values);
std::optional<double> arithmetic_mean(const std::vector<double>& values);

struct PassRate {
  int passed = 0;
  int total = 0;  // models with a row in the column; `skipped` rows are not counted
  std::optional<double> fraction() const;
};

// A geomean's band: the geomean of the low ends and that of the high ends of the models' 95%
// intervals (the terminal's run summary computes it so too). It is the geomean's interval were
// every model's error to go the same way; with independent errors the geomean's own interval is
// narrower (about 1/sqrt(n) in log space), so the band overstates the uncertainty, never
// understates it. None when a model in the geomean has no interval.
struct SpeedupBand {
  double low = 0, high = 0;
};
std::optional<SpeedupBand> geomean_band(const std::vector<SpeedupBand>& intervals,
                                        std::size_t speedups);

struct SeriesSummary {
  // Over the models whose performance row passed and has the value.
  std::optional<double> geomean_speedup, geomean_op_speedup;
  int models_with_speedup = 0, models_with_op_speedup = 0;
  std::optional<SpeedupBand> geomean_speedup_band;  // geomean_band() of those models
  bool geomean_unstable = false;  // a model in geomean_speedup was flagged unstable
  std::optional<double> mean_compilation_latency_s;
  std::optional<double> geomean_compression_ratio;
  int models = 0, failed = 0, unstable = 0;
};

struct ReportSummary {
  PassRate overall;                       // every accuracy cell of every column
  std::vector<PassRate> per_column;       // parallel to JoinedResults::accuracy_columns
  std::vector<SeriesSummary> per_series;  // parallel to JoinedResults::performance_series

  int timed_rows() const;     // performance rows over every series
  int unstable_rows() const;  // of those, the ones flagged unstable
};

ReportSummary summarize(const JoinedResults& joined);

}  // namespace zoobench::report
