// The two files' column lists (the CSV contracts of docs/formats.md: extended at the end, never
// reordered).
#include "zoobench/results/columns.h"

#include "zoobench/results/rows.h"

namespace zoobench::columns {

const std::vector<Column>& columns_of(ExperimentKind kind) {
  // Upstream's columns first, on their own line(s), as docs/formats.md lists them.
  // clang-format off
  static const std::vector<Column> kAccuracyColumns = {
      kDev, kName, kBatchSize, kAccuracy,  // upstream
      kBackend, kMode, kDtype, kTolerance, kCosine, kToleranceSource, kMaxAbs, kMeanAbs, kRmseRes,
      kRmseRef, kMargin, kWorstTensor, kFailedTensors, kTotalTensors, kMinPassingTol, kPatches,
      kInputLayout, kCudagraphs, kReason, kLog, kDurationS, kGraphs, kGraphBreaks, kRecompiles,
      kSuite, kBackendFamily, kSwitchesOff, kJobS, kExportS, kEagerReference, kStrictAccuracy};
  static const std::vector<Column> kPerformanceColumns = {
      kDev, kName, kBatchSize, kSpeedup, kAbsLatency, kCompilationLatency, kCompressionRatio,
      kEagerPeakMem, kDynamoPeakMem,  // upstream
      kEagerLatency, kSpeedupCiLow, kSpeedupCiHigh, kCovEager, kCovCompiled, kEagerOpMs,
      kCompiledOpMs, kOpSpeedup, kBackend, kMode, kDtype, kStatus, kUnstable, kIterationsPerRun,
      kRepeat, kEagerMin, kEagerP10, kEagerP90, kCompiledMin, kCompiledP10, kCompiledP90,
      kLaunchBound, kCudagraphs, kPatches, kReason, kLog, kPythonEagerLatency, kPythonSpeedup,
      kGraphs, kGraphBreaks, kRecompiles, kSuite, kBackendFamily, kUnstableCov, kSwitchesOff, kJobS, kExportS,
      kEagerReference};
  // clang-format on
  return kind == ExperimentKind::kAccuracy ? kAccuracyColumns : kPerformanceColumns;
}

const Column& status_column(ExperimentKind kind) {
  return kind == ExperimentKind::kAccuracy ? kAccuracy : kStatus;
}

}  // namespace zoobench::columns
