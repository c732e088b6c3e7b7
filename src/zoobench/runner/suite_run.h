// `zoobench run`: one model in this process (--only NAME, and every child), or a whole
// selection with one child process per model — timeouts, crash statuses, rows written and
// flushed as each model finishes, --resume, partitions, one worker per device, progress and a
// final summary. A suite run always finishes and gives every selected model a row.
#pragma once

#include <string>
#include <vector>

#include "zoobench/runner/run_options.h"

namespace zoobench {

// Returns the process exit status: 0 when the run completed (failing models are results, not
// errors), 130 when interrupted. Throws UsageError for bad input.
int execute_run(const RunOptions& options, const std::vector<std::string>& command_line);

// The flags that make a child `zoobench run` do `options` for one model on one device.
std::vector<std::string> child_arguments(const RunOptions& options, const std::string& suite,
                                         const std::string& model, const std::string& device,
                                         const std::string& row_out, const std::string& log_file);

}  // namespace zoobench
