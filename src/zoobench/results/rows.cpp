// Column lists and row conversions.
#include "zoobench/results/rows.h"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace zoobench {

std::string_view experiment_name(ExperimentKind kind) {
  return kind == ExperimentKind::kAccuracy ? "accuracy" : "performance";
}

const std::vector<std::string>& result_columns(ExperimentKind kind) {
  static const std::vector<std::string> kAccuracy = {
      "dev", "name", "batch_size", "accuracy",  // upstream
      "backend", "mode", "dtype", "tolerance", "cosine", "tolerance_source", "max_abs", "mean_abs",
      "rmse_res", "rmse_ref", "margin", "worst_tensor", "failed_tensors", "total_tensors",
      "min_passing_tol", "patches", "input_layout", "cudagraphs", "reason", "log", "duration_s",
      "graphs", "graph_breaks", "recompiles", "suite", "backend_family"};
  static const std::vector<std::string> kPerformance = {
      "dev", "name", "batch_size", "speedup", "abs_latency", "compilation_latency",
      "compression_ratio", "eager_peak_mem", "dynamo_peak_mem",  // upstream
      "eager_latency", "speedup_ci_low", "speedup_ci_high", "cov_eager", "cov_compiled",
      "eager_op_ms", "compiled_op_ms", "op_speedup", "backend", "mode", "dtype", "status", "unstable",
      "iterations_per_run", "repeat", "eager_min", "eager_p10", "eager_p90", "compiled_min",
      "compiled_p10", "compiled_p90", "launch_bound", "cudagraphs", "patches", "reason", "log",
      "python_eager_latency", "python_speedup", "graphs", "graph_breaks", "recompiles", "suite",
      "backend_family", "unstable_cov"};
  return kind == ExperimentKind::kAccuracy ? kAccuracy : kPerformance;
}

namespace {
const char* status_column(ExperimentKind kind) {
  return kind == ExperimentKind::kAccuracy ? "accuracy" : "status";
}
std::string cell_or(const std::map<std::string, std::string>& cells, const char* name,
                    const char* fallback) {
  auto it = cells.find(name);
  return it == cells.end() || it->second.empty() ? fallback : it->second;
}
}  // namespace

const std::string& cell(const ResultRow& row, const std::string& column) {
  static const std::string kEmpty;
  auto it = row.cells.find(column);
  return it == row.cells.end() ? kEmpty : it->second;
}

Status ResultRow::status() const {
  auto it = cells.find(status_column(kind));
  if (it == cells.end()) return Status::kInfraError;
  return parse_status(it->second).value_or(Status::kInfraError);
}

void ResultRow::set_status(Status status) {
  cells[status_column(kind)] = std::string(status_name(status));
}

std::string ResultRow::identity() const {
  return fmt::format("{}|{}|{}|{}|{}|{}", cell_or(cells, "dev", ""), cell_or(cells, "name", ""),
                     cell_or(cells, "mode", ""), cell_or(cells, "backend", ""),
                     cell_or(cells, "dtype", ""), cell_or(cells, "input_layout", kDefaultInputLayout));
}

std::string input_layout_of(const ResultRow& row) { return cell_or(row.cells, "input_layout", kDefaultInputLayout); }

std::string format_cell(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return fmt::format("{:.6g}", value);
}

std::string format_cell(std::optional<double> value) { return value ? format_cell(*value) : ""; }

std::string format_cell(int64_t value) { return std::to_string(value); }

nlohmann::json row_to_json(const ResultRow& row) {
  nlohmann::json out = nlohmann::json::object();
  out["kind"] = std::string(experiment_name(row.kind));
  nlohmann::json cells = nlohmann::json::object();
  for (const auto& [name, value] : row.cells) {
    // Numbers become JSON numbers so tools can use them; everything else stays a string.
    char* end = nullptr;
    double number = value.empty() ? 0.0 : std::strtod(value.c_str(), &end);
    if (!value.empty() && end != nullptr && *end == '\0' && std::isfinite(number) &&
        name != "name" && name != "dev") {
      bool integral = value.find_first_of(".eEn") == std::string::npos;
      if (integral) {
        cells[name] = static_cast<int64_t>(std::strtoll(value.c_str(), nullptr, 10));
      } else {
        cells[name] = number;
      }
    } else {
      cells[name] = value;
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
