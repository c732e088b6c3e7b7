// --time-budget's estimates: how long a job of a suite run (one model, one backend, a check or a
// timing) will take, from the rows of the run's result files and the rows its jobs add.
//
// A row says how long its child process took (job_s: start, load and experiment; older
// accuracy rows only have the check's own duration_s). A timing that ran before says how long
// its re-run takes. A timing that has not run is estimated from its model's check with that
// backend, scaled by the largest ratio of timing to check seen for that backend on other
// models: a torch.compile timing compiles again (other numerics, another cache key) and took
// 1.1 to 1.6 times its check's duration on the H200 (2026-12-03), a TorchScript timing about
// as long as its check. Unknown (no check): 0, and the job starts while any time is left.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "zoobench/results/rows.h"
#include "zoobench/runner/run_options.h"

namespace zoobench {

class JobEstimates {
 public:
  // A row of the run (read from its files, or just made): its seconds join the estimates.
  // Safe to call from the workers' threads.
  void add(const ResultRow& row);

  // A job of `model` with `backend` was cut (interrupted, a deadline) after `seconds`: it needs
  // at least that long, whatever its rows say, so a model longer than a run's budget is left
  // for a longer run instead of being started and cut again in each one.
  void add_cut(const std::string& model, const std::string& backend, double seconds);

  // The seconds a job for `model` with `backend` that runs these experiments is expected to
  // take; 0 where no row says.
  double expected_s(const std::string& model, const std::string& backend, bool accuracy,
                    bool performance) const;

 private:
  double expected_from_rows(const std::string& model, const std::string& backend, bool accuracy,
                            bool performance) const;
  using Key = std::pair<std::string, std::string>;  // model, backend
  mutable std::mutex mutex_;
  std::map<Key, double> check_s_, timing_s_;  // the longest of each
  std::map<Key, double> cut_s_;               // the longest a cut job had run
};

// Where a run's cut jobs are recorded (model, backend, seconds a line, tab-separated), in its logs
// folder, and the recording of one.
std::string cut_jobs_path(const std::string& logs_dir);
void record_cut_job(const std::string& logs_dir, const std::string& model,
                    const std::string& backend, double seconds);

// The estimates from the accuracy and performance files that `options`' backends write to, and
// the cut jobs of earlier runs into the same folder. A file that cannot be read is named in a
// warning and left out.
void add_result_files(JobEstimates& estimates, const RunOptions& options,
                      const std::string& device_label);

}  // namespace zoobench
