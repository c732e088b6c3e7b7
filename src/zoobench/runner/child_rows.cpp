// Child row files and the rows for what a child did not report.
#include "zoobench/runner/child_rows.h"

#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <filesystem>

#include "zoobench/results/failure.h"
#include "zoobench/runner/record_rows.h"
#include "zoobench/util/crash_report.h"
#include "zoobench/util/files.h"
#include "zoobench/util/text.h"
#include "zoobench/zoo/export_request.h"
#include "zoobench/zoo/manifest.h"

namespace fs = std::filesystem;

namespace zoobench {
namespace {

std::string last_error_line(const std::string& log_path) {
  std::string text;
  try {
    text = read_text_file(log_path);
  } catch (const std::exception&) {
    return "";
  }
  auto lines = split(text, '\n');
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    std::string line = trim(*it);
    if (!line.empty()) return line.size() > 300 ? line.substr(0, 300) : line;
  }
  return "";
}

}  // namespace

void write_rows_file(const std::string& path, const std::vector<ResultRow>& rows) {
  nlohmann::json out;
  out["rows"] = nlohmann::json::array();
  for (const auto& row : rows) out["rows"].push_back(row_to_json(row));
  write_file_atomically(path, dump_result_json(out) + "\n");  // text that is not UTF-8 replaced
}

std::vector<ResultRow> read_rows_file(const std::string& path) {
  std::vector<ResultRow> rows;
  if (!fs::exists(path)) return rows;
  try {
    auto json = nlohmann::json::parse(read_text_file(path));
    for (const auto& row : json.at("rows")) rows.push_back(row_from_json(row));
  } catch (const std::exception&) {
    // A child killed while writing leaves the previous complete version (atomic rename) or
    // nothing; a garbled file cannot happen, but if it does the parent's rows say what's missing.
  }
  return rows;
}

RowContext context_for(const JobPlan& job, const std::string& device, const std::string& log) {
  RowContext c = job.cells;
  c.device = device;
  c.log = log;
  try {
    c.batch_size = read_manifest(job.entry.manifest_path).batch_size;
  } catch (const std::exception&) {
    // The child reports the broken manifest; the parent only needs the name for its rows.
  }
  return c;
}

std::string child_failure_reason(const ChildOutcome& outcome, const std::string& log,
                                 double timeout_s) {
  switch (outcome.kind) {
    case ChildOutcome::Kind::kTimedOut: {
      std::string reason = fmt::format("no result after {:.0f}s (--timeout)", timeout_s);
      // The worker's own report of the SIGTERM that stopped it names the phase it was in.
      const std::string line =
          crash_report::crash_line_from_log(log, outcome.log_offset, crash_report::kStopLinePrefix);
      const std::string during = " during ";
      if (const auto at = line.find(during); at != std::string::npos)
        reason += ", stopped during " + line.substr(at + during.size());
      return reason + "; process group killed";
    }
    case ChildOutcome::Kind::kSignaled: {
      std::string reason = "killed by " + signal_name(outcome.signal);
      // The child's own report says in which phase (its native frames stay in the log); only a
      // report of this run, and of this signal (SIGKILL leaves none).
      if (const std::string line = crash_report::crash_line_from_log(log, outcome.log_offset);
          line.rfind(signal_name(outcome.signal) + " ", 0) == 0) {
        reason = "killed by " + line + " (backtrace in the log)";
      }
      if (outcome.signal == SIGKILL)
        reason += " (the kernel's OOM killer sends this when host memory runs out)";
      return reason;
    }
    case ChildOutcome::Kind::kInterrupted:
      return "interrupted";
    case ChildOutcome::Kind::kFailedToStart:
      return outcome.error;
    case ChildOutcome::Kind::kExited:
      return fmt::format("exited with status {} without a result: {}", outcome.exit_code,
                         last_error_line(log));
  }
  return "";
}

namespace {

// The batch size of the job's check: its own zoo entry's where the check runs at upstream's
// size (a model's accuracy.max_batch_size may have capped it), else the job's.
int64_t check_batch_size(const JobPlan& job, int64_t job_batch_size) {
  if (job.accuracy_batch <= 0) return job_batch_size;
  const std::string zoo = zoo_for_batch_size(job.zoo_dir, job.accuracy_batch);
  try {
    return read_manifest(zoo_entry_in(zoo, job.entry.suite, job.entry.name).manifest_path)
        .batch_size;
  } catch (const std::exception&) {
    return job.accuracy_batch;  // not exported yet: the size it was to be exported at
  }
}

}  // namespace

