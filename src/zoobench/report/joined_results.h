// The data model every report renders: result rows (accuracy and performance, from one or more
// runs) joined by model. Accuracy becomes one column per device (the Ascend suite's
// GPU_accuracy / NPU_accuracy); performance one series per backend, so backends sit side by
// side. Built once by join_results(); the markdown and HTML renderers only format it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "zoobench/report/latency_matrix.h"
#include "zoobench/results/rows.h"

namespace zoobench::report {

// What distinguishes two runs of the same model. Empty fields come from upstream CSVs, which
// have no backend/mode/dtype columns.
struct SeriesKey {
  std::string dev, mode, dtype, backend;
  bool operator==(const SeriesKey& other) const;
};

// One accuracy row of one model, as the report needs it.
struct AccuracyCell {
  std::string status;  // as written in the file, also when it is not in our vocabulary
  std::optional<double> margin;
  std::string reason;
  bool passed() const;  // pass or pass_due_to_skip
};

// One performance row of one model. Times in ms per iteration, compile latency in seconds.
struct PerformanceCell {
  std::string status;  // the row's status; upstream rows have none: derived from speedup > 0
  std::optional<double> eager_ms, compiled_ms, speedup, speedup_ci_low, speedup_ci_high;
  std::optional<double> eager_op_ms, compiled_op_ms, op_speedup;
  std::optional<double> compilation_latency_s, compression_ratio;
  bool unstable = false;  // a side's CoV exceeded the threshold (the row's `unstable` = 1)
  std::string reason;
  // What the speedup is measured against: the row's eager_reference ("python": the model's
  // Python module; "torchscript": eval.pt in the TorchScript interpreter); "python" for an
  // upstream row (upstream's speedup is against the Python module); "" where a row of zoobench's
  // made before the column does not say.
  std::string eager_reference;
  bool passed() const;
};

// Where a row's numbers land in a cell: each column, read by its columns::Reading, fills one
// field. Derived values (an upstream row's eager time, the OP speedup from the two kernel
// times) are computed after these.
struct AccuracyField {
  const columns::Column* column;
  std::optional<double> AccuracyCell::*field;
};
struct PerformanceField {
  const columns::Column* column;
  std::optional<double> PerformanceCell::*field;
};
const std::vector<AccuracyField>& accuracy_fields();
const std::vector<PerformanceField>& performance_fields();

// A cell as its column reads it: a number (kPositive: only above zero), or a flag.
std::optional<double> read_number(const ResultRow& row, const columns::Column& column);
bool read_flag(const ResultRow& row, const columns::Column& column);

struct AccuracyColumn {
  SeriesKey key;
  std::string label;  // "cuda"; with more than one backend/mode/dtype also those: "cuda_jit"
  std::string header() const { return label.empty() ? "accuracy" : label + "_accuracy"; }
};

struct PerformanceSeries {
  SeriesKey key;
  // The eager side's context: "" when all series share device, mode and dtype, else the parts
  // that differ ("cuda", "cpu_training"); series with the same context share one eager column.
  std::string context;
  std::string label;  // backend ("compiled" for upstream rows), prefixed with the context
  // Its cells' eager_reference where they agree, kMixedEagerReferences where they do not.
  std::string eager_reference;
};

struct JoinedModel {
  std::string name;
  std::vector<std::optional<AccuracyCell>> accuracy;        // parallel to accuracy_columns
  std::vector<std::optional<PerformanceCell>> performance;  // parallel to performance_series
};

struct JoinedResults {
  std::vector<AccuracyColumn> accuracy_columns;       // in order of first appearance
  std::vector<PerformanceSeries> performance_series;  // in order of first appearance
  std::vector<JoinedModel> models;                    // sorted by name
  // What the rows were run with, distinct values in order of first appearance.
  std::vector<std::string> devices, modes, dtypes, backends;
  // The CoV thresholds the rows' unstable flags used (their unstable_cov cells; rows made before
  // that column existed used 2.5%), as text for the reports: "2.5%", or "2.5% or 5.0%".
  std::string unstable_threshold = "2.5%";
  // Backends side by side, per suite and context (only where two or more backends ran).
  std::vector<LatencyMatrix> latency_matrices;
  // Rows that could not be placed cleanly (e.g. two rows for the same model and column: the
  // later one is kept). Renderers show these; the CLI prints them.
  std::vector<std::string> warnings;

  // The distinct eager contexts of the performance series, in order of first appearance.
  std::vector<std::string> performance_contexts() const;
};

JoinedResults join_results(const std::vector<ResultRow>& rows);

inline constexpr const char* kMixedEagerReferences = "mixed";
// What speedups against `eager_reference` are measured against, in a few words for headings
// and column titles: "Python eager", "TorchScript eager".
std::string eager_reference_name(const std::string& eager_reference);
// The same, said in full: "the model's Python module", "eval.pt in the TorchScript interpreter".
std::string eager_reference_meaning(const std::string& eager_reference);
// "vs Python eager": what a speedup column or heading of the series adds.
std::string speedup_baseline(const PerformanceSeries& series);
// How the series' speedups read, one sentence for under a table: "Speedups are eager / compiled,
// eager being the model's Python module (eager_reference python)." or, where the series differ,
// each series' reference.
std::string speedup_baselines_sentence(const JoinedResults& joined);

// One line about what was run: "4 models · devices: cpu, cuda · mode: inference · ...".
std::string describe_run(const JoinedResults& joined);

// The index of the accuracy column or performance series with `key` among `columns`, or -1.
template <typename Column>
int find_key(const std::vector<Column>& columns, const SeriesKey& key) {
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].key == key) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace zoobench::report
