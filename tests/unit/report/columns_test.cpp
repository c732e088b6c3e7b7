// The column schema (results/columns.h) against what is written and read back: the CSV contracts
// keep their names and order, and every column of the schema survives a write to the CSV and its
// JSON twin and a read back, and lands in the report's field that reads it. A column added to the
// schema but dropped on the way, or read by the report from a column no file has, fails here.
#include "zoobench/results/columns.h"

#include <gtest/gtest.h>

#include <set>

#include "testing/testing.h"
#include "zoobench/report/joined_results.h"
#include "zoobench/results/sink.h"

namespace zoobench {
namespace {

// The contracts of docs/formats.md as they were when the schema replaced the typed lists: the
// schema may grow at the end, never reorder or rename these.
// clang-format off
const std::vector<std::string> kAccuracyContract = {
    "dev", "name", "batch_size", "accuracy", "backend", "mode", "dtype", "tolerance", "cosine",
    "tolerance_source", "max_abs", "mean_abs", "rmse_res", "rmse_ref", "margin", "worst_tensor",
    "failed_tensors", "total_tensors", "min_passing_tol", "patches", "input_layout", "cudagraphs",
    "reason", "log", "duration_s", "graphs", "graph_breaks", "recompiles", "suite",
    "backend_family", "switches_off"};
const std::vector<std::string> kPerformanceContract = {
    "dev", "name", "batch_size", "speedup", "abs_latency", "compilation_latency",
    "compression_ratio", "eager_peak_mem", "dynamo_peak_mem", "eager_latency", "speedup_ci_low",
    "speedup_ci_high", "cov_eager", "cov_compiled", "eager_op_ms", "compiled_op_ms", "op_speedup",
    "backend", "mode", "dtype", "status", "unstable", "iterations_per_run", "repeat", "eager_min",
    "eager_p10", "eager_p90", "compiled_min", "compiled_p10", "compiled_p90", "launch_bound",
    "cudagraphs", "patches", "reason", "log", "python_eager_latency", "python_speedup", "graphs",
    "graph_breaks", "recompiles", "suite", "backend_family", "unstable_cov", "switches_off"};
// clang-format on

const ExperimentKind kKinds[] = {ExperimentKind::kAccuracy, ExperimentKind::kPerformance};

TEST(Columns, KeepTheCsvContracts) {
  for (ExperimentKind kind : kKinds) {
    const auto& contract =
        kind == ExperimentKind::kAccuracy ? kAccuracyContract : kPerformanceContract;
    const auto& header = result_columns(kind);
    ASSERT_GE(header.size(), contract.size()) << experiment_name(kind);
    EXPECT_EQ(std::vector<std::string>(header.begin(), header.begin() + contract.size()), contract)
        << experiment_name(kind) << ": columns are added at the end, never reordered";
    std::set<std::string> distinct(header.begin(), header.end());
    EXPECT_EQ(distinct.size(), header.size()) << experiment_name(kind) << ": a column twice";
  }
}

// A value for the column that its reading keeps, distinct from every other column's.
std::string value_for(const columns::Column& column, std::size_t index) {
  switch (column.reading) {
    case columns::Reading::kFlag:
      return "1";
    case columns::Reading::kNumber:
    case columns::Reading::kPositive:
      return std::to_string(index + 1) + ".25";
    case columns::Reading::kText:
      break;
  }
  return std::string(column.name) + " value";
}

ResultRow row_with_every_column(ExperimentKind kind) {
  ResultRow row;
  row.kind = kind;
  const auto& schema = columns::columns_of(kind);
  for (std::size_t i = 0; i < schema.size(); ++i) set_cell(row, schema[i], value_for(schema[i], i));
  // The status columns hold a status, as every reader expects.
  row.set_status(Status::kPass);
  return row;
}

TEST(Columns, EveryColumnRoundTripsThroughTheFiles) {
  for (ExperimentKind kind : kKinds) {
    testing::ScratchDir dir;
    std::string path = dir.file(std::string("run_") + std::string(experiment_name(kind)) + ".csv");
    ResultRow written = row_with_every_column(kind);
    ResultSink(kind, path, nlohmann::json::object()).write(written);
    std::string json_path = path.substr(0, path.size() - 4) + ".json";
    for (const std::string& file : {path, json_path}) {
      auto rows = read_result_rows(file);
      ASSERT_EQ(rows.size(), 1u) << file;
      EXPECT_EQ(rows[0].kind, kind) << file;
      for (const auto& column : columns::columns_of(kind)) {
        EXPECT_EQ(cell(rows[0], column), cell(written, column))
            << file << ": column " << column.name << " did not survive the round trip";
      }
    }
  }
}

// Every field the report reads comes from a column of the schema, and reads back what was written.
TEST(Columns, TheReportReadsEachColumnItBindsBack) {
  auto in_schema = [](ExperimentKind kind, const columns::Column* column) {
    for (const auto& known : columns::columns_of(kind)) {
      if (known.name == column->name) return true;
    }
    return false;
  };
  testing::ScratchDir dir;
  std::vector<ResultRow> rows;
  for (ExperimentKind kind : kKinds) {
    std::string path = dir.file(std::string("run_") + std::string(experiment_name(kind)) + ".csv");
    ResultSink(kind, path, nlohmann::json::object()).write(row_with_every_column(kind));
    for (auto& row : read_result_rows(path)) rows.push_back(std::move(row));
  }
  report::JoinedResults joined = report::join_results(rows);
  ASSERT_EQ(joined.models.size(), 1u);
  const report::JoinedModel& model = joined.models[0];
  ASSERT_TRUE(model.accuracy.at(0).has_value());
  ASSERT_TRUE(model.performance.at(0).has_value());
  for (const auto& [column, field] : report::accuracy_fields()) {
    EXPECT_TRUE(in_schema(ExperimentKind::kAccuracy, column)) << column->name;
    EXPECT_EQ((*model.accuracy[0]).*field, report::read_number(rows[0], *column)) << column->name;
    EXPECT_TRUE(((*model.accuracy[0]).*field).has_value()) << column->name;
  }
  for (const auto& [column, field] : report::performance_fields()) {
    EXPECT_TRUE(in_schema(ExperimentKind::kPerformance, column)) << column->name;
    EXPECT_EQ((*model.performance[0]).*field, report::read_number(rows[1], *column))
        << column->name;
    EXPECT_TRUE(((*model.performance[0]).*field).has_value()) << column->name;
  }
  EXPECT_TRUE(model.performance[0]->unstable);
}

}  // namespace
}  // namespace zoobench
