// `zoobench compare RESULTS --upstream FILES`: zoobench's verdicts, graph-break counts and
// speedups beside those of upstream's benchmarks/dynamo on the same models, model by model.
// Statuses are compared as strings (both speak upstream's vocabulary); graph breaks where both
// sides passed, pass_due_to_skip included (a failed row's count is whatever ran before the
// failure, or upstream's padding 0; `compare --expected`, as check_graph_breaks.py, compares
// `pass` rows only); speedups as upstream defines them,
// against Python eager (zoobench's python_speedup, upstream's speedup), as the ratio
// zoobench/upstream.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "zoobench/results/rows.h"

namespace zoobench::report {

struct ModelAgreement {
  std::string name, dev;
  std::string ours, theirs;  // accuracy statuses; "" where that side has no row
  std::optional<double> our_speedup, their_speedup, ratio;  // ratio = ours / theirs
  std::string our_reason;    // zoobench's diagnosis of its status, for a disagreement
  std::string our_batch, their_batch;  // the accuracy rows' batch sizes ("" without a row)
  std::optional<int64_t> our_breaks, their_breaks;  // the accuracy rows' graph_breaks
  bool same_inputs() const { return our_batch == their_batch; }
  bool both_checked() const { return !ours.empty() && !theirs.empty(); }
  // Both have a row and both ran the model: neither failed to load it or to run it in eager
  // (model_fail_to_load, eager_fail_to_run, eager_1st_run_fail/OOM): a side that could not
  // build the model offline judged nothing.
  bool both_ran() const;
  bool agrees() const { return both_ran() && ours == theirs; }
  // Both passed (pass, pass_due_to_skip) and both counted.
  bool breaks_compared() const;
};

struct UpstreamAgreement {
  std::vector<ModelAgreement> models;  // sorted by name, then device
  int both_checked() const;
  int both_ran() const;   // of those: the status target's whole
  int agreeing() const;
  int checked_at_other_batch_sizes() const;  // of the models both ran
  int breaks_compared() const;
  int breaks_equal() const;  // of those compared
  std::optional<double> median_abs_speedup_deviation() const;  // median of |ratio - 1|
};

// `ours`: zoobench's accuracy and performance rows; `theirs`: upstream's (from its CSVs).
UpstreamAgreement compare_with_upstream(const std::vector<ResultRow>& ours,
                                        const std::vector<ResultRow>& theirs);

// The table (markdown), the counts against the targets (statuses agree on >= 95% of the models
// both ran and graph_breaks are equal on >= 95% of those both passed; median
// |zoobench/upstream - 1| <= 5%), how many verdicts were reached at different batch sizes, the
// models one side could not run, then each disagreement with zoobench's reason.
std::string format_upstream_agreement(const UpstreamAgreement& agreement);

}  // namespace zoobench::report
