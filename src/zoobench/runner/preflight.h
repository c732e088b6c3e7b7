// What a run checks before it starts anything, so that a setting that cannot work is one
// refusal that says what to fix, not one failed row per model (final for --resume).
#pragma once

#include <string>
#include <vector>

#include "zoobench/runner/run_options.h"
#include "zoobench/runner/selection.h"

namespace zoobench {

// --zoo names a file (or anything but a folder) that exists: refused.
void check_zoo_folder(const std::string& zoo_dir);

// A selection of no models (a -k/-x typo, an empty partition) is refused unless
// `allow_empty` (--allow-empty-selection): a CI filter that matches nothing must not pass.
void check_selection_not_empty(const std::vector<SelectedModel>& selected, bool allow_empty);

// --expected FILE that is one of the files the run would write its rows to (--output FILE, or
// the output folder's): refused, before the file the run gates on is overwritten.
void check_expected_is_no_output(const RunOptions& options);

// The models of `selected` the zoo lacks (no manifest), which the run would export.
std::size_t models_to_export(const std::vector<SelectedModel>& selected);

// Runs the exporter's interpreter on its tools (imports torch and the exporter's package, as an
// export would) and refuses the run when that fails, naming ZOOBENCH_PYTHON / ZOOBENCH_TOOLS_DIR
// and the interpreter's own words. The probe's output goes to `log_path`.
void check_exporter_runs(const std::string& python, const std::string& tools_dir,
                         const std::string& log_path);

}  // namespace zoobench
