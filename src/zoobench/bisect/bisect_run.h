// `zoobench bisect` for one model: each step is the model's accuracy check in a child process
// through the suite runner's worker pool (runner/worker_pool.h), so a step has `zoobench run`'s
// process isolation, timeout and crash rows; a step that crashes or times out fails. After the
// switches: the first diverging submodule (divergence.h) and, for an Inductor backend,
// Inductor's own compiler bisector over the same child command (compiler_bisector.h).
#pragma once

#include <optional>
#include <string>

#include "zoobench/bisect/bisect.h"
#include "zoobench/runner/run_options.h"

namespace zoobench {

// `options`: the model (suite, only[0]), backend, device (devices[0]), mode, precision,
// tolerance, timeout, patches and the output directory, as `zoobench run` takes them.
// Prints the report and writes <output_directory>/bisect.json. Returns the exit status: 0 when
// the search finished (whatever its verdict), 130 when interrupted. Throws UsageError for bad
// input (an unknown model, a skipped one).
int execute_bisect(const RunOptions& options);
// The same, returning the report (nullopt when interrupted).
std::optional<BisectReport> run_bisect(const RunOptions& options);

// `zoobench bisect --from-results FILE`: a bisect for every failing row of an accuracy results
// file (its model, backend, device, mode and dtype; `base` gives the zoo, suites, tolerance,
// timeout and output directory, each bisect in a folder of its own), then one summary table
// and <output_directory>/bisect-summary.json. Rows whose eager side or model failed are listed,
// not bisected: no switch of the backend can change them. 0, or 130 when interrupted.
int execute_bisect_from_results(const RunOptions& base, const std::string& results_file);

// The switches a bisect searches for this model: the backend's that act in this mode on this
// device, then "patch:<name>" for each of the model's patches; and which switch each needs.
struct SearchedSwitches {
  std::vector<std::string> names;
  std::map<std::string, std::string> requires_switch;
};
SearchedSwitches searched_switches(const std::string& backend, Mode mode,
                                   const std::string& device_type,
                                   const std::vector<std::string>& patches);

}  // namespace zoobench
