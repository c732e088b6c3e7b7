// Upstream's accuracy batch sizes. Its harness checks accuracy at a small batch size when
// --batch-size is not given (common.py: huggingface 1, torchbench 4, timm_models 8; "> 1 to
// test batch_norm", timm larger "to have stable batch_norm") and times performance at the
// lists' batch sizes. zoobench does the same, so its verdicts are upstream's verdicts on the
// same inputs: a run of those suites that checks accuracy without --batch-size checks it at
// upstream's size, from the zoo's entry for that batch size (exported on demand), and times
// performance at the lists' sizes as a second pass over the same models. A run with
// --no-export takes the zoo's entries as they are (and says so).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "zoobench/runner/run_options.h"

namespace zoobench {

// Upstream's accuracy batch size for `suite`, or nullopt for a suite it does not know.
std::optional<int64_t> upstream_accuracy_batch_size(const std::string& suite);

// The passes of `options`: itself, or (accuracy without --batch-size, in a suite above) an
// accuracy pass at upstream's size and, with --performance, a performance pass at the lists'.
// Where each model's process exports its own recipes, one pass instead whose model processes
// check at upstream's size and then time at the list's (accuracy_batch_here): one process, one
// Python and one set of imports per model for both.
std::vector<RunOptions> upstream_passes(const RunOptions& options);

// The accuracy pass's options at upstream's `size`: accuracy only, from that size's zoo folder.
RunOptions accuracy_pass(const RunOptions& options, int64_t size);

// The --time-budget of a pass that starts `spent_s` into a run given `budget_s` (0: none): one
// budget for the whole run, so a pass gets what the earlier ones left; nullopt when they left
// nothing (the pass starts no job).
std::optional<double> pass_time_budget(double budget_s, double spent_s);

// execute_run over the passes, within one --time-budget: the worst status (130 as soon as one
// is interrupted).
int execute_upstream_passes(const RunOptions& options,
                            const std::vector<std::string>& command_line);

}  // namespace zoobench
