// Per-model change against a baseline run: speedup ratio now/before per performance series
// (end-to-end and kernel) and accuracy status changes per device, with regressions flagged.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "zoobench/report/joined_results.h"

namespace zoobench::report {

struct AccuracyChange {
  std::string before, after;  // statuses
  bool regressed = false;     // passed before, fails now
  bool improved = false;      // failed before, passes now
};

struct SpeedupChange {
  std::optional<double> before, after;
  std::optional<double> ratio;  // after / before
  bool regressed = false;
  std::string why;  // for a regression: what crossed which line
};

struct ModelChange {
  std::string name;
  // Parallel to the current run's accuracy_columns / performance_series; empty where the
  // baseline has no row for that model and column.
  std::vector<std::optional<AccuracyChange>> accuracy;
  std::vector<std::optional<SpeedupChange>> e2e, op;
  bool regressed() const;
  bool improved() const;
};

struct BaselineComparison {
  // A speedup regresses when now/before < 1 - threshold and, where both runs have confidence
  // intervals, the intervals do not overlap (otherwise the change is within the noise).
  double threshold = 0.05;
  std::vector<ModelChange> models;  // parallel to the current run's models
  int regressions() const;
};

BaselineComparison compare_with_baseline(const JoinedResults& current,
                                         const JoinedResults& baseline, double threshold = 0.05);

}  // namespace zoobench::report
