// The results table's timing columns and their values.
#include "zoobench/report/timing_columns.h"

#include "zoobench/report/number_format.h"

namespace zoobench::report {

const std::vector<TimingMetric>& timing_metrics() {
  static const std::vector<TimingMetric> kMetrics = {
      {"E2E", &PerformanceCell::eager_ms, &PerformanceCell::compiled_ms, &PerformanceCell::speedup,
       true},
      {"OP", &PerformanceCell::eager_op_ms, &PerformanceCell::compiled_op_ms,
       &PerformanceCell::op_speedup, false}};
  return kMetrics;
}

std::vector<TimingColumn> timing_columns(const JoinedResults& joined) {
  std::vector<TimingColumn> out;
  std::vector<std::string> contexts = joined.performance_contexts();
  for (const TimingMetric& metric : timing_metrics()) {
    for (const auto& context : contexts) {
      out.push_back({eager_column(context, metric.name), &metric, TimingRole::kEager, context});
      for (std::size_t s = 0; s < joined.performance_series.size(); ++s) {
        const PerformanceSeries& series = joined.performance_series[s];
        if (series.context != context) continue;
        out.push_back(
            {compiled_column(series, metric.name), &metric, TimingRole::kCompiled, context, s});
        out.push_back({speedup_column(joined, series, metric.name), &metric, TimingRole::kSpeedup,
                       context, s});
      }
    }
  }
  return out;
}

const std::optional<PerformanceCell>& timing_cell(const JoinedModel& model,
                                                  const TimingColumn& column) {
  static const std::optional<PerformanceCell> kNone;
  if (column.role == TimingRole::kEager) return kNone;
  return model.performance[column.series];
}

std::optional<double> timing_value(const JoinedResults& joined, const JoinedModel& model,
                                   const TimingColumn& column) {
  const TimingMetric& metric = *column.metric;
  if (column.role == TimingRole::kEager) {
    for (std::size_t s = 0; s < joined.performance_series.size(); ++s) {
      if (joined.performance_series[s].context != column.context || !model.performance[s]) continue;
      if (const auto& value = (*model.performance[s]).*metric.eager) return value;
    }
    return std::nullopt;
  }
  const auto& cell = timing_cell(model, column);
  if (!cell) return std::nullopt;
  return column.role == TimingRole::kCompiled ? (*cell).*metric.compiled : (*cell).*metric.speedup;
}

std::string format_timing(const TimingColumn& column, std::optional<double> value,
                          const char* ratio_suffix, const std::optional<PerformanceCell>& cell) {
  if (column.role != TimingRole::kSpeedup) return format_ms(value);
  if (!column.metric->has_interval || !cell) return format_speedup(value, {}, {}, ratio_suffix);
  return format_speedup(value, cell->speedup_ci_low, cell->speedup_ci_high, ratio_suffix);
}

std::string eager_column(const std::string& context, const char* metric) {
  return (context.empty() ? std::string() : context + "_") + "eager_" + metric;
}

std::string compiled_column(const PerformanceSeries& series, const char* metric) {
  return series.label + "_" + metric;
}

std::string speedup_column(const JoinedResults& joined, const PerformanceSeries& series,
                           const char* metric) {
  std::string name = std::string(metric) + "_speed_up_rate";
  return joined.performance_series.size() == 1 ? name : series.label + "_" + name;
}

}  // namespace zoobench::report
