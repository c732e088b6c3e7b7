// Where a run's rows go: one CSV (appended and flushed per row) and its JSON twin (rewritten
// atomically per row), so a killed run loses no finished row and --resume can continue it.
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "zoobench/results/csv.h"
#include "zoobench/results/rows.h"

namespace zoobench {

class ResultSink {
 public:
  // `csv_path` ends in .csv; the JSON goes beside it with the same stem. Rows already in an
  // existing CSV/JSON are kept (they are what --resume skips).
  ResultSink(ExperimentKind kind, std::string csv_path, nlohmann::json context);

  void write(const ResultRow& row);

  // Identities (ResultRow::identity) of the rows already present.
  const std::set<std::string>& identities() const { return identities_; }
  const std::vector<ResultRow>& rows() const { return rows_; }
  const std::string& csv_path() const { return csv_path_; }
  std::string json_path() const;
  ExperimentKind kind() const { return kind_; }

 private:
  void rewrite_json() const;

  ExperimentKind kind_;
  std::string csv_path_;
  nlohmann::json context_;
  std::unique_ptr<CsvAppender> csv_;
  std::vector<ResultRow> rows_;
  std::set<std::string> identities_;
};

// Reads a results file (CSV or its JSON twin) back into rows; the kind is taken from the
// header (`accuracy` column -> accuracy, `speedup` -> performance).
std::vector<ResultRow> read_result_rows(const std::string& path);

// The machine and software a run happened on, recorded with its results (google/benchmark's
// context, plus what a GPU run needs).
nlohmann::json describe_run_context(const std::vector<std::string>& command_line);

}  // namespace zoobench
