// Loading result files.
#include "zoobench/results/result_files.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "zoobench/results/columns.h"
#include "zoobench/results/csv.h"
#include "zoobench/results/sink.h"
#include "zoobench/results/status.h"
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

// Refuses the first row that cannot be trusted, with its line, what is wrong and what to do.
void check_rows(const std::string& text, const std::vector<std::string>& header,
                ExperimentKind kind, const std::string& path) {
  const std::vector<CsvRecord> records = split_csv_records(text);
  for (std::size_t i = 1; i < records.size(); ++i) {
    const std::string why = why_row_untrusted(records[i], header, kind);
    if (why.empty()) continue;
    throw UsageError(fmt::format(
        "{}:{}: {}; not reading a results file with a row that cannot be trusted (a run "
        "killed mid-row, a file edited or joined by hand): fix or delete that line, or let "
        "`zoobench run --resume` set it aside",
        path, records[i].line, why));
  }
}

// A JSON file's records of an unknown status are refused as a CSV's rows are.
void check_json_statuses(const std::vector<ResultRow>& rows, const std::string& path) {
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto it = rows[i].cells.find(columns::status_column(rows[i].kind).key());
    if (it == rows[i].cells.end() || parse_status(it->second)) continue;
    throw UsageError(fmt::format("{}: record {}: unknown status '{}' (known: {})", path, i + 1,
                                 it->second, known_status_names()));
  }
}

}  // namespace

std::string why_row_untrusted(const CsvRecord& record, const std::vector<std::string>& header,
                              ExperimentKind kind) {
  if (!record.complete) return "the row was cut off (no newline at its end)";
  if (record.cells.size() != header.size()) {
    return fmt::format("the row has {} fields where the header has {}", record.cells.size(),
                       header.size());
  }
  // A row shifted by a cell puts a name where the batch size goes.
  const auto batch_at = std::find(header.begin(), header.end(), columns::kBatchSize.key());
  if (batch_at != header.end()) {
    const std::string& batch = record.cells[static_cast<std::size_t>(batch_at - header.begin())];
    if (!std::all_of(batch.begin(), batch.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return fmt::format("batch_size '{}' is not a whole number", batch);
  }
  // Upstream's performance files have no status column.
  const auto status_at =
      std::find(header.begin(), header.end(), columns::status_column(kind).key());
  if (status_at == header.end()) return "";
  const std::string& status = record.cells[static_cast<std::size_t>(status_at - header.begin())];
  if (!parse_status(status)) {
    return fmt::format("unknown status '{}' (known: {})", status, known_status_names());
  }
  return "";
}

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
      check_json_statuses(file.rows, path);
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
    const std::string text = read_text_file(path);
    CsvTable table = parse_csv(text, path);
    file.columns = table.header;
    file.kind = kind_from_columns(table.header, path);
    check_rows(text, table.header, file.kind, path);
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
