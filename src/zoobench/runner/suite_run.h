// `zoobench run`: one model with one backend in this process (--only NAME, and every child),
// or a whole selection with one child process per model and backend — timeouts, crash
// statuses, rows written and flushed as each child finishes (one result file per backend and
// experiment), --resume, partitions, one worker per device, progress and a final summary (with
// several backends, a latency matrix). A suite run always finishes and gives every selected
// model a row for every backend.
#pragma once

#include <string>
#include <vector>

#include "zoobench/runner/run_options.h"

namespace zoobench {

// Returns the process exit status: 0 when the run completed (failing models are results, not
// errors), 130 when interrupted. Throws UsageError for bad input.
int execute_run(const RunOptions& options, const std::vector<std::string>& command_line);

}  // namespace zoobench
