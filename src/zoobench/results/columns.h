// The result columns, each defined once: its CSV name, which files carry it and where (the order
// of docs/formats.md: upstream's columns first, then ours, new ones at the end), and how a report
// reads it back. The files that fill and read cells name a column by its constant here, never by
// a typed string, so a renamed or misspelt column does not compile.
//
// Adding a column: a constant below, its place at the end of columns_of()'s list in columns.cpp,
// the line that fills it in runner/record_rows.cpp (the records live above this library) and its
// meaning in docs/formats.md. tests/unit/results/columns_test.cpp and
// tests/unit/runner/record_rows_test.cpp then fail until it is written, read back and filled.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace zoobench {
enum class ExperimentKind;
}

namespace zoobench::columns {

// How a report reads a cell back (report/joined_results.cpp).
enum class Reading {
  kText,
  kNumber,    // a finite number, else absent
  kPositive,  // a positive finite number, else absent: upstream writes 0 for "did not run"
  kFlag,      // "1" (or Python's "True"/"true") is set
};

struct Column {
  std::string_view name;  // the CSV header, the JSON cell key
  Reading reading = Reading::kText;

  std::string key() const { return std::string(name); }
};

// Identity and context, in both files.
inline constexpr Column kDev{"dev"};
inline constexpr Column kName{"name"};
inline constexpr Column kBatchSize{"batch_size", Reading::kNumber};
inline constexpr Column kBackend{"backend"};
inline constexpr Column kMode{"mode"};
inline constexpr Column kDtype{"dtype"};
inline constexpr Column kPatches{"patches"};
inline constexpr Column kCudagraphs{"cudagraphs"};
inline constexpr Column kReason{"reason"};
inline constexpr Column kLog{"log"};
inline constexpr Column kGraphs{"graphs", Reading::kNumber};
inline constexpr Column kGraphBreaks{"graph_breaks", Reading::kNumber};
inline constexpr Column kRecompiles{"recompiles", Reading::kNumber};
inline constexpr Column kSuite{"suite"};
inline constexpr Column kBackendFamily{"backend_family"};
// The backend's optimization switches this row ran with off (`;`-joined): --disable-switches and
// the suite's zoobench.switches_off for the model.
inline constexpr Column kSwitchesOff{"switches_off"};
// Wall seconds of the child process that made the row (its start, the model's load and its
// experiments); empty for rows made in the run's own process. --time-budget's estimates.
inline constexpr Column kJobS{"job_s", Reading::kNumber};
// Seconds the run spent exporting the model on demand (empty: the zoo had it).
inline constexpr Column kExportS{"export_s", Reading::kNumber};
// What the row's eager side ran: "python" (the model's own Python module: speedup is upstream's,
// against Python eager) or "torchscript" (eval.pt in the TorchScript interpreter).
inline constexpr Column kEagerReference{"eager_reference"};

// Accuracy.
inline constexpr Column kAccuracy{"accuracy"};  // the accuracy file's status
inline constexpr Column kTolerance{"tolerance", Reading::kNumber};
inline constexpr Column kCosine{"cosine", Reading::kFlag};
inline constexpr Column kToleranceSource{"tolerance_source"};
inline constexpr Column kMaxAbs{"max_abs", Reading::kNumber};
inline constexpr Column kMeanAbs{"mean_abs", Reading::kNumber};
inline constexpr Column kRmseRes{"rmse_res", Reading::kNumber};
inline constexpr Column kRmseRef{"rmse_ref", Reading::kNumber};
inline constexpr Column kMargin{"margin", Reading::kNumber};
inline constexpr Column kWorstTensor{"worst_tensor"};
inline constexpr Column kFailedTensors{"failed_tensors", Reading::kNumber};
inline constexpr Column kTotalTensors{"total_tensors", Reading::kNumber};
inline constexpr Column kMinPassingTol{"min_passing_tol", Reading::kNumber};
inline constexpr Column kInputLayout{"input_layout"};
inline constexpr Column kDurationS{"duration_s", Reading::kNumber};
// zoobench's own verdict where its check is stricter than the upstream rule that set `accuracy`
// (a non_deterministic model judged anyway, the training outputs upstream leaves out); empty
// when they agree.
inline constexpr Column kStrictAccuracy{"strict_accuracy"};

// Performance.
inline constexpr Column kSpeedup{"speedup", Reading::kPositive};
inline constexpr Column kAbsLatency{"abs_latency", Reading::kPositive};  // compiled median, ms
inline constexpr Column kCompilationLatency{"compilation_latency", Reading::kNumber};
inline constexpr Column kCompressionRatio{"compression_ratio", Reading::kPositive};
inline constexpr Column kEagerPeakMem{"eager_peak_mem", Reading::kNumber};
inline constexpr Column kDynamoPeakMem{"dynamo_peak_mem", Reading::kNumber};
inline constexpr Column kEagerLatency{"eager_latency", Reading::kPositive};  // eager median, ms
inline constexpr Column kSpeedupCiLow{"speedup_ci_low", Reading::kPositive};
inline constexpr Column kSpeedupCiHigh{"speedup_ci_high", Reading::kPositive};
inline constexpr Column kCovEager{"cov_eager", Reading::kNumber};
inline constexpr Column kCovCompiled{"cov_compiled", Reading::kNumber};
inline constexpr Column kEagerOpMs{"eager_op_ms", Reading::kPositive};
inline constexpr Column kCompiledOpMs{"compiled_op_ms", Reading::kPositive};
inline constexpr Column kOpSpeedup{"op_speedup", Reading::kPositive};
inline constexpr Column kStatus{"status"};  // the performance file's status
inline constexpr Column kUnstable{"unstable", Reading::kFlag};
inline constexpr Column kIterationsPerRun{"iterations_per_run", Reading::kNumber};
inline constexpr Column kRepeat{"repeat", Reading::kNumber};
inline constexpr Column kEagerMin{"eager_min", Reading::kNumber};
inline constexpr Column kEagerP10{"eager_p10", Reading::kNumber};
inline constexpr Column kEagerP90{"eager_p90", Reading::kNumber};
inline constexpr Column kCompiledMin{"compiled_min", Reading::kNumber};
inline constexpr Column kCompiledP10{"compiled_p10", Reading::kNumber};
inline constexpr Column kCompiledP90{"compiled_p90", Reading::kNumber};
inline constexpr Column kLaunchBound{"launch_bound"};
inline constexpr Column kPythonEagerLatency{"python_eager_latency", Reading::kPositive};
inline constexpr Column kPythonSpeedup{"python_speedup", Reading::kPositive};
inline constexpr Column kUnstableCov{"unstable_cov", Reading::kNumber};

// The columns of one kind's CSV file, in the file's order (docs/formats.md).
const std::vector<Column>& columns_of(ExperimentKind kind);

// The column that holds a row's status: accuracy's `accuracy`, performance's `status`.
const Column& status_column(ExperimentKind kind);

}  // namespace zoobench::columns
