// Result files and the run context; what is written is whole or absent, and what is read back
// for --resume is checked row by row.
#include "zoobench/results/sink.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>

#include "zoobench/results/result_files.h"
#include "zoobench/util/compat.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/files.h"
#include "zoobench/util/json_depth.h"
#include "zoobench/util/log.h"
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
  throw std::runtime_error(path +
                           " is neither an accuracy CSV (no 'accuracy' column) nor a "
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

// Replaces `path` as write_file_atomically does; a failure is a ResultWriteError, which stops
// the run in order.
void replace_file(const std::string& path, const std::string& contents) {
  std::string failed;
  if (const int error = try_write_file_atomically(path, contents, failed); error != 0)
    throw ResultWriteError(failed, error);
}

void append_to_file(const std::string& path, const std::string& contents) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw ResultWriteError(path, errno);
  int error = write_fully(fd, contents);
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) throw ResultWriteError(path, error);
}

// Not a nlohmann exception, so callers can tell a too deep file from one that is not JSON.
nlohmann::json::parser_callback_t depth_guard(const std::string& path) {
  return json_depth_limit(kMaxResultJsonDepth, [path] {
    throw std::runtime_error(fmt::format(
        "{} is nested deeper than {} levels, the most a results JSON may have: refused "
        "(zoobench's are about 5 deep; was the file damaged or made by another tool?)",
        path, kMaxResultJsonDepth));
  });
}

std::string model_of(const CsvRecord& record, const std::vector<std::string>& header) {
  const auto name_at = std::find(header.begin(), header.end(), columns::kName.key());
  const auto index = static_cast<std::size_t>(name_at - header.begin());
  return index < record.cells.size() && !record.cells[index].empty() ? record.cells[index]
                                                                     : "(unreadable)";
}

// Moves the rows of an existing result CSV that cannot be trusted (why_row_untrusted) to
// `<path>.torn`, warning for each, and rewrites the CSV without them so that the next row
// starts on a line of its own. Returns how many were set aside. A file of other columns is left
// to CsvAppender, which refuses it (an older one of fewer columns was widened first).
std::size_t set_aside_untrusted_rows(const std::string& path, ExperimentKind kind) {
  const std::string text = read_text_file(path);
  const std::vector<CsvRecord> records = split_csv_records(text);
  if (records.empty()) return 0;
  const std::vector<std::string>& header = result_columns(kind);
  const std::string torn_path = path + ".torn";
  std::string kept, set_aside;
  std::size_t count = 0;
  auto bytes_of = [&](const CsvRecord& record) {
    return text.substr(record.begin, record.end - record.begin) + (record.complete ? "" : "\n");
  };
  if (!records.front().complete) {
    // Killed while writing the header: there is no row yet.
    log::warn("{}:1: the header was cut off; moved to {}, the file starts again", path, torn_path);
    set_aside = bytes_of(records.front());
    count = 1;
  } else {
    std::vector<std::string> found = records.front().cells;
    for (auto& name : found) name = trim(name);
    if (found != header) return 0;
    kept = bytes_of(records.front());
    for (std::size_t i = 1; i < records.size(); ++i) {
      const std::string why = why_row_untrusted(records[i], header, kind);
      if (why.empty()) {
        kept += bytes_of(records[i]);
        continue;
      }
      log::warn("{}:{}: {}; moved to {}: {} has no row here now and runs again with --resume", path,
                records[i].line, why, torn_path, model_of(records[i], header));
      set_aside += bytes_of(records[i]);
      ++count;
    }
  }
  if (count == 0) return 0;
  // The .torn file first: killed between the two writes, the row is in both, never in neither.
  append_to_file(torn_path, set_aside);
  replace_file(path, kept);
  return count;
}

// Result formats only grow at the end (docs/formats.md), so a file written by an older zoobench
// has a header that is a prefix of today's. It gets the new columns, empty in its rows, so that
// --resume continues it rather than refusing it; a row of another width or cut off is left as it
// is for set_aside_untrusted_rows. Any other header is left to CsvAppender, which refuses it.
void add_newer_columns(const std::string& path, ExperimentKind kind) {
  const std::string text = read_text_file(path);
  const std::vector<CsvRecord> records = split_csv_records(text);
  if (records.empty() || !records.front().complete) return;
  std::vector<std::string> found = records.front().cells;
  for (auto& name : found) name = trim(name);
  const std::vector<std::string>& header = result_columns(kind);
  if (found.size() >= header.size() || !std::equal(found.begin(), found.end(), header.begin()))
    return;
  const std::string empty_cells(header.size() - found.size(), ',');
  std::string widened = csv_line(header);
  std::size_t rows = 0;
  for (std::size_t i = 1; i < records.size(); ++i) {
    std::string bytes = text.substr(records[i].begin, records[i].end - records[i].begin);
    if (records[i].complete && records[i].cells.size() == found.size()) {
      std::size_t line_end = bytes.size() - 1;  // the newline; a CR before it stays there too
      if (line_end > 0 && bytes[line_end - 1] == '\r') --line_end;
      bytes.insert(line_end, empty_cells);
      ++rows;
    }
    widened += bytes;
  }
  replace_file(path, widened);
  const std::vector<std::string> added(header.begin() + static_cast<std::ptrdiff_t>(found.size()),
                                       header.end());
  log::info("{} was written before the column(s) {} existed: added, empty in its {} row(s)", path,
            join(added, ", "), rows);
}

