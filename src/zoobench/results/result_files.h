// Reading result files (report, compare, merge, bisect and the fuzzer): a CSV or its JSON
// twin (the twin is preferred when it matches the CSV, for the detail it keeps), and folders of
// them. It lives with the rows it reads, so the readers' sanitized fuzzer builds without the
// report library.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "zoobench/results/csv.h"
#include "zoobench/results/rows.h"

namespace zoobench {

struct ResultFile {
  std::string path;
  ExperimentKind kind = ExperimentKind::kAccuracy;
  std::vector<ResultRow> rows;
  std::vector<std::string> columns;  // as in the file (CSV header; JSON: the cells seen)
  nlohmann::json context;            // the JSON twin's run context, null when there is none
  // Rows carry JSON detail (per-tensor verdicts, samples): from a JSON file, or for a CSV from
  // its twin (cells stay exactly as the CSV has them).
  bool with_detail = false;
};

// Why a row of a results CSV whose columns are `header` cannot be trusted, or "" when it can:
// cut off (no newline at its end: "0.2" may be half of "0.25"), another number of fields than
// the header (a glued or ragged row), an unknown status (a shifted row puts another column's
// value there). --resume sets such rows aside; merge, report and compare refuse them.
std::string why_row_untrusted(const CsvRecord& record, const std::vector<std::string>& header,
                              ExperimentKind kind);

// Throws UsageError naming the file and what to pass instead when it is missing or is not a
// zoobench/upstream results file, and `<file>:<line>: <why>` for a row that cannot be trusted
// (why_row_untrusted; in a JSON file, a record of an unknown status).
ResultFile load_result_file(const std::string& path);

// Folders become the results CSVs in them (sorted; their JSON twins are not repeated), or the
// JSON results files when a folder has no CSV. Files are kept as given.
std::vector<std::string> expand_result_paths(const std::vector<std::string>& paths);

}  // namespace zoobench
