// The in-process run of one model.
#include "zoobench/runner/model_run.h"

#include <filesystem>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "zoobench/backends/backend.h"
#include "zoobench/boundary/boundary.h"
#include "zoobench/patches/registry.h"
#include "zoobench/results/failure.h"
#include "zoobench/runner/channels_last.h"
#include "zoobench/runner/model_plan.h"
#include "zoobench/runner/record_rows.h"
#include "zoobench/util/compat.h"
#include "zoobench/util/crash_report.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/log.h"
#include "zoobench/util/text.h"
#include "zoobench/zoo/model_files.h"

namespace zoobench {
namespace {

struct LayoutedInputs {
  std::string layout = kDefaultInputLayout;
  std::vector<c10::IValue> reference;  // dense values, for eager and the fp64 golden
  std::vector<c10::IValue> compiled;   // the same values in the layout
  bool applied = false;
};

LayoutedInputs layout_inputs(const std::vector<c10::IValue>& inputs, const std::string& layout_name,
                             const Manifest& manifest) {
  LayoutedInputs out;
  out.layout = layout_name;
  auto layout = boundary::parse_input_layout(layout_name);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const bool mutated = std::find(manifest.mutated_inputs.begin(), manifest.mutated_inputs.end(),
                                   static_cast<int64_t>(i)) != manifest.mutated_inputs.end();
    if (!inputs[i].isTensor() || mutated) {
      // Written-into inputs keep their layout: aliased (overlapping/expanded) memory cannot be
      // written consistently.
      out.reference.push_back(inputs[i]);
      out.compiled.push_back(inputs[i]);
      continue;
    }
    auto laid = boundary::make_input_layout(inputs[i].toTensor(), layout);
    out.reference.emplace_back(laid.dense);
    out.compiled.emplace_back(laid.tensor);
    out.applied = out.applied || laid.applies;
  }
  return out;
}

// Why a model cannot run at all: the status and reason of each of its rows.
struct Refusal {
  Status status;
  std::string reason;
};

// What the experiments of one model run on: its manifest, the patch scope the run holds, and its
// inputs on the device.
struct LoadedModel {
  Manifest manifest;
  c10::Device device{c10::kCPU};
  std::unique_ptr<patches::PatchScope> patch_scope;
  std::vector<c10::IValue> inputs;
};

// Makes the device current, enters the plan's patches and loads the inputs; a Refusal when one
// of them fails. The context learns the patches.
std::optional<Refusal> load_model(const ZooEntry& entry, const ModelPlan& plan, LoadedModel& model,
                                  RowContext& context) {
  model.device = parse_device(plan.device);
  compat::set_current_device(model.device);
  try {
    model.patch_scope = std::make_unique<patches::PatchScope>(plan.patches);
    context.patches = model.patch_scope->names();
  } catch (...) {
    return Refusal{Status::kInfraError, "patches: " + first_line(current_exception_message())};
  }
  try {
    model.inputs = load_inputs(model.manifest, model.device);
  } catch (const ModelLoadError& e) {
    return Refusal{Status::kModelFailToLoad, first_line(e.what())};
  } catch (...) {
    std::string message = logged_exception_message(entry.name);
    return Refusal{status_for_failure(Phase::kLoad, message), first_line(message)};
  }
  return std::nullopt;
}

BackendRequest backend_request(const ModelPlan& plan, const LoadedModel& model) {
  BackendRequest request;
  request.device = model.device;
  request.mode = plan.mode;
  request.precision = plan.precision;
  request.cudagraphs = plan.cudagraphs;
  request.optimizer = plan.optimizer;
  request.compile_options_json = plan.compile_options_json;
  request.keep_compile_cache = !plan.cold_compile_cache;
  request.freezing = plan.freezing;
  request.dynamic_shapes = plan.dynamic_shapes;
  request.channels_last = plan.channels_last;
  request.loss_scale = plan.loss_scale;
  request.python_reference = plan.eager_reference == "python";
  const bool training = plan.mode == Mode::kTraining;
  patches::PatchScope* scope = model.patch_scope.get();
  const bool channels_last = plan.channels_last;
  request.after_load = [scope, training, channels_last](torch::jit::Module& module) {
    scope->rewrite(module, training);
    if (channels_last) to_channels_last(module);
  };
  request.after_load_compiled = [scope, training](torch::jit::Module& module) {
    scope->rewrite(module, training, /*compiled_side=*/true);
  };
  request.disabled_switches = plan.switches_off;
  return request;
}

// The accuracy check's settings: the plan's rule, vote and determinism.
AccuracyOptions accuracy_options(const ModelPlan& plan) {
  AccuracyOptions accuracy;
  accuracy.tolerance = plan.tolerance;
  accuracy.non_deterministic = plan.non_deterministic;
  accuracy.eager_not_deterministic = plan.eager_not_deterministic;
  accuracy.equal_nan = plan.equal_nan;
  accuracy.check_runs = plan.check_runs;
  accuracy.training_steps = plan.training_steps;
  accuracy.summary = plan.accuracy_summary;
  accuracy.skip_check = plan.skip_accuracy_check;
  accuracy.save_outputs_dir = plan.save_outputs_dir;
  return accuracy;
}

// Upstream's settings for accuracy checks (common.py, "remove sources of randomness"): Inductor's
// fallback_random, and torchbench models trained in eval mode where the plan says so.
BackendRequest accuracy_request(const ModelPlan& plan, BackendRequest request) {
  request.fallback_random = true;
  request.training_in_eval_mode = plan.training_in_eval_mode;
  return request;
}

// The accuracy row of one input layout: the compiled side gets the inputs in that layout, the
// reference the same values dense; a failure of the experiment is the row's status.
ResultRow accuracy_row_for_layout(const ModelPlan& plan, const LoadedModel& model, Backend& eager,
                                  Backend& compiled, const BackendRequest& request,
                                  const std::string& layout, RowContext context) {
  context.input_layout = layout;
  AccuracyOptions accuracy = accuracy_options(plan);
  std::vector<c10::IValue> reference_inputs = model.inputs;
  std::string layout_note;
  if (layout != kDefaultInputLayout) {
    auto laid = layout_inputs(model.inputs, layout, model.manifest);
    reference_inputs = laid.reference;
    accuracy.compiled_inputs = laid.compiled;
    if (!laid.applied)
      layout_note = "layout '" + layout + "' applies to no input; inputs stayed contiguous";
  }
  try {
    compat::set_deterministic_numerics(true, plan.deterministic_algorithms);
    compat::set_cudnn_switches(plan.cudnn_by_model.deterministic, plan.cudnn_by_model.benchmark);
    AccuracyRecord record = run_accuracy_experiment(model.manifest, eager, compiled,
                                                    accuracy_request(plan, request),
                                                    reference_inputs, accuracy);
    record.reason = join_reasons(record.reason, layout_note);
    if (!record.summary_text.empty()) std::fputs(record.summary_text.c_str(), stdout);
    return accuracy_row(record, context);
  } catch (...) {
    std::string message = logged_exception_message(plan.model);
    return failure_row(ExperimentKind::kAccuracy, status_for_failure(Phase::kCompiled, message),
                       first_line(message), context);
  }
}

ResultRow performance_row_for(const ModelPlan& plan, const LoadedModel& model, Backend& eager,
                              Backend& compiled, const BackendRequest& request,
                              const RowContext& context) {
  try {
    // Timings use upstream's performance settings (TF32 allowed; compat.h).
    compat::set_deterministic_numerics(false);
    compat::set_cudnn_switches(plan.cudnn_by_model.deterministic, plan.cudnn_by_model.benchmark);
    PerformanceOptions performance;
    performance.measurement = plan.measurement;
    performance.python_reference = request.python_reference;
    performance.pause_pipelines = plan.pause_pipelines;
    performance.retime_unstable = plan.retime_unstable;
    PerformanceRecord record = run_performance_experiment(model.manifest, eager, compiled, request,
                                                          model.inputs, performance);
    return performance_row(record, context);
  } catch (...) {
    std::string message = logged_exception_message(plan.model);
    return failure_row(ExperimentKind::kPerformance, status_for_failure(Phase::kCompiled, message),
                       first_line(message), context);
  }
}

// A model whose plan is resolved: its inputs loaded, its backends asked whether they can run
// it, then the experiments the plan asks for, each row handed to `add` as it is made.
void run_planned_model(const ZooEntry& entry, const ModelPlan& plan, LoadedModel& model,
                       RowContext context, const std::function<void(ResultRow)>& add) {
  auto fail_all = [&](Status status, const std::string& reason) {
    if (plan.accuracy) add(failure_row(ExperimentKind::kAccuracy, status, reason, context));
    if (plan.performance) add(failure_row(ExperimentKind::kPerformance, status, reason, context));
  };
  if (plan.invalid) return fail_all(Status::kInfraError, *plan.invalid);
  context.switches_off = plan.switches_off;
  context.eager_reference = plan.eager_reference;
  if (auto refusal = load_model(entry, plan, model, context)) {
    return fail_all(refusal->status, refusal->reason);
  }
  std::unique_ptr<Backend> eager = make_backend(reference_backend(plan));
  std::unique_ptr<Backend> compiled = make_backend(plan.backend);
  BackendRequest request = backend_request(plan, model);
  // Asked before anything runs: for a Python backend this starts the embedded Python, so the
  // autograd engine is torch's Python one from the first backward on (a C++ backward first, then
  // a Python one, trips an internal assert of the engine on CUDA).
  if (auto why = compiled->unsupported_reason(model.manifest, request)) {
    return fail_all(Status::kFailToRun, plan.backend + " cannot run this: " + *why);
  }
  if (request.precision != Precision::kFloat32 && model.inputs.empty()) {
    return fail_all(Status::kModelFailToLoad, "the model has no inputs");
  }
  model.inputs = cast_inputs(model.inputs, request.dtype());
  if (request.channels_last) model.inputs = channels_last_inputs(model.inputs);
  if (plan.accuracy) {
    for (const auto& layout : plan.input_layouts)
      add(accuracy_row_for_layout(plan, model, *eager, *compiled, request, layout, context));
  }
  if (plan.performance) add(performance_row_for(plan, model, *eager, *compiled, request, context));
}

}  // namespace

