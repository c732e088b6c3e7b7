// The accuracy experiment: runs in upstream's order, verdicts with upstream's `same`, and a
// diagnosis of every compared tensor.
#include "zoobench/accuracy/experiment.h"

#include <ATen/Utils.h>
#include <fmt/format.h>
#include <torch/utils.h>

#include <chrono>
#include <filesystem>
#include <map>

#include "zoobench/accuracy/compare.h"
#include "zoobench/results/failure.h"
#include "zoobench/serialization/torch_save.h"
#include "zoobench/util/crash_report.h"
#include "zoobench/util/device_gate.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/ivalue_tree.h"
#include "zoobench/util/log.h"
#include "zoobench/util/text.h"
#include "zoobench/zoo/model_files.h"

namespace zoobench {
namespace {

using accuracy::NamedTensor;
using accuracy::SameOptions;
using accuracy::SameResult;

// What one run of a model produced: inference outputs, or a training step's loss, outputs,
// gradients, parameters and buffers (upstream's collect_results).
struct RunResult {
  c10::IValue outputs;
  at::Tensor loss;
  std::vector<NamedTensor> gradients, parameters, buffers;
  ExecutionInfo info;
};

std::vector<NamedTensor> clone_named(const std::vector<std::pair<std::string, at::Tensor>>& tensors) {
  std::vector<NamedTensor> out;
  out.reserve(tensors.size());
  for (const auto& [name, t] : tensors) out.push_back({name, t.defined() ? t.detach().clone() : t});
  return out;
}

void seed_everything(uint64_t seed) {
  // Seeds the CPU generator and every CUDA device's.
  torch::manual_seed(seed);
}

// One preparation and its runs, holding the device shared: beside other model pipelines, never
// beside one's timed section (util/device_gate.h).
RunResult run_once(Backend& backend, const Manifest& manifest, const BackendRequest& request,
                   const std::vector<c10::IValue>& inputs, const AccuracyOptions& options) {
  DeviceGate::Shared on_device(process_device_gate());
  auto executable = backend.prepare(manifest, request, inputs);
  RunResult result;
  result.info = executable->info();
  seed_everything(options.seed);
  if (request.mode == Mode::kInference) {
    result.outputs = clone_tree(executable->run(clone_inputs(inputs)));
    return result;
  }
  StepResult step;
  for (int i = 0; i < options.training_steps; ++i) step = executable->step(clone_inputs(inputs));
  result.outputs = clone_tree(step.outputs);
  result.loss = step.loss.detach().clone();
  TrainingState state = executable->training_state();
  result.gradients = clone_named(state.gradients);
  result.parameters = clone_named(state.parameters);
  result.buffers = clone_named(state.buffers);
  return result;
}

// Compiled backends that return a flat list of tensors (AOTInductor) are compared against the
// reference's leaves in order, as torch.export flattens outputs.
c10::IValue as_flat_list_like(const c10::IValue& reference, const c10::IValue& compiled) {
  if (!compiled.isList() || reference.isList()) return reference;
  c10::impl::GenericList flat(c10::AnyType::get());
  for (const auto& leaf : accuracy::flatten_leaves(reference)) {
    if (leaf.value.isTensor()) flat.push_back(leaf.value);
  }
  return flat.size() == compiled.toListRef().size() ? c10::IValue(flat) : reference;
}

// A run judged as upstream judges it: inference by its outputs; training by the loss,
// gradients, parameters and buffers (upstream's collect_results passes no prediction). A
// training run's outputs are compared too, apart: zoobench's stricter check.
struct Judgement {
  SameResult upstream;
  std::optional<SameResult> training_outputs;
};

Judgement compare_runs(const RunResult& ref, const RunResult& res, const RunResult* fp64, Mode mode,
                       const SameOptions& options) {
  c10::IValue ref_outputs = as_flat_list_like(ref.outputs, res.outputs);
  c10::IValue fp64_outputs = fp64 ? as_flat_list_like(fp64->outputs, res.outputs) : c10::IValue();
  SameResult outputs = accuracy::same(ref_outputs, res.outputs, fp64_outputs, options, "output");
  if (mode == Mode::kInference) return {std::move(outputs), std::nullopt};
  std::vector<SameResult> parts;
  parts.push_back(accuracy::same(ref.loss, res.loss, fp64 ? c10::IValue(fp64->loss) : c10::IValue(), options, "loss"));
  static const std::vector<NamedTensor> kNone;
  parts.push_back(accuracy::compare_named("grad", ref.gradients, res.gradients, fp64 ? fp64->gradients : kNone, options));
  parts.push_back(accuracy::compare_named("param", ref.parameters, res.parameters, fp64 ? fp64->parameters : kNone, options));
  parts.push_back(accuracy::compare_named("buffer", ref.buffers, res.buffers, fp64 ? fp64->buffers : kNone, options));
  return {accuracy::combine(parts), std::move(outputs)};
}

std::optional<double> finite_or_empty(double value) {
  if (std::isnan(value)) return std::nullopt;
  return value;
}

std::string group_of(const std::string& path) {
  auto colon = path.find(':');
  if (colon != std::string::npos) return path.substr(0, colon);
  auto bracket = path.find('[');
  return bracket == std::string::npos ? path : path.substr(0, bracket);
}

// --accu-summary: per group, the same rule as the verdict (so the summary cannot disagree with
// it, unlike the Ascend suite's), then the five worst tensors.
std::string format_summary(const SameResult& result, const std::string& model) {
  struct Group {
    double max_abs = 0, abs_sum = 0;
    int64_t numel = 0;
    int failed = 0, total = 0;
  };
  std::map<std::string, Group> groups;
  std::vector<std::string> order;
  for (const auto& leaf : result.leaves) {
    std::string name = group_of(leaf.path);
    if (!groups.count(name)) order.push_back(name);
    Group& g = groups[name];
    g.total += 1;
    g.failed += leaf.pass ? 0 : 1;
    if (leaf.is_tensor) {
      g.max_abs = std::isnan(leaf.max_abs) || std::isnan(g.max_abs) ? NAN : std::max(g.max_abs, leaf.max_abs);
      g.abs_sum += leaf.mean_abs * static_cast<double>(leaf.numel);
      g.numel += leaf.numel;
    }
  }
  std::string out = fmt::format("accuracy summary for {}: {}\n", model, result.pass ? "pass" : "FAIL");
  out += fmt::format("  {:<10} {:>12} {:>12} {:>10}\n", "group", "max_abs", "mean_abs", "failed");
  for (const auto& name : order) {
    const Group& g = groups[name];
    out += fmt::format("  {:<10} {:>12.4g} {:>12.4g} {:>6}/{:<4}\n", name, g.max_abs,
                       g.numel ? g.abs_sum / static_cast<double>(g.numel) : 0.0, g.failed, g.total);
  }
  out += "  worst tensors:\n";
  for (const auto* leaf : accuracy::worst_leaves(result, 5)) {
    out += fmt::format("    {:<48} {:<8} margin {:>9.3g}  max_abs {:>10.3g}  {}\n", leaf->path,
                       accuracy::rule_name(leaf->rule), leaf->margin, leaf->max_abs, leaf->pass ? "pass" : "FAIL");
  }
  return out;
}

nlohmann::json leaves_json(const SameResult& result, std::size_t limit) {
  nlohmann::json out = nlohmann::json::array();
  auto number = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(std::to_string(v)); };
  for (const auto* leaf : accuracy::worst_leaves(result, limit)) {
    out.push_back({{"path", leaf->path},
                   {"rule", std::string(accuracy::rule_name(leaf->rule))},
                   {"pass", leaf->pass},
                   {"margin", number(leaf->margin)},
                   {"max_abs", number(leaf->max_abs)},
                   {"mean_abs", number(leaf->mean_abs)},
                   {"rmse_ref", number(leaf->rmse_ref)},
                   {"rmse_res", number(leaf->rmse_res)},
                   {"min_passing_tol", number(leaf->min_passing_tol)},
                   {"dtype", leaf->dtype},
                   {"numel", leaf->numel},
                   {"reason", leaf->reason}});
  }
  return out;
}

void fill_from(AccuracyRecord& record, const SameResult& result) {
  const auto& s = result.summary;
  record.total_tensors = static_cast<int>(s.total);
  record.failed_tensors = static_cast<int>(s.failed);
  record.max_abs = finite_or_empty(s.max_abs);
  record.mean_abs = finite_or_empty(s.mean_abs);
  record.margin = s.worst_margin;
  record.worst_tensor = s.worst_path;
  record.min_passing_tol = s.min_passing_tol;
  if (s.worst_index >= 0) {
    const auto& worst = result.leaves[static_cast<std::size_t>(s.worst_index)];
    record.rmse_ref = finite_or_empty(worst.rmse_ref);
    record.rmse_res = finite_or_empty(worst.rmse_res);
  }
  record.tensors = leaves_json(result, 200);
}

// --save-outputs: one side's inference outputs as DIR/<name>.pt (on the CPU), for `zoobench same`.
void save_outputs(const std::string& dir, const std::string& name, const c10::IValue& outputs) {
  if (dir.empty()) return;
  std::filesystem::create_directories(dir);
  serialization::save_for_python(map_tensors(outputs, [](const at::Tensor& t) { return t.detach().cpu(); }),
                                 (std::filesystem::path(dir) / (name + ".pt")).string());
}

}  // namespace

