// Row conversions and cells; the column lists are the schema's (columns.h).
#include "zoobench/results/rows.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

#include "zoobench/results/failure.h"

namespace zoobench {

std::string_view experiment_name(ExperimentKind kind) {
  return kind == ExperimentKind::kAccuracy ? "accuracy" : "performance";
}

const std::vector<std::string>& result_columns(ExperimentKind kind) {
  auto names = [](ExperimentKind of) {
    std::vector<std::string> out;
    for (const auto& column : columns::columns_of(of)) out.push_back(column.key());
    return out;
  };
  static const std::vector<std::string> kAccuracy = names(ExperimentKind::kAccuracy);
  static const std::vector<std::string> kPerformance = names(ExperimentKind::kPerformance);
  return kind == ExperimentKind::kAccuracy ? kAccuracy : kPerformance;
}

namespace {
std::string cell_or(const ResultRow& row, const columns::Column& column, const char* fallback) {
  const std::string& value = cell(row, column);
  return value.empty() ? fallback : value;
}
}  // namespace

const std::string& cell(const ResultRow& row, const std::string& column) {
  static const std::string kEmpty;
  auto it = row.cells.find(column);
  return it == row.cells.end() ? kEmpty : it->second;
}

const std::string& cell(const ResultRow& row, const columns::Column& column) {
  return cell(row, column.key());
}

void set_cell(ResultRow& row, const columns::Column& column, std::string value) {
  row.cells[column.key()] = std::move(value);
}

Status ResultRow::status() const {
  auto it = cells.find(columns::status_column(kind).key());
  if (it == cells.end()) return Status::kInfraError;
  return parse_status(it->second).value_or(Status::kInfraError);
}

void ResultRow::set_status(Status status) {
  cells[columns::status_column(kind).key()] = std::string(status_name(status));
}

std::string ResultRow::identity() const {
  // Replaced as the files have it: a model folder named in Latin-1 is found again on --resume.
  return with_invalid_utf8_replaced(fmt::format(
      "{}|{}|{}|{}|{}|{}", cell(*this, columns::kDev), cell(*this, columns::kName),
      cell(*this, columns::kMode), cell(*this, columns::kBackend), cell(*this, columns::kDtype),
      cell_or(*this, columns::kInputLayout, kDefaultInputLayout)));
}

std::string input_layout_of(const ResultRow& row) {
  return cell_or(row, columns::kInputLayout, kDefaultInputLayout);
}

bool ran_out_of_memory(const ResultRow& row) {
  const Status status = row.status();
  if (status == Status::kOOM || status == Status::kEager1stRunOOM || status == Status::kEager2ndRunOOM)
    return true;
  // A model whose build (its export in its own process) ran out of device memory: the memory
  // may have been the other pipelines' (hf_GPT2_large's on an H100, 2026-12-06).
  const bool oom_reason = looks_like_out_of_memory(cell(row, columns::kReason));
  if (status == Status::kModelFailToLoad) return oom_reason;
  return cell(row, columns::kCudagraphs) == "fallback" && oom_reason;
}

std::string format_cell(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return fmt::format("{:.6g}", value);
}

std::string format_cell(std::optional<double> value) { return value ? format_cell(*value) : ""; }

std::string format_cell(int64_t value) { return std::to_string(value); }

// Replacing rather than refusing a name that is not UTF-8 (a model folder named on a Latin-1
// system): the model still gets its row and the run goes on, and every other string that can
// carry such bytes (a reason quoting an error, the log path, the command line in the context)
// is covered by the same rule, where refusing at selection would cover names only.
std::string with_invalid_utf8_replaced(const std::string& text) {
  bool ascii = true;
  for (char c : text) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  if (ascii) return text;
  return nlohmann::json::parse(dump_result_json(nlohmann::json(text))).get<std::string>();
}

std::string dump_result_json(const nlohmann::json& json, int indent) {
  return json.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json row_to_json(const ResultRow& row) {
  nlohmann::json out = nlohmann::json::object();
  out["kind"] = std::string(experiment_name(row.kind));
  nlohmann::json cells = nlohmann::json::object();
  for (const auto& [name, value] : row.cells) {
    // Numbers become JSON numbers so tools can use them; everything else stays a string.
    char* end = nullptr;
    double number = value.empty() ? 0.0 : std::strtod(value.c_str(), &end);
    if (!value.empty() && end != nullptr && *end == '\0' && std::isfinite(number) &&
        name != columns::kName.name && name != columns::kDev.name) {
      bool integral = value.find_first_of(".eEn") == std::string::npos;
      if (integral) {
        cells[name] = static_cast<int64_t>(std::strtoll(value.c_str(), nullptr, 10));
      } else {
        cells[name] = number;
      }
    } else {
      cells[name] = with_invalid_utf8_replaced(value);
    }
  }
  out["cells"] = cells;
  out["detail"] = row.detail;
  return out;
}

ResultRow row_from_json(const nlohmann::json& json) {
  ResultRow row;
  row.kind = json.value("kind", "accuracy") == "performance" ? ExperimentKind::kPerformance
                                                             : ExperimentKind::kAccuracy;
  for (const auto& [name, value] : json.at("cells").items()) {
    if (value.is_string()) {
      row.cells[name] = value.get<std::string>();
    } else if (value.is_number_integer()) {
      row.cells[name] = std::to_string(value.get<int64_t>());
    } else if (value.is_number()) {
      row.cells[name] = format_cell(value.get<double>());
    } else if (!value.is_null()) {
      row.cells[name] = value.dump();
    }
  }
  if (json.contains("detail")) row.detail = json["detail"];
  return row;
}

}  // namespace zoobench
