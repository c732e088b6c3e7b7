// The timing columns of the per-model results table, shared by the markdown and the HTML report:
// for each metric (E2E, then OP) and each eager context, the context's eager time, then each of
// its series' compiled time and speedup. One list, so both reports show the same columns, in the
// same order, under the same names (the HTML report's sort keys are these names).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "zoobench/report/joined_results.h"

namespace zoobench::report {

// A timing metric and the cell fields its columns show.
struct TimingMetric {
  const char* name;  // "E2E" / "OP": part of each header
  std::optional<double> PerformanceCell::*eager;
  std::optional<double> PerformanceCell::*compiled;
  std::optional<double> PerformanceCell::*speedup;
  bool has_interval;  // the speedup has a confidence interval and can be flagged unstable
};
const std::vector<TimingMetric>& timing_metrics();  // E2E, OP

enum class TimingRole { kEager, kCompiled, kSpeedup };

struct TimingColumn {
  std::string header;
  const TimingMetric* metric = nullptr;
  TimingRole role = TimingRole::kEager;
  std::string context;     // the eager context (every role has one)
  std::size_t series = 0;  // kCompiled, kSpeedup: the index in joined.performance_series
};

std::vector<TimingColumn> timing_columns(const JoinedResults& joined);

// The model's value in the column: a series' field, or for the eager side the first of the
// context's series that measured it (series of one context share one eager column).
std::optional<double> timing_value(const JoinedResults& joined, const JoinedModel& model,
                                   const TimingColumn& column);
// The model's cell of the column's series; nullopt for an eager column or an unmeasured model.
const std::optional<PerformanceCell>& timing_cell(const JoinedModel& model,
                                                  const TimingColumn& column);
// The value as both reports print it: times with format_ms, speedups with format_speedup (an
// E2E speedup's digits following the 95% interval of `cell`, the column's series' cell).
std::string format_timing(const TimingColumn& column, std::optional<double> value,
                          const char* ratio_suffix,
                          const std::optional<PerformanceCell>& cell = std::nullopt);

// The column names.
std::string eager_column(const std::string& context, const char* metric);          // eager_E2E
std::string compiled_column(const PerformanceSeries& series, const char* metric);  // jit_E2E
std::string speedup_column(const JoinedResults& joined, const PerformanceSeries& series,
                           const char* metric);  // E2E_speed_up_rate or jit_E2E_speed_up_rate

}  // namespace zoobench::report
