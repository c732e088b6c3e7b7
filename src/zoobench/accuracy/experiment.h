// The accuracy experiment for one model (docs/design.md's measurement rules): fixed seed before
// every run, deterministic algorithms, TF32 off; float64 golden -> eager run 1 -> eager run 2
// (bitwise equal unless non-deterministic) -> compiled run(s) -> verdict with a per-tensor
// diagnosis. Training runs --iterations steps and judges loss, gradients, parameters after
// the optimizer step and buffers, as upstream's collect_results does; the training outputs,
// which upstream leaves out, are compared too, and their verdict is the strict one.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "zoobench/backends/backend.h"
#include "zoobench/results/status.h"
#include "zoobench/zoo/suite_config.h"

namespace zoobench {

struct AccuracyOptions {
  ToleranceDecision tolerance;
  // Upstream's non_deterministic: the two eager runs are not compared bitwise, and a verdict of
  // pass or fail_accuracy is `pass` (common.py's record_status); zoobench's own verdict goes to
  // AccuracyRecord::strict_status.
  bool non_deterministic = false;
  // Upstream's accuracy.skip.eager_not_deterministic (training): the eager runs are not
  // compared, and once the compiled run ran the status is pass_due_to_skip; zoobench's own
  // verdict goes to AccuracyRecord::strict_status.
  bool eager_not_deterministic = false;
  // NaN compares equal to NaN: upstream's equal_nan, true unless the run asked for --float32.
  bool equal_nan = true;
  int training_steps = 2;          // --iterations
  int check_runs = 1;              // accuracy_check_runs: compiled runs, majority vote
  uint64_t seed = 1337;
  bool summary = false;  // --accu-summary: fill AccuracyRecord::summary_text
  // --skip-accuracy-check (upstream's): a mismatch is pass_due_to_skip, its reason kept.
  bool skip_check = false;
  // Inputs for the compiled side when they differ in layout from the reference's (input-layout
  // fuzzing): same values, other strides. Empty: the reference's inputs.
  std::vector<c10::IValue> compiled_inputs;
  // --save-outputs: the inference outputs of the float64, eager and compiled runs written to
  // this folder as float64.pt, eager.pt and <backend>.pt ("" none).
  std::string save_outputs_dir;
};

struct AccuracyRecord {
  Status status = Status::kPass;
  std::string reason;
  ToleranceDecision tolerance;
  std::optional<double> max_abs, mean_abs, rmse_res, rmse_ref, margin, min_passing_tol;
  std::string worst_tensor;
  int failed_tensors = 0, total_tensors = 0;
  bool fp64_available = true;  // false: the fp64 run failed and cosine was used, as upstream
  int check_runs = 1;          // compiled runs the verdict voted over
  ExecutionInfo compiled_info;
  // zoobench's own verdict where it is stricter than the upstream rule that set `status` (a
  // non_deterministic model judged anyway, the training outputs upstream does not compare);
  // unset when they agree. The reason says what zoobench found.
  std::optional<Status> strict_status;
  nlohmann::json tensors = nlohmann::json::array();  // per-tensor verdicts, worst first
  std::string summary_text;                          // --accu-summary
  double duration_s = 0;
};

AccuracyRecord run_accuracy_experiment(const Manifest& manifest, Backend& eager, Backend& compiled,
                                       const BackendRequest& request,
                                       const std::vector<c10::IValue>& inputs,
                                       const AccuracyOptions& options);

}  // namespace zoobench
