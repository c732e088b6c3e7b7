// What makes a run's rows comparable (mode, precision, batch size, compile options, ...),
// recorded in the results JSON's context, and the check that `--resume` continues a file made
// with the same: resuming with other settings would put rows of two different runs in one file,
// each read as the other's.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "zoobench/results/sink.h"
#include "zoobench/runner/run_options.h"

namespace zoobench {

// The settings of `options` that change what a row means, by name.
nlohmann::json run_settings(const RunOptions& options);

// Throws UsageError when the result file `csv_path` (its rows, and its JSON twin's recorded
// settings where it has them) was made with other settings than `options`: the message names
// each setting, the file's value and the run's, and what to do.
void check_resume_settings(const RunOptions& options, const std::string& csv_path);

}  // namespace zoobench
