// Records -> rows against the column schema (results/columns.h): a record with every field set
// fills every column of its kind's schema and nothing outside it, so a column added to the
// schema but not filled (or filled under another name) fails here.
#include "zoobench/runner/record_rows.h"

#include <gtest/gtest.h>

#include <set>

#include "zoobench/results/columns.h"

namespace zoobench {
namespace {

RowContext full_context() {
  return {"cuda:0",
          "resnet18",
          4,
          "torch_compile",
          "inference",
          "float32",
          {"packed_dropout"},
          "channels_last",
          "logs/resnet18.log",
          "torchvision",
          "torch_compile",
          {"freeze", "patch:packed_dropout"},
          "python"};
}

ExecutionInfo full_execution_info() {
  ExecutionInfo info;
  info.cudagraphs = "on";
  info.graphs = 1;
  info.graph_breaks = 0;
  info.recompiles = 0;
  return info;
}

SideSummary side(double median_ms) {
  SideSummary s;
  s.samples_ms = {median_ms * 0.9, median_ms, median_ms * 1.1};
  for (const SideStatistic& registered : side_statistics()) {
    s.*registered.field = registered.statistic.compute(s.samples_ms);
  }
  return s;
}

void expect_every_schema_column(const ResultRow& row) {
  const auto& schema = columns::columns_of(row.kind);
  std::set<std::string> names;
  for (const auto& column : schema) {
    names.insert(column.key());
    // job_s is the child process's wall time, which only the parent knows (worker_pool.cpp).
    if (column.key() == columns::kJobS.key()) continue;
    if (column.key() == columns::kExportS.key()) continue;  // the parent's, for exported models
    EXPECT_FALSE(cell(row, column).empty()) << "column " << column.name << " is not filled";
  }
  for (const auto& [name, value] : row.cells) {
    EXPECT_TRUE(names.count(name)) << "cell " << name << " is not a column of the schema";
  }
}

TEST(RecordRows, AFullAccuracyRecordFillsEveryColumn) {
  AccuracyRecord record;
  record.reason = "within tolerance";
  record.max_abs = 1e-6;
  record.mean_abs = 1e-7;
  record.rmse_res = 2e-6;
  record.rmse_ref = 3e-6;
  record.margin = 0.01;
  record.min_passing_tol = 1e-5;
  record.worst_tensor = "output[0]";
  record.failed_tensors = 0;
  record.total_tensors = 2;
  record.duration_s = 1.5;
  record.strict_status = Status::kFailAccuracy;
  record.compiled_info = full_execution_info();
  expect_every_schema_column(accuracy_row(record, full_context()));
}

TEST(RecordRows, AFullPerformanceRecordFillsEveryColumn) {
  PerformanceRecord record;
  record.reason = "measured";
  PairedMeasurement& m = record.measurement;
  m.eager = side(2.0);
  m.compiled = side(1.0);
  m.uncompiled = side(2.5);
  m.iterations_per_run = 10;
  m.unstable_cov = 0.025;
  m.speedup = 2.0;
  m.speedup_ci_low = 1.9;
  m.speedup_ci_high = 2.1;
  record.eager_kernel_ms = 1.5;
  record.compiled_kernel_ms = 0.5;
  record.eager_peak_bytes = 2'000'000'000;
  record.compiled_peak_bytes = 1'000'000'000;
  record.compilation_latency_s = 3.0;
  record.compiled_info = full_execution_info();
  record.eager_launch_bound = record.compiled_launch_bound = true;
  ResultRow row = performance_row(record, full_context());
  expect_every_schema_column(row);
  // Each registered statistic lands in its two columns.
  for (const SideStatistic& registered : side_statistics()) {
    EXPECT_EQ(cell(row, *registered.eager_column), format_cell(m.eager.*registered.field))
        << registered.statistic.name;
    EXPECT_EQ(cell(row, *registered.compiled_column), format_cell(m.compiled.*registered.field))
        << registered.statistic.name;
  }
}

// What the timed section ran beside, in the row's detail: the small op's cost and a
// CUBLAS_WORKSPACE_CONFIG that was set, each only where the record has it.
TEST(RecordRows, TheTimedSectionKeepsTheOpCostAndACublasWorkspaceConfig) {
  PerformanceRecord record;
  record.measurement.speedup = 2.0;
  record.timed_section = TimedSection{1.0, 2.0};
  record.op_launch_us = 4.5;
  record.cublas_workspace_config = ":4096:8";
  const auto section = performance_row(record, full_context()).detail.at("timed_section");
  EXPECT_EQ(section.at("op_launch_us").get<double>(), 4.5);
  EXPECT_EQ(section.at("cublas_workspace_config").get<std::string>(), ":4096:8");
  record.cublas_workspace_config.reset();
  EXPECT_FALSE(performance_row(record, full_context())
                   .detail.at("timed_section")
                   .contains("cublas_workspace_config"));
  EXPECT_FALSE(section.contains("unstable_beside_others"));
  record.unstable_beside_others = FirstTiming{0.12, 0.02, 1.7};
  const auto first = performance_row(record, full_context())
                         .detail.at("timed_section")
                         .at("unstable_beside_others");
  EXPECT_EQ(first.at("eager_spread").get<double>(), 0.12);
  EXPECT_EQ(first.at("compiled_spread").get<double>(), 0.02);
  EXPECT_EQ(first.at("speedup").get<double>(), 1.7);
}

}  // namespace
}  // namespace zoobench
