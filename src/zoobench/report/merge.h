// `zoobench merge`: the partitions' (or devices') result files combined into one, losslessly:
// every row, every column (ours in our order, then any others in the order first seen), the
// JSON detail where the inputs have it, rows sorted by model name then device.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "zoobench/results/result_files.h"
#include "zoobench/results/rows.h"

namespace zoobench::report {

struct MergedResults {
  ExperimentKind kind = ExperimentKind::kAccuracy;
  std::vector<std::string> columns;
  std::vector<ResultRow> rows;
  nlohmann::json context;  // {"merged_from": [{"file": ..., "context": ...}, ...]}
};

// Throws UsageError when the inputs mix accuracy and performance files, or when one identity
// (ResultRow::identity: device, model, mode, backend, dtype, input layout) has two different
// rows (naming both files). Identical duplicates are kept once, with detail if either has it.
MergedResults merge_results(const std::vector<ResultFile>& inputs);

// Writes the CSV and its JSON twin: `path` may name either (.csv or .json); the other goes
// beside it with the same stem. Both are written atomically.
void write_merged_results(const MergedResults& merged, const std::string& path);

}  // namespace zoobench::report
