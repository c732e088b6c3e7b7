// One job of a suite run: a model, one backend, the experiments it still needs. Resolved from
// the run's options before the job starts (plan_job), it is all that the scheduler
// (pipelines.h, worker_pool.h), the model's process command line and the rows the parent makes
// for the job (a timeout, a crash, a failed export: child_rows.h) take: the run's options stay
// with the run.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "zoobench/runner/record_rows.h"
#include "zoobench/runner/run_options.h"
#include "zoobench/zoo/catalog.h"
#include "zoobench/zoo/suite_config.h"

namespace zoobench {

struct JobPlan {
  ZooEntry entry;
  std::string backend;
  bool accuracy = false, performance = false;  // what the job still has to make
  std::string label;                           // the progress line's: the model [backend]
  // The cells every row of the job shares, but its device and log; patches: those the suite
  // gives the model (the child reports what it applied; a row the parent makes names these).
  RowContext cells;
  std::vector<std::string> input_layouts;  // one accuracy row each
  double timeout_s = 0;                    // --timeout, for the reason of a timeout row
  // What the model's process is told beyond the model, the backend and the experiments.
  std::string zoo_dir;          // the zoo (the batch size's folder)
  std::string eager_reference;  // the run's, resolved (python | torchscript)
  // "" the parent exports; else the batch size the child exports at (set by the run when its
  // models' processes export their recipes, runner/recipe_export.h)
  std::string export_here;
  std::string torchbench_dir;            // for that export
  // > 0: the accuracy check at this batch size (its own zoo entry, exported by the child), the
  // timings at zoo_dir's (RunOptions::accuracy_batch_here)
  int64_t accuracy_batch = 0;
  std::vector<std::string> child_flags;  // the user's flags every child gets as given
  // The suite's zoobench.memory_heavy names the model: the scheduler does not start the job on
  // a device while another such job runs there (worker_pool.h).
  bool memory_heavy = false;
  // The model's place in the suite's zoobench.start_first (none: not there): the run starts it
  // before the others (job_order.h).
  std::optional<std::size_t> start_rank;
};

// The job of `entry` with `backend` in a run of `options`.
JobPlan plan_job(const RunOptions& options, const ZooEntry& entry, const SuiteConfig& config,
                 const std::string& backend, bool accuracy, bool performance);

// The arguments of the model's `zoobench run` for `job` on `device` (as the child sees it),
// writing its rows to `row_out` and its log to `log_file`, holding `device_gate` (""; none): the
// parent's decisions, then the user's other flags as given.
std::vector<std::string> child_arguments(const JobPlan& job, const std::string& device,
                                         const std::string& row_out, const std::string& log_file,
                                         const std::string& device_gate);

}  // namespace zoobench