// The JSON twin's detail (per-tensor verdicts, samples) for the CSV's rows, matched by identity
// in order. Cells stay as the CSV has them: it is the source of truth, and the twin may lag
// behind it (killed between the CSV's line and the twin's rewrite, a row set aside) or be
// damaged. Returns why the twin does not hold exactly the CSV's rows, or "" when it does.
std::string take_detail_from_twin(std::vector<ResultRow>& rows, const std::string& json_path) {
  if (!std::filesystem::exists(json_path)) return rows.empty() ? "" : "it is missing";
  std::map<std::string, std::deque<nlohmann::json>> details;
  std::size_t records = 0;
  try {
    const nlohmann::json parsed = parse_result_json(read_text_file(json_path), json_path);
    for (const auto& record : parsed.at("records")) {
      ResultRow row = row_from_json(record);
      details[row.identity()].push_back(std::move(row.detail));
      ++records;
    }
  } catch (const std::exception& e) {
    return "it cannot be read (" + first_line(e.what()) + ")";
  }
  std::size_t matched = 0;
  for (auto& row : rows) {
    auto it = details.find(row.identity());
    if (it == details.end() || it->second.empty()) continue;
    row.detail = std::move(it->second.front());
    it->second.pop_front();
    ++matched;
  }
  if (matched == rows.size() && records == rows.size()) return "";
  return fmt::format("it holds {} record(s) for the CSV's {} row(s) ({} of them found)", records,
                     rows.size(), matched);
}

}  // namespace

nlohmann::json parse_result_json(const std::string& text, const std::string& path) {
  try {
    return nlohmann::json::parse(text, depth_guard(path));
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + " is not valid JSON: " + e.what());
  }
}

void check_result_json_depth(const std::string& path) {
  const std::string json =
      std::filesystem::path(path).extension() == ".json" ? path : json_path_for(path);
  if (!std::filesystem::exists(json)) return;
  try {
    [[maybe_unused]] const auto parsed =
        nlohmann::json::parse(read_text_file(json), depth_guard(json));
  } catch (const nlohmann::json::exception&) {
    // Not JSON at all: the readers say so themselves (or ignore a damaged twin).
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());
  }
}

ResultSink::ResultSink(ExperimentKind kind, std::string csv_path, nlohmann::json context)
    : kind_(kind), csv_path_(std::move(csv_path)), context_(std::move(context)) {
  auto has_content = [&] {
    return std::filesystem::exists(csv_path_) && std::filesystem::file_size(csv_path_) > 0;
  };
  if (has_content()) add_newer_columns(csv_path_, kind_);
  std::size_t set_aside = has_content() ? set_aside_untrusted_rows(csv_path_, kind_) : 0;
  std::string twin_differs;
  if (has_content()) {
    rows_ = read_result_rows(csv_path_);
    twin_differs = take_detail_from_twin(rows_, json_path());
    for (const auto& row : rows_) identities_.insert(row.identity());
  }
  csv_ = std::make_unique<CsvAppender>(csv_path_, result_columns(kind_));
  // A row is its CSV line, then the twin's rewrite: a run killed between the two leaves the twin
  // a record short, and merge/report then read the CSV alone (no detail for any row). The twin
  // is rebuilt from the CSV now, keeping the detail of every record it had, and says so.
  if (!twin_differs.empty()) {
    log::warn("{}: {}; rebuilt from {} (rows it lacked have no per-tensor detail)", json_path(),
              twin_differs, csv_path_);
  }
  // The twin must not keep a record the CSV no longer has.
  if (set_aside > 0 || !twin_differs.empty()) rewrite_json();
}

std::string ResultSink::json_path() const { return json_path_for(csv_path_); }

void ResultSink::write(const ResultRow& row) {
  if (row.kind != kind_)
    throw std::logic_error("a row of another experiment was sent to " + csv_path_);
  // Kept as the CSV holds it (every column present, the same replaced text as the JSON) so
  // both files read back alike.
  ResultRow stored = row;
  for (auto& [name, value] : stored.cells) value = with_invalid_utf8_replaced(value);
  for (const auto& column : result_columns(kind_)) stored.cells.emplace(column, "");
  const std::uintmax_t csv_size = csv_->size();
  csv_->append(stored.cells);
  rows_.push_back(std::move(stored));
  try {
    rewrite_json();
  } catch (const ResultWriteError&) {
    // Neither file has the row, so both agree and --resume runs the model again.
    rows_.pop_back();
    csv_->truncate_to(csv_size);
    throw;
  }
  identities_.insert(rows_.back().identity());
}

void ResultSink::rewrite_json() const {
  nlohmann::json out;
  out["format"] = "zoobench-results/1";
  out["kind"] = std::string(experiment_name(kind_));
  out["context"] = context_;
  out["records"] = nlohmann::json::array();
  for (const auto& row : rows_) out["records"].push_back(row_to_json(row));
  replace_file(json_path(), dump_result_json(out, 1) + "\n");
}

std::vector<ResultRow> read_result_rows(const std::string& path) {
  std::vector<ResultRow> rows;
  if (std::filesystem::path(path).extension() == ".json") {
    nlohmann::json parsed = parse_result_json(read_text_file(path), path);
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
  context["cpu_governor"] =
      first_line_of_file("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
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
