// Loading result files.
#include "zoobench/results/result_files.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "zoobench/results/csv.h"
#include "zoobench/results/sink.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/files.h"

namespace zoobench {
namespace {

namespace fs = std::filesystem;

bool is_results_csv(const fs::path& path) {
  try {
    std::string text = read_text_file(path.string());
    CsvTable table = parse_csv(text.substr(0, text.find('\n')), path.string());
    return table.column("accuracy") >= 0 || table.column("speedup") >= 0;
  } catch (const std::exception&) {
    return false;
  }
}

ExperimentKind kind_from_columns(const std::vector<std::string>& columns, const std::string& path) {
  if (std::find(columns.begin(), columns.end(), "accuracy") != columns.end()) {
    return ExperimentKind::kAccuracy;
  }
  if (std::find(columns.begin(), columns.end(), "speedup") != columns.end()) {
    return ExperimentKind::kPerformance;
  }
  throw UsageError(path +
                   " has neither an 'accuracy' nor a 'speedup' column: pass an accuracy or "
                   "performance results file written by `zoobench run` or upstream's runner");
}

// The JSON file's rows when it is a readable results file, with its context.
bool read_json_results(const std::string& path, std::vector<ResultRow>& rows,
                       nlohmann::json& context, std::string& kind_name) {
  // Depth-bounded: every later use (report, compare, merge's writer) recurses over it.
  nlohmann::json parsed = parse_result_json(read_text_file(path), path);
  if (!parsed.is_object() || !parsed.contains("records")) return false;
  rows.clear();
  for (const auto& record : parsed["records"]) rows.push_back(row_from_json(record));
  context = parsed.value("context", nlohmann::json());
  kind_name = parsed.value("kind", "");
  return true;
}

}  // namespace

ResultFile load_result_file(const std::string& path) {
  if (!fs::exists(path)) {
    throw UsageError("results file " + path +
                     " does not exist: pass the CSV or JSON that `zoobench "
                     "run` wrote (see its --output / --output-directory)");
  }
  ResultFile file;
  file.path = path;
  try {
    if (fs::path(path).extension() == ".json") {
      std::string kind_name;
      if (!read_json_results(path, file.rows, file.context, kind_name)) {
        throw UsageError(path + " has no 'records': not a zoobench results JSON");
      }
      file.with_detail = true;
      std::set<std::string> seen;
      for (const auto& row : file.rows) {
        for (const auto& [name, value] : row.cells) {
          if (seen.insert(name).second) file.columns.push_back(name);
        }
      }
      if (!file.rows.empty()) {
        file.kind = file.rows.front().kind;
      } else {
        file.kind =
            kind_name == "performance" ? ExperimentKind::kPerformance : ExperimentKind::kAccuracy;
      }
      return file;
    }
    CsvTable table = read_csv(path);
    file.columns = table.header;
    file.kind = kind_from_columns(table.header, path);
    file.rows = read_result_rows(path);
    // The JSON twin keeps the detail; use it when it holds the same rows (the CSV is the source
    // of truth, so a stale or damaged twin is ignored).
    fs::path twin = fs::path(path).replace_extension(".json");
    if (fs::exists(twin)) {
      try {
        std::vector<ResultRow> rows;
        nlohmann::json context;
        std::string kind_name;
        if (read_json_results(twin.string(), rows, context, kind_name) &&
            rows.size() == file.rows.size()) {
          bool same = true;
          for (std::size_t i = 0; i < rows.size() && same; ++i) {
            same = rows[i].kind == file.kind && rows[i].identity() == file.rows[i].identity();
          }
          if (same) {
            // Cells exactly as the CSV has them (the JSON holds them as numbers); detail from JSON.
            for (std::size_t i = 0; i < rows.size(); ++i)
              file.rows[i].detail = std::move(rows[i].detail);
            file.context = std::move(context);
            file.with_detail = true;
          }
        }
      } catch (const std::exception&) {
        // A damaged twin: the CSV alone is complete.
      }
    }
    return file;
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    throw UsageError("cannot read results file " + path + ": " + first_line(e.what()) +
                     " (pass a CSV or JSON written by `zoobench run`)");
  }
}

std::vector<std::string> expand_result_paths(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const auto& path : paths) {
    if (!fs::is_directory(path)) {
      out.push_back(path);
      continue;
    }
    std::size_t before = out.size();
    std::vector<std::string> csvs, jsons;
    for (const auto& entry : fs::directory_iterator(path)) {
      if (!entry.is_regular_file()) continue;
      if (entry.path().extension() == ".csv" && is_results_csv(entry.path())) {
        csvs.push_back(entry.path().string());
      } else if (entry.path().extension() == ".json") {
        jsons.push_back(entry.path().string());
      }
    }
    std::sort(csvs.begin(), csvs.end());
    std::sort(jsons.begin(), jsons.end());
    if (!csvs.empty()) {
      out.insert(out.end(), csvs.begin(), csvs.end());
    } else {
      for (const auto& json : jsons) {
        try {
          std::vector<ResultRow> rows;
          nlohmann::json context;
          std::string kind;
          if (read_json_results(json, rows, context, kind)) out.push_back(json);
        } catch (const std::exception&) {
          // Not a results file (a manifest, a log): not ours to read.
        }
      }
    }
    if (out.size() == before) {
      throw UsageError("folder " + path +
                       " holds no results CSV or JSON: pass the files `zoobench "
                       "run` wrote, or the folder given to its --output-directory");
    }
  }
  return out;
}

}  // namespace zoobench
