// Where a run's rows go: one CSV (appended and flushed per row) and its JSON twin (rewritten
// atomically per row), so a killed run loses no finished row and --resume can continue it.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "zoobench/results/csv.h"
#include "zoobench/results/rows.h"

namespace zoobench {

// The deepest nesting a results JSON (or a child's rows file) may have. Ours are 5 levels deep
// (document, records, record, detail, a list of per-tensor verdicts); 64 leaves room for richer
// detail and other tools' files while staying far below the depth at which nlohmann's recursive
// dump overflows the stack (a 100,000-deep file crashed `zoobench merge` with SIGSEGV).
inline constexpr int kMaxResultJsonDepth = 64;

// Parses a results JSON; one nested deeper than kMaxResultJsonDepth, or not JSON, is a
// std::runtime_error naming `path` (and the limit).
nlohmann::json parse_result_json(const std::string& text, const std::string& path);

// Refuses (UsageError naming the file and the limit) a results file whose JSON is
// nested deeper than kMaxResultJsonDepth: `path` itself when it is a .json, else its JSON twin
// when there is one. Readers that hand rows on to a JSON writer (merge) call it first.
void check_result_json_depth(const std::string& path);

class ResultSink {
 public:
  // `csv_path` ends in .csv; the JSON goes beside it with the same stem. Rows already in an
  // existing CSV/JSON are kept (they are what --resume skips), except rows that cannot be
  // trusted (cut off by a killed run, the wrong number of fields, an unknown status): those
  // are moved to `<csv_path>.torn` with a warning naming each line, and their models have no
  // row (--resume runs them again). A file of an older zoobench, whose header lacks columns
  // added since at the end, first gets them, empty in its rows.
  ResultSink(ExperimentKind kind, std::string csv_path, nlohmann::json context);

  // Appends the row to the CSV, then rewrites the JSON. When either write fails both files are
  // left as they were (no part row, no stale temporary file) and ResultWriteError is thrown.
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
// header (`accuracy` column -> accuracy, `speedup` -> performance). The JSON's depth is bounded
// (kMaxResultJsonDepth).
std::vector<ResultRow> read_result_rows(const std::string& path);

// The machine and software a run happened on, recorded with its results (google/benchmark's
// context, plus what a GPU run needs).
nlohmann::json describe_run_context(const std::vector<std::string>& command_line);

}  // namespace zoobench