std::vector<ResultRow> complete_rows(const JobPlan& job, const std::string& device,
                                     const std::string& log, std::vector<ResultRow> rows,
                                     const ChildOutcome& outcome) {
  // An interrupted model keeps the rows its child finished (a check before an interrupted
  // timing) and gets none for the rest: --resume runs only what is missing, so a model longer
  // than the time a machine is lent for still finishes over several runs.
  if (outcome.kind == ChildOutcome::Kind::kInterrupted) return rows;
  const Status status = outcome.kind == ChildOutcome::Kind::kTimedOut ? Status::kTimeout
                        : outcome.kind == ChildOutcome::Kind::kSignaled ? Status::kCrash
                                                                        : Status::kInfraError;
  const std::string reason = child_failure_reason(outcome, log, job.timeout_s);
  // Its patches are those the child was given (a crash may come from one of them).
  RowContext c = context_for(job, device, log);
  auto has = [&](ExperimentKind kind, const std::string& layout) {
    for (const auto& row : rows) {
      if (row.kind != kind) continue;
      if (kind == ExperimentKind::kPerformance) return true;
      if (input_layout_of(row) == layout) return true;
    }
    return false;
  };
  if (job.accuracy) {
    RowContext check = c;
    check.batch_size = check_batch_size(job, c.batch_size);
    for (const auto& layout : job.input_layouts) {
      if (has(ExperimentKind::kAccuracy, layout)) continue;
      check.input_layout = layout;
      rows.push_back(failure_row(ExperimentKind::kAccuracy, status, reason, check));
    }
  }
  if (job.performance && !has(ExperimentKind::kPerformance, "")) {
    rows.push_back(failure_row(ExperimentKind::kPerformance, status, reason, c));
  }
  return rows;
}

bool ended_before_timing(const JobPlan& job, const std::vector<ResultRow>& rows) {
  if (job.accuracy_batch <= 0 || !job.accuracy || !job.performance) return false;
  const ResultRow* timing = nullptr;
  for (const auto& row : rows)
    if (row.kind == ExperimentKind::kPerformance) timing = &row;
  if (timing == nullptr) return false;
  const Status status = timing->status();
  if (status != Status::kCrash && status != Status::kTimeout && status != Status::kInfraError)
    return false;
  // The parent made the timing's row from how the process ended; the check's has the same
  // status and reason when the process ended before the check's own row.
  return std::any_of(rows.begin(), rows.end(), [&](const ResultRow& row) {
    return row.kind == ExperimentKind::kAccuracy && row.status() == status &&
           cell(row, columns::kReason) == cell(*timing, columns::kReason);
  });
}

void note_memory_of_other_processes(std::vector<ResultRow>& rows) {
  for (auto& row : rows) {
    if (!ran_out_of_memory(row)) continue;
    const std::string reason = cell(row, columns::kReason);
    const double others = memory_of_other_processes(reason);
    if (others <= 0) continue;
    set_cell(row, columns::kReason,
             fmt::format("other processes held {:.1f} GiB of the GPU when it ran out of memory, "
                         "with no other model of this run on it: run it again when the GPU is "
                         "free; {}",
                         others / (1LL << 30), reason));
  }
}

std::vector<ResultRow> export_failure_rows(const JobPlan& job, const std::string& device,
                                           const ModelSupply& supply) {
  RowContext c = context_for(job, device, supply.log);
  const std::string reason = "export failed: " + supply.reason;
  std::vector<ResultRow> rows;
  if (job.accuracy) {
    for (const auto& layout : job.input_layouts) {
      c.input_layout = layout;
      rows.push_back(failure_row(ExperimentKind::kAccuracy, Status::kModelFailToLoad, reason, c));
    }
  }
  if (job.performance) {
    c.input_layout = kDefaultInputLayout;
    rows.push_back(failure_row(ExperimentKind::kPerformance, Status::kModelFailToLoad, reason, c));
  }
  for (auto& row : rows) set_cell(row, columns::kLog, supply.log);
  return rows;
}

}  // namespace zoobench
