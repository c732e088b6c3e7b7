// The in-process run of one model.
#include "zoobench/runner/model_run.h"

#include <chrono>

#include <fmt/format.h>

#include "zoobench/backends/backend.h"
#include "zoobench/boundary/boundary.h"
#include "zoobench/patches/registry.h"
#include "zoobench/results/failure.h"
#include "zoobench/runner/record_rows.h"
#include "zoobench/util/crash_report.h"
#include "zoobench/util/compat.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/log.h"
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

}  // namespace

namespace {

std::vector<ResultRow> run_model_rows(const ZooEntry& entry, const RunOptions& options, const SuiteConfig& config,
                                      const std::string& device_string,
                                      const std::function<void(const ResultRow&)>& emit);

}  // namespace

std::vector<ResultRow> run_model(const ZooEntry& entry, const RunOptions& options, const SuiteConfig& config,
                                 const std::string& device_string,
                                 const std::function<void(const ResultRow&)>& on_row) {
  auto emit = [&](const ResultRow& row) {
    if (on_row) on_row(row);
  };
  return run_model_rows(entry, options, config, device_string, emit);
}

namespace {

std::vector<ResultRow> run_model_rows(const ZooEntry& entry, const RunOptions& options, const SuiteConfig& config,
                                      const std::string& device_string,
                                      const std::function<void(const ResultRow&)>& emit) {
  RowContext context = row_context(options, entry, device_string, options.log_file);
  crash_report::set_subject(fmt::format("{} ({}, {}, {}, {})", entry.name, options.backend, mode_name(options.mode),
                                        precision_name(options.precision), device_string));
  crash_report::set_phase("loading");
  std::vector<ResultRow> rows;
  auto add = [&](ResultRow row) {
    emit(row);
    rows.push_back(std::move(row));
  };
  auto fail_all = [&](Status status, const std::string& reason) {
    if (options.accuracy) add(failure_row(ExperimentKind::kAccuracy, status, reason, context));
    if (options.performance) add(failure_row(ExperimentKind::kPerformance, status, reason, context));
    return rows;
  };

  Manifest manifest;
  try {
    manifest = read_manifest(entry.manifest_path);
  } catch (const ModelLoadError& e) {
    return fail_all(Status::kModelFailToLoad, first_line(e.what()));
  }
  context.batch_size = manifest.batch_size;
  const c10::Device device = parse_device(device_string);
  compat::set_current_device(device);

  std::unique_ptr<patches::PatchScope> patch_scope;
  try {
    std::vector<std::string> names = options.patches ? config.patches_for(entry.name, options.mode)
                                                     : std::vector<std::string>{};
    patch_scope = std::make_unique<patches::PatchScope>(names);
    context.patches = patch_scope->names();
  } catch (...) {
    return fail_all(Status::kInfraError, "patches: " + first_line(current_exception_message()));
  }

  std::vector<c10::IValue> inputs;
  try {
    inputs = load_inputs(manifest, device);
  } catch (const ModelLoadError& e) {
    return fail_all(Status::kModelFailToLoad, first_line(e.what()));
  } catch (...) {
    std::string message = logged_exception_message(entry.name);
    return fail_all(status_for_failure(Phase::kLoad, message), first_line(message));
  }

  std::unique_ptr<Backend> eager = make_backend("eager");
  std::unique_ptr<Backend> compiled = make_backend(options.backend);
  BackendRequest request;
  request.device = device;
  request.mode = options.mode;
  request.precision = options.precision;
  request.cudagraphs = options.cudagraphs;
  request.optimizer = options.optimizer;
  request.compile_options_json = options.compile_options_json;
  request.keep_compile_cache = options.keep_compile_cache;
  request.loss_scale = config.loss_scale(entry.name);
  const bool training = options.mode == Mode::kTraining;
  patches::PatchScope* scope = patch_scope.get();
  request.after_load = [scope, training](torch::jit::Module& module) { scope->rewrite(module, training); };
  // Asked before anything runs: for a Python backend this starts the embedded Python, so the
  // autograd engine is torch's Python one from the first backward on (a C++ backward first, then
  // a Python one, trips an internal assert of the engine on CUDA).
  if (auto why = compiled->unsupported_reason(manifest, request)) {
    return fail_all(Status::kFailToRun, options.backend + " cannot run this: " + *why);
  }
  if (request.precision != Precision::kFloat32 && inputs.empty()) {
    return fail_all(Status::kModelFailToLoad, "the model has no inputs");
  }
  inputs = cast_inputs(inputs, request.dtype());

  if (options.accuracy) {
    const std::vector<std::string> layouts = accuracy_layouts(options);
    const std::string device_type = device.is_cuda() ? "cuda" : "cpu";
    for (const auto& layout : layouts) {
      RowContext layout_context = context;
      layout_context.input_layout = layout;
      AccuracyOptions accuracy;
      accuracy.tolerance = config.tolerance(entry.name, options.mode, options.precision, device_type, options.cosine);
      if (options.tolerance) {
        accuracy.tolerance.tolerance = *options.tolerance;
        accuracy.tolerance.source = "--tolerance";
      }
      accuracy.non_deterministic = config.is_non_deterministic(entry.name);
      accuracy.check_runs = config.accuracy_check_runs(entry.name);
      accuracy.training_steps = options.training_steps;
      accuracy.summary = options.accu_summary;
      std::vector<c10::IValue> reference_inputs = inputs;
      std::string layout_note;
      if (layout != kDefaultInputLayout) {
        auto laid = layout_inputs(inputs, layout, manifest);
        reference_inputs = laid.reference;
        accuracy.compiled_inputs = laid.compiled;
        if (!laid.applied) layout_note = "layout '" + layout + "' applies to no input; inputs stayed contiguous";
      }
      try {
        compat::set_deterministic_numerics(true);
        AccuracyRecord record =
            run_accuracy_experiment(manifest, *eager, *compiled, request, reference_inputs, accuracy);
        if (!layout_note.empty()) record.reason = record.reason.empty() ? layout_note : record.reason + "; " + layout_note;
        if (!record.summary_text.empty()) std::fputs(record.summary_text.c_str(), stdout);
        add(accuracy_row(record, layout_context));
      } catch (...) {
        std::string message = logged_exception_message(entry.name);
        add(failure_row(ExperimentKind::kAccuracy, status_for_failure(Phase::kCompiled, message),
                        first_line(message), layout_context));
      }
    }
  }
  if (options.performance) {
    try {
      // Timings use the fastest algorithms, as upstream's performance runs do.
      compat::set_deterministic_numerics(false);
      PerformanceOptions performance;
      performance.measurement = options.measurement;
      PerformanceRecord record = run_performance_experiment(manifest, *eager, *compiled, request, inputs, performance);
      add(performance_row(record, context));
    } catch (...) {
      std::string message = logged_exception_message(entry.name);
      add(failure_row(ExperimentKind::kPerformance, status_for_failure(Phase::kCompiled, message),
                      first_line(message), context));
    }
  }
  return rows;
}

}  // namespace
}  // namespace zoobench
