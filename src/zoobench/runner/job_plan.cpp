// A job's plan and its child's command line.
#include "zoobench/runner/job_plan.h"

namespace zoobench {

JobPlan plan_job(const RunOptions& options, const ZooEntry& entry, const SuiteConfig& config,
                 const std::string& backend, bool accuracy, bool performance) {
  RunOptions one = options;
  one.backend = backend;
  JobPlan job;
  job.entry = entry;
  job.backend = backend;
  job.accuracy = accuracy;
  job.performance = performance;
  job.label = options.backends.size() > 1 ? entry.name + " [" + backend + "]" : entry.name;
  job.cells = row_context(one, entry, "", "");
  if (options.patches) job.cells.patches = config.patches_for(entry.name, options.mode);
  job.input_layouts = accuracy_layouts(options);
  job.timeout_s = options.timeout_s;
  job.zoo_dir = options.zoo_dir;
  job.eager_reference = eager_reference(options);
  job.torchbench_dir = options.torchbench_dir;
  job.accuracy_batch = options.accuracy_batch_here;
  job.child_flags = options.child_flags;
  job.memory_heavy = config.is_memory_heavy(entry.name);
  job.start_rank = config.start_rank(entry.name);
  return job;
}

std::vector<std::string> child_arguments(const JobPlan& job, const std::string& device,
                                         const std::string& row_out, const std::string& log_file,
                                         const std::string& device_gate) {
  // The parent exported what the child needs (--no-export): the child only reads the zoo; or
  // the child exports its model's recipe itself (--export-here).
  std::vector<std::string> a = {
      "run",       "--suite",   job.entry.suite, "--only",     job.entry.name,
      "--devices", device,      "--backend",     job.backend,  "--timeout",
      "0",         "--row-out", row_out,         "--log-file", log_file,
      "--zoo",     job.zoo_dir};
  if (job.export_here.empty()) {
    a.push_back("--no-export");
  } else {
    a.insert(a.end(), {"--export-here", job.export_here});
    if (!job.torchbench_dir.empty()) a.insert(a.end(), {"--torchbench-dir", job.torchbench_dir});
  }
  if (!device_gate.empty()) a.insert(a.end(), {"--device-gate", device_gate});
  // The run's reference, which the child cannot tell from its one backend.
  a.insert(a.end(), {"--eager-reference", job.eager_reference});
  if (job.accuracy) a.push_back("--accuracy");
  if (job.accuracy && job.accuracy_batch > 0)
    a.insert(a.end(), {"--accuracy-batch-here", std::to_string(job.accuracy_batch)});
  if (job.performance) a.push_back("--performance");
  a.insert(a.end(), job.child_flags.begin(), job.child_flags.end());
  return a;
}

}  // namespace zoobench
