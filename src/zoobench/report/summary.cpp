// Pass rates and geometric means.
#include "zoobench/report/summary.h"

#include <cmath>

namespace zoobench::report {

std::optional<double> geometric_mean(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  double log_sum = 0;
  for (double value : values) log_sum += std::log(value);
  return std::exp(log_sum / static_cast<double>(values.size()));
}

std::optional<double> arithmetic_mean(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  double sum = 0;
  for (double value : values) sum += value;
  return sum / static_cast<double>(values.size());
}

std::optional<SpeedupBand> geomean_band(const std::vector<SpeedupBand>& intervals,
                                        std::size_t speedups) {
  if (intervals.empty() || intervals.size() != speedups) return std::nullopt;
  std::vector<double> lows, highs;
  for (const auto& interval : intervals) {
    lows.push_back(interval.low);
    highs.push_back(interval.high);
  }
  return SpeedupBand{*geometric_mean(lows), *geometric_mean(highs)};
}

std::optional<double> PassRate::fraction() const {
  if (total == 0) return std::nullopt;
  return static_cast<double>(passed) / total;
}

int ReportSummary::timed_rows() const {
  int rows = 0;
  for (const auto& series : per_series) rows += series.models;
  return rows;
}

int ReportSummary::unstable_rows() const {
  int rows = 0;
  for (const auto& series : per_series) rows += series.unstable;
  return rows;
}

namespace {

// One series' values over its models, before their means.
struct SeriesValues {
  std::vector<double> speedups, op_speedups, compile, compression;
  std::vector<SpeedupBand> intervals;  // of the speedups that have one
};

void add_accuracy(const std::optional<AccuracyCell>& cell, PassRate& rate, PassRate& overall) {
  if (!cell || cell->status == "skipped") return;
  ++rate.total;
  ++overall.total;
  if (cell->passed()) {
    ++rate.passed;
    ++overall.passed;
  }
}

// A ratio a geomean may take: finite, positive and below a million. A row's 1e308, -3 or nan
// (a hand-edited or corrupt file) stays in its own cell but would make every mean meaningless.
bool plausible_ratio(double value) { return std::isfinite(value) && value > 0 && value < 1e6; }

void add_performance(const PerformanceCell& cell, SeriesSummary& series, SeriesValues& values) {
  ++series.models;
  if (cell.unstable) ++series.unstable;
  if (!cell.passed()) {
    ++series.failed;
    return;
  }
  if (cell.speedup && plausible_ratio(*cell.speedup)) {
    values.speedups.push_back(*cell.speedup);
    series.geomean_unstable = series.geomean_unstable || cell.unstable;
    const auto &low = cell.speedup_ci_low, &high = cell.speedup_ci_high;
    if (low && high && plausible_ratio(*low) && plausible_ratio(*high) && *high >= *low)
      values.intervals.push_back({*low, *high});
  }
  if (cell.op_speedup && plausible_ratio(*cell.op_speedup))
    values.op_speedups.push_back(*cell.op_speedup);
  if (cell.compilation_latency_s) values.compile.push_back(*cell.compilation_latency_s);
  if (cell.compression_ratio && plausible_ratio(*cell.compression_ratio))
    values.compression.push_back(*cell.compression_ratio);
}

void finish_series(const SeriesValues& values, SeriesSummary& series) {
  series.geomean_speedup = geometric_mean(values.speedups);
  series.models_with_speedup = static_cast<int>(values.speedups.size());
  series.geomean_speedup_band = geomean_band(values.intervals, values.speedups.size());
  series.geomean_op_speedup = geometric_mean(values.op_speedups);
  series.models_with_op_speedup = static_cast<int>(values.op_speedups.size());
  series.mean_compilation_latency_s = arithmetic_mean(values.compile);
  series.geomean_compression_ratio = geometric_mean(values.compression);
}

}  // namespace

ReportSummary summarize(const JoinedResults& joined) {
  ReportSummary summary;
  summary.per_column.resize(joined.accuracy_columns.size());
  summary.per_series.resize(joined.performance_series.size());
  std::vector<SeriesValues> values(joined.performance_series.size());
  for (const auto& model : joined.models) {
    for (std::size_t c = 0; c < model.accuracy.size(); ++c)
      add_accuracy(model.accuracy[c], summary.per_column[c], summary.overall);
    for (std::size_t s = 0; s < model.performance.size(); ++s) {
      if (model.performance[s])
        add_performance(*model.performance[s], summary.per_series[s], values[s]);
    }
  }
  for (std::size_t s = 0; s < values.size(); ++s) finish_series(values[s], summary.per_series[s]);
  return summary;
}

}  // namespace zoobench::report
