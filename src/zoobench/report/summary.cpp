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

ReportSummary summarize(const JoinedResults& joined) {
  ReportSummary summary;
  summary.per_column.resize(joined.accuracy_columns.size());
  summary.per_series.resize(joined.performance_series.size());
  std::vector<std::vector<double>> speedups(joined.performance_series.size());
  std::vector<std::vector<double>> op_speedups(speedups.size()), compile(speedups.size()),
      compression(speedups.size());

  for (const auto& model : joined.models) {
    for (std::size_t c = 0; c < model.accuracy.size(); ++c) {
      const auto& cell = model.accuracy[c];
      if (!cell || cell->status == "skipped") continue;
      PassRate& rate = summary.per_column[c];
      ++rate.total;
      ++summary.overall.total;
      if (cell->passed()) {
        ++rate.passed;
        ++summary.overall.passed;
      }
    }
    for (std::size_t s = 0; s < model.performance.size(); ++s) {
      const auto& cell = model.performance[s];
      if (!cell) continue;
      SeriesSummary& series = summary.per_series[s];
      ++series.models;
      if (cell->unstable) ++series.unstable;
      if (!cell->passed()) {
        ++series.failed;
        continue;
      }
      if (cell->speedup) speedups[s].push_back(*cell->speedup);
      if (cell->op_speedup) op_speedups[s].push_back(*cell->op_speedup);
      if (cell->compilation_latency_s) compile[s].push_back(*cell->compilation_latency_s);
      if (cell->compression_ratio) compression[s].push_back(*cell->compression_ratio);
    }
  }
  for (std::size_t s = 0; s < speedups.size(); ++s) {
    SeriesSummary& series = summary.per_series[s];
    series.geomean_speedup = geometric_mean(speedups[s]);
    series.models_with_speedup = static_cast<int>(speedups[s].size());
    series.geomean_op_speedup = geometric_mean(op_speedups[s]);
    series.models_with_op_speedup = static_cast<int>(op_speedups[s].size());
    series.mean_compilation_latency_s = arithmetic_mean(compile[s]);
    series.geomean_compression_ratio = geometric_mean(compression[s]);
  }
  return summary;
}

}  // namespace zoobench::report
