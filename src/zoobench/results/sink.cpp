// Result files and the run context.
#include "zoobench/results/sink.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <sys/utsname.h>
#include <unistd.h>

#include "zoobench/util/compat.h"
#include "zoobench/util/files.h"
#include "zoobench/util/text.h"

namespace zoobench {
namespace {

std::string json_path_for(const std::string& path) {
  std::filesystem::path p(path);
  return (p.parent_path() / (p.stem().string() + ".json")).string();
}

ExperimentKind kind_from_header(const std::vector<std::string>& header, const std::string& path) {
  for (const auto& column : header) {
    if (column == "accuracy") return ExperimentKind::kAccuracy;
    if (column == "speedup") return ExperimentKind::kPerformance;
  }
  throw std::runtime_error(path + " is neither an accuracy CSV (no 'accuracy' column) nor a "
                           "performance CSV (no 'speedup' column)");
}

std::string first_line_of_file(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return trim(line);
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (starts_with(line, "model name")) return trim(line.substr(line.find(':') + 1));
  }
  return "";
}

}  // namespace

ResultSink::ResultSink(ExperimentKind kind, std::string csv_path, nlohmann::json context)
    : kind_(kind), csv_path_(std::move(csv_path)), context_(std::move(context)) {
  if (std::filesystem::exists(csv_path_) && std::filesystem::file_size(csv_path_) > 0) {
    rows_ = read_result_rows(csv_path_);
    // The JSON twin keeps the detail of earlier rows; prefer it when it is complete.
    std::string json_path = json_path_for(csv_path_);
    if (std::filesystem::exists(json_path)) {
      try {
        auto parsed = nlohmann::json::parse(read_text_file(json_path));
        std::vector<ResultRow> from_json;
        for (const auto& record : parsed.at("records")) from_json.push_back(row_from_json(record));
        if (from_json.size() == rows_.size()) rows_ = std::move(from_json);
      } catch (const std::exception&) {
        // A damaged JSON twin is rebuilt from the CSV, which is the source of truth.
      }
    }
    for (const auto& row : rows_) identities_.insert(row.identity());
  }
  csv_ = std::make_unique<CsvAppender>(csv_path_, result_columns(kind_));
}

std::string ResultSink::json_path() const { return json_path_for(csv_path_); }

void ResultSink::write(const ResultRow& row) {
  if (row.kind != kind_) throw std::logic_error("a row of another experiment was sent to " + csv_path_);
  csv_->append(row.cells);
  // Keep the row as the CSV holds it (every column present) so both files read back alike.
  ResultRow stored = row;
  for (const auto& column : result_columns(kind_)) stored.cells.emplace(column, "");
  identities_.insert(stored.identity());
  rows_.push_back(std::move(stored));
  rewrite_json();
}

void ResultSink::rewrite_json() const {
  nlohmann::json out;
  out["format"] = "zoobench-results/1";
  out["kind"] = std::string(experiment_name(kind_));
  out["context"] = context_;
  out["records"] = nlohmann::json::array();
  for (const auto& row : rows_) out["records"].push_back(row_to_json(row));
  write_file_atomically(json_path(), out.dump(1) + "\n");
}

std::vector<ResultRow> read_result_rows(const std::string& path) {
  std::vector<ResultRow> rows;
  if (std::filesystem::path(path).extension() == ".json") {
    nlohmann::json parsed;
    try {
      parsed = nlohmann::json::parse(read_text_file(path));
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(path + " is not valid JSON: " + e.what());
    }
    if (!parsed.contains("records")) {
      throw std::runtime_error(path + " has no 'records': not a zoobench results file");
    }
    for (const auto& record : parsed["records"]) rows.push_back(row_from_json(record));
    return rows;
  }
  CsvTable table = read_csv(path);
  ExperimentKind kind = kind_from_header(table.header, path);
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    ResultRow row;
    row.kind = kind;
    row.cells = table.row_map(i);
    rows.push_back(std::move(row));
  }
  return rows;
}

nlohmann::json describe_run_context(const std::vector<std::string>& command_line) {
  nlohmann::json context;
  char host[256] = {0};
  ::gethostname(host, sizeof(host) - 1);
  context["host"] = host;
  struct utsname uts {};
  if (::uname(&uts) == 0) context["kernel"] = std::string(uts.sysname) + " " + uts.release;
  context["cpu"] = cpu_model();
  context["cpu_count"] = static_cast<int64_t>(::sysconf(_SC_NPROCESSORS_ONLN));
  // A CPU scaling governor other than "performance" makes timings drift (google/benchmark
  // warns about the same thing).
  context["cpu_governor"] = first_line_of_file("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  double load[3] = {0, 0, 0};
  if (::getloadavg(load, 3) == 3) context["load_average"] = {load[0], load[1], load[2]};
  context["torch"] = compat::torch_version();
  context["cuda_build"] = compat::kHasCuda;
#ifdef NDEBUG
  context["build_type"] = "release";
#else
  context["build_type"] = "debug";
#endif
  context["command_line"] = join(command_line, " ");
  std::time_t now = std::time(nullptr);
  char stamp[64];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  context["started_at"] = stamp;
  return context;
}

}  // namespace zoobench
