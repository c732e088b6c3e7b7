// Matching a run against its baseline by model, device and backend.
#include "zoobench/report/baseline.h"

#include <fmt/format.h>

#include <map>

namespace zoobench::report {
namespace {

std::optional<SpeedupChange> compare_speedup(std::optional<double> before_value,
                                             std::optional<double> after_value,
                                             const PerformanceCell& before,
                                             const PerformanceCell& after, bool end_to_end,
                                             double threshold) {
  // Only the end-to-end speedup has a confidence interval.
  bool with_ci = end_to_end;
  if (!before.passed() || !before_value) return std::nullopt;  // nothing to regress from
  SpeedupChange change;
  change.before = before_value;
  if (!after.passed()) {
    // Reported once, on the end-to-end speedup.
    if (!end_to_end) return std::nullopt;
    change.regressed = true;
    change.why = fmt::format("the performance run now fails ({})", after.status);
    return change;
  }
  if (!after_value) return std::nullopt;
  change.after = after_value;
  change.ratio = *after_value / *before_value;
  if (*change.ratio < 1.0 - threshold) {
    bool overlap = with_ci && before.speedup_ci_low && after.speedup_ci_high &&
                   *after.speedup_ci_high >= *before.speedup_ci_low;
    if (overlap) {
      change.why = "slower, but within both runs' confidence intervals";
    } else {
      change.regressed = true;
      change.why = fmt::format("{:.1f}% slower", (1.0 - *change.ratio) * 100.0);
    }
  }
  return change;
}

}  // namespace

bool ModelChange::regressed() const {
  for (const auto& change : accuracy) {
    if (change && change->regressed) return true;
  }
  for (const auto* changes : {&e2e, &op}) {
    for (const auto& change : *changes) {
      if (change && change->regressed) return true;
    }
  }
  return false;
}

bool ModelChange::improved() const {
  for (const auto& change : accuracy) {
    if (change && change->improved) return true;
  }
  return false;
}

int BaselineComparison::regressions() const {
  int count = 0;
  for (const auto& model : models) count += model.regressed() ? 1 : 0;
  return count;
}

BaselineComparison compare_with_baseline(const JoinedResults& current,
                                         const JoinedResults& baseline, double threshold) {
  BaselineComparison comparison;
  comparison.threshold = threshold;
  std::map<std::string, const JoinedModel*> before_by_name;
  for (const auto& model : baseline.models) before_by_name[model.name] = &model;

  for (const auto& model : current.models) {
    ModelChange change;
    change.name = model.name;
    change.accuracy.resize(current.accuracy_columns.size());
    change.e2e.resize(current.performance_series.size());
    change.op.resize(current.performance_series.size());
    auto found = before_by_name.find(model.name);
    if (found != before_by_name.end()) {
      const JoinedModel& before = *found->second;
      for (std::size_t c = 0; c < current.accuracy_columns.size(); ++c) {
        int b = find_key(baseline.accuracy_columns, current.accuracy_columns[c].key);
        if (b < 0 || !before.accuracy[b] || !model.accuracy[c]) continue;
        AccuracyChange accuracy{before.accuracy[b]->status, model.accuracy[c]->status};
        accuracy.regressed = before.accuracy[b]->passed() && !model.accuracy[c]->passed();
        accuracy.improved = !before.accuracy[b]->passed() && model.accuracy[c]->passed();
        change.accuracy[c] = accuracy;
      }
      for (std::size_t s = 0; s < current.performance_series.size(); ++s) {
        int b = find_key(baseline.performance_series, current.performance_series[s].key);
        if (b < 0 || !before.performance[b] || !model.performance[s]) continue;
        const PerformanceCell& was = *before.performance[b];
        const PerformanceCell& now = *model.performance[s];
        change.e2e[s] = compare_speedup(was.speedup, now.speedup, was, now, true, threshold);
        change.op[s] = compare_speedup(was.op_speedup, now.op_speedup, was, now, false, threshold);
      }
    }
    comparison.models.push_back(std::move(change));
  }
  return comparison;
}

}  // namespace zoobench::report