std::vector<ResultRow> run_model(const ZooEntry& entry, const RunOptions& options,
                                 const SuiteConfig& config, const std::string& device_string,
                                 const std::function<void(const ResultRow&)>& on_row) {
  RowContext context = row_context(options, entry, device_string, options.log_file);
  crash_report::set_subject(fmt::format("{} ({}, {}, {}, {})", entry.name, options.backend,
                                        mode_name(options.mode), precision_name(options.precision),
                                        device_string));
  crash_report::set_phase("loading");
  std::vector<ResultRow> rows;
  auto add = [&](ResultRow row) {
    if (on_row) on_row(row);
    rows.push_back(std::move(row));
  };
  LoadedModel model;
  try {
    model.manifest = read_manifest(entry.manifest_path);
  } catch (const ModelLoadError& e) {
    // No manifest, no plan: a row for each experiment the run asks for.
    const std::string reason = first_line(e.what());
    if (options.accuracy)
      add(failure_row(ExperimentKind::kAccuracy, Status::kModelFailToLoad, reason, context));
    if (options.performance)
      add(failure_row(ExperimentKind::kPerformance, Status::kModelFailToLoad, reason, context));
    return rows;
  }
  context.batch_size = model.manifest.batch_size;
  const ModelPlan plan = plan_model(entry, model.manifest, options, config, device_string);
  std::fputs(describe(plan).c_str(), stderr);
  run_planned_model(entry, plan, model, context, add);
  return rows;
}

}  // namespace zoobench
