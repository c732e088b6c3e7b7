// Experiment records -> result rows (the columns of results/columns.h, docs/formats.md). The
// experiments return typed records; this file says which record field lands in which column
// (each side's statistics land in the columns they are registered with: perf/measurement.h).
#pragma once

#include <string>
#include <vector>

#include "zoobench/accuracy/experiment.h"
#include "zoobench/perf/experiment.h"
#include "zoobench/results/rows.h"
#include "zoobench/runner/run_options.h"
#include "zoobench/zoo/catalog.h"

namespace zoobench {

// The cells every row of one model run shares.
struct RowContext {
  std::string device;
  std::string name;
  int64_t batch_size = 0;
  std::string backend;
  std::string mode;
  std::string dtype;
  std::vector<std::string> patches;
  std::string input_layout = kDefaultInputLayout;
  std::string log;
  std::string suite;
  std::string backend_family;  // Backend::family()
  std::vector<std::string> switches_off;  // the backend's switches off for this row
  std::string eager_reference;  // "python" | "torchscript" (ModelPlan::eager_reference); "" unknown
};

// The cells a run's options decide for every row of one model on one device; batch size,
// patches and input layout are filled in by whoever knows them.
RowContext row_context(const RunOptions& options, const ZooEntry& model, const std::string& device,
                       const std::string& log);

ResultRow accuracy_row(const AccuracyRecord& record, const RowContext& context);
ResultRow performance_row(const PerformanceRecord& record, const RowContext& context);
// A row for a model that never reached its experiment (load failure, timeout, crash, ...).
ResultRow failure_row(ExperimentKind kind, Status status, const std::string& reason, const RowContext& context);

}  // namespace zoobench
