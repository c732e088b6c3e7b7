// Upstream's accuracy batch sizes: the run's passes (accuracy_batch.h).
#include "zoobench/runner/accuracy_batch.h"

#include <algorithm>
#include <chrono>

#include "zoobench/runner/compile_cache.h"
#include "zoobench/runner/model_plan.h"
#include "zoobench/runner/recipe_export.h"
#include "zoobench/runner/suite_run.h"
#include "zoobench/util/log.h"
#include "zoobench/zoo/export_request.h"

namespace zoobench {

std::optional<int64_t> upstream_accuracy_batch_size(const std::string& suite) {
  if (suite == "huggingface") return 1;
  if (suite == "torchbench") return 4;
  if (suite == "timm_models") return 8;
  return std::nullopt;
}

RunOptions accuracy_pass(const RunOptions& options, int64_t size) {
  RunOptions accuracy = options;
  accuracy.performance = false;
  accuracy.batch_size = size;
  accuracy.accuracy_batch = true;
  accuracy.accuracy_batch_here = 0;
  accuracy.zoo_dir = zoo_for_batch_size(options.zoo_dir, size);
  return accuracy;
}

namespace {

bool checks_and_times_in_one_process(const RunOptions& options) {
  // Each model's process exports its own recipes (torch.compile backends alone), so it can
  // make both batch sizes' entries; --in-process and --accuracy-workers keep the two passes
  // (one model here; checks sharing a device before any timing).
  return options.accuracy && options.performance && !options.devices.empty() &&
         !options.in_process && options.accuracy_workers <= 1 &&
         exports_in_model_process(export_request(options, options.suites_dir));
}

}  // namespace

std::vector<RunOptions> upstream_passes(const RunOptions& options) {
  const auto size = upstream_accuracy_batch_size(options.suite);
  // A model's own child (--row-out) runs what its parent decided; --no-export runs the zoo's
  // entries as they are.
  if (!options.accuracy || options.batch_size || !size || !options.row_out.empty() ||
      !options.export_missing)
    return {options};
  if (checks_and_times_in_one_process(options)) {
    RunOptions both = options;
    both.accuracy_batch_here = *size;
    return {both};
  }
  std::vector<RunOptions> passes = {accuracy_pass(options, *size)};
  if (options.performance) {
    RunOptions performance = options;
    performance.accuracy = false;
    // --output FILE names both experiments' files (FILE_accuracy, FILE_performance): each pass
    // keeps its own.
    if (!options.output.empty()) {
      passes[0].output = result_csv_path(options, "accuracy", "");
      performance.output = result_csv_path(options, "performance", "");
    }
    passes.push_back(performance);
  }
  return passes;
}

std::optional<double> pass_time_budget(double budget_s, double spent_s) {
  if (budget_s <= 0) return 0.0;
  if (spent_s >= budget_s) return std::nullopt;
  return budget_s - spent_s;
}

int execute_upstream_passes(const RunOptions& options,
                            const std::vector<std::string>& command_line) {
  const auto passes = upstream_passes(options);
  const auto size = upstream_accuracy_batch_size(options.suite);
  if (options.accuracy && !options.batch_size && size && !options.export_missing) {
    log::info("--no-export: accuracy at the zoo's batch sizes (upstream checks {} at {}; "
              "--batch-size {} with a zoo exported at it does the same)",
              options.suite, *size, *size);
  }
  if (passes[0].accuracy_batch_here > 0) {
    log::info("accuracy at batch size {} (upstream's for {}; --batch-size N to choose), then "
              "performance at the list's batch sizes, each model's in one process",
              passes[0].accuracy_batch_here, options.suite);
  } else if (passes.size() > 1 || passes[0].batch_size != options.batch_size) {
    log::info("accuracy at batch size {} (upstream's for {}; --batch-size N to choose){}",
              *passes[0].batch_size, options.suite,
              passes.size() > 1 ? ", then performance at the list's batch sizes" : "");
  }
  // One compile cache for the whole command, both passes' model processes included (a child,
  // --row-out, uses its parent's).
  std::optional<RunCompileCache> cache;
  if (options.row_out.empty()) cache.emplace(options);
  int status = 0;
  const auto start = std::chrono::steady_clock::now();
  for (auto pass : passes) {
    const double spent =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const auto budget = pass_time_budget(options.time_budget_s, spent);
    if (!budget) {
      // As a pass whose budget leaves jobs unstarted: said, and left to --resume.
      log::warn(
          "the time budget (--time-budget {} s) was spent before the {} pass: it starts no "
          "model. Run again with --resume to do it.",
          options.time_budget_s, pass.performance ? "performance" : "accuracy");
      continue;
    }
    pass.time_budget_s = *budget;
    const int pass_status = execute_run(pass, command_line);
    if (pass_status == 130) return pass_status;
    status = std::max(status, pass_status);
  }
  return status;
}

}  // namespace zoobench
