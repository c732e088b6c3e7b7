#include "zoobench/runner/preflight.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>

#include "zoobench/runner/child_process.h"
#include "zoobench/runner/child_rows.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/output_guard.h"

namespace fs = std::filesystem;

namespace zoobench {
namespace {

// Importing torch takes a few seconds; two minutes mean something is wrong (a hung filesystem).
constexpr double kProbeTimeoutSeconds = 120;

}  // namespace

void check_zoo_folder(const std::string& zoo_dir) {
  // The nearest part of the path that exists (the zoo, or the folder a new zoo goes in; with
  // --batch-size the zoo is a batch-<N> folder inside the one named) must be a folder.
  for (fs::path part = zoo_dir; !part.empty(); part = part.parent_path()) {
    std::error_code error;
    const auto status = fs::status(part, error);
    if (!fs::exists(status)) {
      if (part == part.parent_path()) return;
      continue;
    }
    if (fs::is_directory(status)) return;
    throw UsageError("--zoo " + zoo_dir + ": " + part.string() +
                     " is not a folder: name the zoo's folder (a new one is made when the run "
                     "exports its models)");
  }
}

void check_selection_not_empty(const std::vector<SelectedModel>& selected, bool allow_empty) {
  if (!selected.empty() || allow_empty) return;
  throw UsageError(
      "no model is selected: --only, -k/--filter, -x/--exclude, --exclude-exact and the "
      "partition leave nothing of the suite's models (`zoobench list` with the same filters "
      "shows them); --allow-empty-selection makes an empty selection a success");
}

void check_expected_is_no_output(const RunOptions& options) {
  if (options.expected.empty()) return;
  RunOptions each = options;
  for (const auto& backend : options.backends) {
    each.backend = backend;
    for (const auto& device : options.devices) {
      for (const char* experiment : {"accuracy", "performance"}) {
        refuse_output_over_inputs(result_csv_path(each, experiment, device), {options.expected},
                                  "the run's results file");
      }
    }
  }
}

std::size_t models_to_export(const std::vector<SelectedModel>& selected) {
  std::size_t missing = 0;
  for (const auto& model : selected) {
    std::error_code error;
    if (!model.skip_reason && !fs::exists(model.entry.manifest_path, error)) ++missing;
  }
  return missing;
}

void check_exporter_runs(const std::string& python, const std::string& tools_dir,
                         const std::string& log_path) {
  const std::string hint =
      " (set ZOOBENCH_PYTHON to a Python with torch, ZOOBENCH_TOOLS_DIR to zoobench's tools "
      "folder, or run with --no-export on a zoo that has the models)";
  if (::access(python.c_str(), X_OK) != 0)
    throw UsageError("the exporter's Python " + python + " cannot be run" + hint);
  if (!fs::is_regular_file(fs::path(tools_dir) / "export_zoo.py"))
    throw UsageError("the exporter is not at " + tools_dir + "/export_zoo.py" + hint);
  fs::create_directories(fs::path(log_path).parent_path());
  const std::atomic<bool> never{false};
  const std::string probe = "import sys; sys.path.insert(0, sys.argv[1]); import torch, zoo_export";
  const ChildOutcome outcome =
      run_child({python, "-c", probe, tools_dir}, log_path, kProbeTimeoutSeconds, never);
  if (outcome.kind == ChildOutcome::Kind::kExited && outcome.exit_code == 0) return;
  // The interpreter's own words (its last error line), as a model process's failure gives them.
  const std::string why = child_failure_reason(outcome, log_path, kProbeTimeoutSeconds);
  throw UsageError("the exporter cannot run: " + python + " cannot import torch and " + tools_dir +
                   "/zoo_export (" + why + ", " + log_path + ")" + hint);
}

}  // namespace zoobench
