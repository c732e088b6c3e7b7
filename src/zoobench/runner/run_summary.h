// What a run prints when it ends, in the same shape every time: a line of counts, one line per
// backend (accuracy pass rate, geomean speedup with its band, rows timed and unstable, failures),
// then the failures by status, the unstable rows and what the host was doing. A part with
// nothing in it says "none" or "-" instead of disappearing, so a person (or a script) reading
// two runs' ends finds the same lines in the same places.
#pragma once

#include <cstddef>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "zoobench/results/rows.h"

namespace zoobench {

struct BackendTally {
  std::string backend;
  int accuracy_rows = 0, accuracy_passed = 0;
  // Of the performance rows that passed with a speedup: the speedups and, where the row has
  // one, its 95% interval.
  std::vector<double> speedups;
  std::vector<std::pair<double, double>> intervals;
  int timed = 0, unstable = 0, failed = 0;
};

struct RunTally {
  std::vector<BackendTally> backends;  // in the order the rows name them
  // "fail_accuracy (accuracy, jit)" -> the models with that status
  std::map<std::string, std::vector<std::string>> failures;
  std::vector<std::string> unstable_models;  // "densenet121 (jit, ±12%)"
  std::size_t models = 0;
  // The host's cost of one small op on the device where each timing began (perf/launch_cost.h).
  std::vector<double> op_launch_us;
  // The timings that ran with CUBLAS_WORKSPACE_CONFIG set (timed_section.cublas_workspace_config).
  std::size_t timed_with_cublas_workspace_config = 0;
  // The timings that came out unstable beside other pipelines and were taken again with them
  // paused (timed_section.unstable_beside_others), and how many of those were stable then.
  std::vector<std::string> retimed_models;
  std::size_t retimed_stable = 0;
};

RunTally tally_rows(const std::vector<ResultRow>& rows);

// The geomean of the speedups and the band [geomean of the lower ends, geomean of the upper
// ends]: where the geomean stays even if every model's measurement erred the same way. No band
// unless every speedup has its interval.
struct GeomeanSpeedup {
  double value = 0;
  std::optional<std::pair<double, double>> band;
};
std::optional<GeomeanSpeedup> geomean_speedup(const BackendTally& tally);

// "±12%": half the width of a performance row's speedup interval against its speedup (how
// unstable a row is); empty when the row has no interval.
std::string speedup_spread(const ResultRow& row);

// "load average 3.1 over the last minute on 2 CPU(s)"; empty when the system does not say.
std::string host_load();

// `skipped`: the models the run did not start (its skip lists). The last line is the host's
// load average against its CPUs, with a warning when it was busier than its CPUs.
void print_run_summary(const RunTally& tally, std::size_t skipped, std::FILE* out);

}  // namespace zoobench