namespace {

SameOptions same_options_for(const AccuracyOptions& options) {
  SameOptions same;
  same.tol = options.tolerance.tolerance;
  same.cos_similarity = options.tolerance.cosine;
  same.use_larger_multiplier_for_smaller_tensor = options.tolerance.larger_multiplier_for_smaller_tensor;
  same.force_max_multiplier = options.tolerance.force_max_multiplier;
  same.use_iou_for_bool = options.tolerance.use_iou_for_bool;
  same.iou_threshold = options.tolerance.iou_threshold;
  // Upstream's runner compares NaN as equal to NaN unless it runs --float32 (its equal_nan
  // property): a model whose outputs overflow to NaN in eager and compiled alike is not a
  // failure there, nor here.
  same.equal_nan = options.equal_nan;
  return same;
}

// A check that ended early: the row's status and reason.
struct Failure {
  Status status;
  std::string reason;
};

// What one check holds between its steps.
struct Check {
  const Manifest& manifest;
  const BackendRequest& request;
  BackendRequest eager_request;
  const AccuracyOptions& options;
  SameOptions same;
  AccuracyRecord& record;
  std::optional<RunResult> golden;
  RunResult eager1, eager2;
  int passes = 0;
  Judgement last_pass, last_fail;
};

// The float64 golden run on the same device. If the model cannot run in float64, upstream
// falls back to the cosine rule; so do we, and the row says so.
std::optional<Failure> run_golden(Check& c, Backend& eager, const std::vector<c10::IValue>& inputs) {
  try {
    BackendRequest fp64_request = c.eager_request;
    fp64_request.precision = Precision::kFloat32;
    fp64_request.dtype_override = c10::kDouble;
    crash_report::PhaseScope phase("accuracy: float64 golden run");
    c.golden = run_once(eager, c.manifest, fp64_request, cast_inputs(inputs, c10::kDouble), c.options);
  } catch (const ModelLoadError& e) {
    return Failure{Status::kModelFailToLoad, first_line(e.what())};
  } catch (...) {
    c.record.fp64_available = false;
    c.same.cos_similarity = true;
    c.record.tolerance.cosine = true;
    c.record.tolerance.source +=
        "; fp64 run failed (" +
        first_line(logged_exception_message(c.manifest.name + " (float64 golden run)")) + "), cosine";
  }
  return std::nullopt;
}

// Eager twice; unless the model is non-deterministic the two runs must agree bitwise.
std::optional<Failure> run_eager_twice(Check& c, Backend& eager, const std::vector<c10::IValue>& inputs) {
  try {
    crash_report::PhaseScope phase("accuracy: eager run 1");
    c.eager1 = run_once(eager, c.manifest, c.eager_request, inputs, c.options);
  } catch (const ModelLoadError& e) {
    return Failure{Status::kModelFailToLoad, first_line(e.what())};
  } catch (...) {
    std::string message = logged_exception_message(c.manifest.name + " (accuracy)");
    return Failure{status_for_failure(Phase::kEagerFirstRun, message), "eager: " + first_line(message)};
  }
  try {
    crash_report::PhaseScope phase("accuracy: eager run 2");
    c.eager2 = run_once(eager, c.manifest, c.eager_request, inputs, c.options);
  } catch (...) {
    std::string message = logged_exception_message(c.manifest.name + " (accuracy)");
    return Failure{status_for_failure(Phase::kEagerSecondRun, message), "eager: " + first_line(message)};
  }
  // Outside the runs' try blocks: a file that cannot be written is not a failed run.
  const std::string outputs_dir = c.request.mode == Mode::kInference ? c.options.save_outputs_dir : "";
  if (c.golden) save_outputs(outputs_dir, "float64", c.golden->outputs);
  save_outputs(outputs_dir, "eager", c.eager1.outputs);
  if (c.options.non_deterministic || c.options.eager_not_deterministic) return std::nullopt;
  SameOptions bitwise;
  bitwise.tol = 0;
  bitwise.equal_nan = c.same.equal_nan;
  // What upstream compares (in training, not the outputs).
  SameResult rerun = compare_runs(c.eager1, c.eager2, nullptr, c.request.mode, bitwise).upstream;
  if (rerun.pass) return std::nullopt;
  fill_from(c.record, rerun);
  return Failure{Status::kEagerTwoRunsDiffer,
                 fmt::format("two eager runs differ at {} (max_abs {:.3g}); mark the model non_deterministic in "
                             "the suite yaml if that is expected",
                             rerun.summary.worst_path, rerun.summary.max_abs)};
}

// The compiled runs (accuracy_check_runs of them), each judged against eager and float64.
std::optional<Failure> run_compiled(Check& c, Backend& compiled, const std::vector<c10::IValue>& inputs) {
  const std::vector<c10::IValue>& compiled_inputs = c.options.compiled_inputs.empty() ? inputs : c.options.compiled_inputs;
  const std::string outputs_dir = c.request.mode == Mode::kInference ? c.options.save_outputs_dir : "";
  for (int run = 0; run < std::max(1, c.options.check_runs); ++run) {
    RunResult result;
    try {
      crash_report::PhaseScope phase("accuracy: " + compiled.name() + " run");
      result = run_once(compiled, c.manifest, c.request, compiled_inputs, c.options);
    } catch (const ModelLoadError& e) {
      return Failure{Status::kModelFailToLoad, compiled.name() + ": " + first_line(e.what())};
    } catch (...) {
      std::string message = logged_exception_message(c.manifest.name + " (accuracy)");
      return Failure{status_for_failure(Phase::kCompiled, message), compiled.name() + ": " + first_line(message)};
    }
    c.record.compiled_info = result.info;
    save_outputs(outputs_dir, compiled.name(), result.outputs);
    Judgement current = compare_runs(c.eager1, result, c.golden ? &*c.golden : nullptr, c.request.mode, c.same);
    const bool pass = current.upstream.pass;
    c.passes += pass ? 1 : 0;
    (pass ? c.last_pass : c.last_fail) = std::move(current);
  }
  return std::nullopt;
}

std::string failure_reason(const SameResult& result) {
  return fmt::format("{}/{} tensors failed; worst {} margin {:.3g} (max_abs {:.3g}); passes with tol >= {:.3g}",
                     result.summary.failed, result.summary.total, result.summary.worst_path,
                     result.summary.worst_margin, result.summary.max_abs, result.summary.min_passing_tol);
}

// Upstream's rules for models whose eager runs may differ, after zoobench judged the compiled
// run anyway: the status is upstream's, zoobench's verdict the strict one.
void apply_nondeterminism_rules(Check& c) {
  AccuracyRecord& record = c.record;
  const Status judged = record.strict_status.value_or(record.status);
  if (c.options.eager_not_deterministic) {
    record.strict_status = judged;
    record.status = Status::kPassDueToSkip;
    record.reason = join_reasons(fmt::format("accuracy.skip.eager_not_deterministic: upstream does not judge "
                                       "this model in training; zoobench's verdict {}",
                                       status_name(judged)),
                           record.reason);
  } else if (c.options.non_deterministic && judged == Status::kFailAccuracy) {
    record.strict_status = judged;
    record.status = Status::kPass;
    record.reason = join_reasons("non_deterministic: upstream counts fail_accuracy as pass", record.reason);
  }
}

// The vote's verdict into the record: status, figures, reason.
void set_verdict(Check& c) {
  AccuracyRecord& record = c.record;
  record.check_runs = std::max(1, c.options.check_runs);
  const bool pass = c.passes * 2 > record.check_runs;
  // Report a run that agrees with the vote: the last passing one, or the last failing one.
  const Judgement& verdict = pass ? c.last_pass : c.last_fail;
  fill_from(record, verdict.upstream);
  record.status = pass ? Status::kPass : Status::kFailAccuracy;
  if (!pass) record.reason = failure_reason(verdict.upstream);
  if (pass && verdict.training_outputs && !verdict.training_outputs->pass) {
    record.strict_status = Status::kFailAccuracy;
    record.reason = "training outputs differ (upstream judges the loss, gradients, parameters and "
                    "buffers, which pass): " + failure_reason(*verdict.training_outputs);
  }
  if (!pass && c.options.skip_check) {
    record.status = Status::kPassDueToSkip;
    record.reason = "not enforced (--skip-accuracy-check): " + record.reason;
  } else {
    apply_nondeterminism_rules(c);
  }
  record.reason = join_reasons(record.reason, record.compiled_info.note);
  if (c.options.summary) {
    SameResult all = verdict.upstream;
    if (verdict.training_outputs) all = accuracy::combine({*verdict.training_outputs, verdict.upstream});
    record.summary_text = format_summary(all, c.manifest.name);
  }
}

}  // namespace

AccuracyRecord run_accuracy_experiment(const Manifest& manifest, Backend& eager, Backend& compiled,
                                       const BackendRequest& request, const std::vector<c10::IValue>& inputs,
                                       const AccuracyOptions& options) {
  auto start = std::chrono::steady_clock::now();
  AccuracyRecord record;
  record.tolerance = options.tolerance;
  Check check{manifest, request, request, options, same_options_for(options), record};
  check.eager_request.cudagraphs = false;
  std::optional<Failure> failure = run_golden(check, eager, inputs);
  if (!failure) failure = run_eager_twice(check, eager, inputs);
  if (!failure) failure = run_compiled(check, compiled, inputs);
  if (failure) {
    record.status = failure->status;
    record.reason = failure->reason;
  } else {
    set_verdict(check);
  }
  record.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return record;
}

}  // namespace zoobench
