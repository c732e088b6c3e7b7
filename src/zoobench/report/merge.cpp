// Lossless merging of result files.
#include "zoobench/report/merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "zoobench/results/csv.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/files.h"

namespace zoobench::report {
namespace {

// Cells with empty values dropped: a CSV row has every column, a JSON record may not.
std::map<std::string, std::string> nonempty_cells(const ResultRow& row) {
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : row.cells) {
    if (!value.empty()) out.emplace(name, value);
  }
  return out;
}

bool has_detail(const ResultRow& row) { return !row.detail.is_null() && !row.detail.empty(); }

}  // namespace

MergedResults merge_results(const std::vector<ResultFile>& inputs) {
  if (inputs.empty())
    throw UsageError("nothing to merge: pass the result files of every partition");
  MergedResults merged;
  merged.kind = inputs.front().kind;
  merged.columns = result_columns(merged.kind);
  merged.context = {{"merged_from", nlohmann::json::array()}};
  struct Seen {
    std::size_t index;
    std::string file;
  };
  std::map<std::string, Seen> seen;
  for (const auto& input : inputs) {
    if (input.kind != merged.kind) {
      throw UsageError(fmt::format(
          "{} holds {} results but {} holds {} results: merge accuracy files and performance "
          "files separately",
          input.path, experiment_name(input.kind), inputs.front().path,
          experiment_name(merged.kind)));
    }
    merged.context["merged_from"].push_back({{"file", input.path}, {"context", input.context}});
    for (const auto& column : input.columns) {
      if (std::find(merged.columns.begin(), merged.columns.end(), column) == merged.columns.end()) {
        merged.columns.push_back(column);
      }
    }
    for (const auto& row : input.rows) {
      std::string identity = row.identity();
      auto found = seen.find(identity);
      if (found == seen.end()) {
        seen.emplace(identity, Seen{merged.rows.size(), input.path});
        merged.rows.push_back(row);
        continue;
      }
      ResultRow& kept = merged.rows[found->second.index];
      if (nonempty_cells(kept) != nonempty_cells(row)) {
        throw UsageError(fmt::format(
            "{} and {} both have a different row for {} on {} (mode '{}', backend '{}', dtype "
            "'{}'): the partitions overlap or a model was run twice; keep one of the rows (or "
            "re-run that model) and merge again",
            found->second.file, input.path, cell(row, columns::kName), cell(row, columns::kDev),
            cell(row, columns::kMode), cell(row, columns::kBackend), cell(row, columns::kDtype)));
      }
      if (!has_detail(kept) && has_detail(row)) kept.detail = row.detail;
    }
  }
  std::stable_sort(merged.rows.begin(), merged.rows.end(),
                   [](const ResultRow& a, const ResultRow& b) {
                     return std::make_pair(cell(a, columns::kName), cell(a, columns::kDev)) <
                            std::make_pair(cell(b, columns::kName), cell(b, columns::kDev));
                   });
  return merged;
}

void write_merged_results(const MergedResults& merged, const std::string& path) {
  std::filesystem::path target(path);
  std::filesystem::path csv_path = target, json_path = target;
  if (target.extension() == ".json") {
    csv_path.replace_extension(".csv");
  } else {
    json_path.replace_extension(".json");
  }
  if (csv_path.has_parent_path()) std::filesystem::create_directories(csv_path.parent_path());

  std::string csv = csv_line(merged.columns);
  for (const auto& row : merged.rows) {
    std::vector<std::string> cells;
    for (const auto& column : merged.columns) cells.push_back(cell(row, column.c_str()));
    csv += csv_line(cells);
  }
  nlohmann::json json;
  json["format"] = "zoobench-results/1";
  json["kind"] = std::string(experiment_name(merged.kind));
  json["context"] = merged.context;
  json["records"] = nlohmann::json::array();
  for (const auto& row : merged.rows) {
    ResultRow complete = row;
    complete.kind = merged.kind;
    // Every column present, as the run's own JSON has them.
    for (const auto& column : merged.columns) complete.cells.emplace(column, "");
    json["records"].push_back(row_to_json(complete));
  }
  write_file_atomically(csv_path.string(), csv);
  write_file_atomically(json_path.string(), json.dump(1) + "\n");
}

}  // namespace zoobench::report
