// A result row: the cells of one CSV line (by column name) plus the detail that does not fit a
// cell (per-tensor verdicts, raw samples) for the JSON file. Experiments build rows from their
// typed records; the runner, merge, resume and reports only see rows.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "zoobench/results/columns.h"
#include "zoobench/results/status.h"

namespace zoobench {

enum class ExperimentKind { kAccuracy, kPerformance };

std::string_view experiment_name(ExperimentKind kind);  // "accuracy" / "performance"

// The CSV header of each kind: upstream's columns first, then ours (docs/formats.md); the names
// of columns::columns_of(kind).
const std::vector<std::string>& result_columns(ExperimentKind kind);

struct ResultRow {
  ExperimentKind kind = ExperimentKind::kAccuracy;
  std::map<std::string, std::string> cells;
  nlohmann::json detail = nlohmann::json::object();

  // The status (accuracy: the `accuracy` column; performance: `status`).
  Status status() const;
  void set_status(Status status);
  // Identity for --resume and merge: device, name, mode, backend, dtype, input layout.
  std::string identity() const;
};

// The input layout of an accuracy row that names none (and of runs without --input-layouts):
// the inputs as saved.
inline constexpr const char* kDefaultInputLayout = "contiguous";

// A row's input layout: its input_layout cell, or the default.
std::string input_layout_of(const ResultRow& row);

// Whether the row's run ran out of memory: its status says so (OOM, eager_1st/2nd_run_OOM), its
// model's build did (model_fail_to_load, the reason an out-of-memory error), or its CUDA-graph
// capture did and it ran uncaptured (`cudagraphs` fallback, the reason an out-of-memory error).
// The runner repeats such a check alone when it ran beside others: the memory it lacked may
// have been theirs (DebertaForMaskedLM's cudagraphs check fell back so beside other checks on an
// H200, and passed without the graph it was to measure).
bool ran_out_of_memory(const ResultRow& row);

// A row's cell, or "" when the row has no such column (upstream's files have fewer columns,
// JSON records may leave empty ones out).
const std::string& cell(const ResultRow& row, const std::string& column);
const std::string& cell(const ResultRow& row, const columns::Column& column);
void set_cell(ResultRow& row, const columns::Column& column, std::string value);

// Cell formatting: numbers with enough digits to round-trip what matters, "" for absent.
std::string format_cell(double value);
std::string format_cell(std::optional<double> value);
std::string format_cell(int64_t value);

// `text` with each byte sequence that is not UTF-8 replaced by U+FFFD, as nlohmann's dump does
// with error_handler_t::replace. Cells pass through it before they are written (JSON must be
// UTF-8, and the CSV should read as its twin does); identities compare through it too.
std::string with_invalid_utf8_replaced(const std::string& text);

// How a result file's JSON is written: invalid UTF-8 replaced (see above), never thrown on.
std::string dump_result_json(const nlohmann::json& json, int indent = -1);

// JSON form of a row: cells with numeric-looking values as numbers, plus "detail".
nlohmann::json row_to_json(const ResultRow& row);
ResultRow row_from_json(const nlohmann::json& json);

}  // namespace zoobench
