#include "zoobench/runner/job_estimates.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <vector>

#include "zoobench/report/number_format.h"
#include "zoobench/results/sink.h"
#include "zoobench/util/log.h"
#include "zoobench/util/text.h"

namespace zoobench {

void JobEstimates::add(const ResultRow& row) {
  // The whole child's seconds where the row has them; an older check row's own duration else.
  auto seconds = report::parse_number(cell(row, columns::kJobS));
  if (!seconds && row.kind == ExperimentKind::kAccuracy)
    seconds = report::parse_number(cell(row, columns::kDurationS));
  if (!seconds || *seconds < 0) return;
  const Key key{cell(row, columns::kName), cell(row, columns::kBackend)};
  std::lock_guard<std::mutex> lock(mutex_);
  double& longest = (row.kind == ExperimentKind::kAccuracy ? check_s_ : timing_s_)[key];
  longest = std::max(longest, *seconds);
}

void JobEstimates::add_cut(const std::string& model, const std::string& backend, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  double& longest = cut_s_[{model, backend}];
  longest = std::max(longest, seconds);
}

double JobEstimates::expected_s(const std::string& model, const std::string& backend, bool accuracy,
                                bool performance) const {
  const double from_rows = expected_from_rows(model, backend, accuracy, performance);
  std::lock_guard<std::mutex> lock(mutex_);
  const auto cut = cut_s_.find({model, backend});
  return cut == cut_s_.end() ? from_rows : std::max(from_rows, cut->second);
}

double JobEstimates::expected_from_rows(const std::string& model, const std::string& backend,
                                        bool accuracy, bool performance) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const Key key{model, backend};
  const auto check = check_s_.find(key);
  double expected = 0;
  if (accuracy && check != check_s_.end()) expected += check->second;
  if (!performance) return expected;
  if (const auto timing = timing_s_.find(key); timing != timing_s_.end()) {
    // One child that did both writes its seconds on both rows: counted once.
    if (accuracy && check != check_s_.end() && check->second == timing->second)
      return timing->second;
    return expected + timing->second;
  }
  if (check == check_s_.end()) return expected;
  // The backend's largest timing-to-check ratio among the models that have both (1: none yet).
  double ratio = 0;
  for (const auto& [timed, seconds] : timing_s_) {
    if (timed.second != backend) continue;
    const auto checked = check_s_.find(timed);
    if (checked != check_s_.end() && checked->second > 0)
      ratio = std::max(ratio, seconds / checked->second);
  }
  return expected + check->second * (ratio > 0 ? ratio : 1.0);
}

std::string cut_jobs_path(const std::string& logs_dir) {
  return (std::filesystem::path(logs_dir) / "cut-jobs.tsv").string();
}

void record_cut_job(const std::string& logs_dir, const std::string& model,
                    const std::string& backend, double seconds) {
  std::ofstream(cut_jobs_path(logs_dir), std::ios::app)
      << model << '\t' << backend << '\t' << seconds << '\n';
}

namespace {

void add_cut_jobs(JobEstimates& estimates, const RunOptions& options) {
  std::ifstream in(
      cut_jobs_path((std::filesystem::path(options.output_directory) / "logs").string()));
  std::string line;
  while (std::getline(in, line)) {
    const auto fields = split(line, '\t');
    if (fields.size() != 3) continue;
    const auto seconds = report::parse_number(fields[2]);
    if (seconds && *seconds > 0) estimates.add_cut(fields[0], fields[1], *seconds);
  }
}

}  // namespace

void add_result_files(JobEstimates& estimates, const RunOptions& options,
                      const std::string& device_label) {
  add_cut_jobs(estimates, options);
  for (const auto& backend : options.backends) {
    RunOptions of_backend = options;
    of_backend.backend = backend;
    for (const char* experiment : {"accuracy", "performance"}) {
      const std::string path = result_csv_path(of_backend, experiment, device_label);
      if (!std::filesystem::exists(path)) continue;
      std::vector<ResultRow> rows;
      try {
        rows = read_result_rows(path);
      } catch (const std::exception& e) {
        log::warn("--time-budget: {} cannot be read for its jobs' durations: {}", path, e.what());
        continue;
      }
      // With --output the backends share a file: each backend takes its own rows.
      for (const auto& row : rows)
        if (cell(row, columns::kBackend) == backend) estimates.add(row);
    }
  }
}

}  // namespace zoobench
