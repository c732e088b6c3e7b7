// Resolving a model's plan, and its description for the log.
#include "zoobench/runner/model_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>

#include "zoobench/backends/backend.h"
#include "zoobench/backends/switches.h"
#include "zoobench/runner/upstream_optimizer.h"
#include "zoobench/util/text.h"

namespace zoobench {
namespace {

void add_once(std::vector<std::string>& list, const std::string& item) {
  if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
}

// --disable-switches, then the suite's switches off for this model and backend (unless
// --ignore-suite-switches); a name the backend has no switch for makes the plan invalid.
void plan_switches(ModelPlan& plan, const ZooEntry& entry, const RunOptions& options,
                   const SuiteConfig& config) {
  plan.switches_off = options.disabled_switches;
  if (!options.suite_switches) return;
  const auto off = config.switches_off(entry.name, options.backend);
  if (off.switches.empty()) return;
  if (auto why = unknown_switch_name(off.switches, {options.backend})) {
    plan.invalid = fmt::format(
        "{}.yaml zoobench.switches_off.{}: {}; fix the yaml or run with "
        "--ignore-suite-switches",
        config.suite(), entry.name, *why);
    return;
  }
  for (const auto& name : off.switches) add_once(plan.switches_off, name);
  plan.suite_switches_reason = fmt::format(
      "the suite turns off {} ({}); --ignore-suite-switches "
      "keeps them on",
      join(off.switches, ", "), off.reason);
}

// The suite's patches and the manifest's own, less those turned off as switches.
std::vector<std::string> plan_patches(const Manifest& manifest, const RunOptions& options,
                                      const SuiteConfig& config,
                                      const std::vector<std::string>& switches_off) {
  std::vector<std::string> names;
  if (!options.patches) return names;
  for (auto& name : config.patches_for(manifest, options.mode)) {
    if (std::find(switches_off.begin(), switches_off.end(), patch_switch(name)) ==
        switches_off.end())
      names.push_back(std::move(name));
  }
  return names;
}

void plan_cudagraphs(ModelPlan& plan, const RunOptions& options, const SuiteConfig& config) {
  plan.cudagraphs = options.cudagraphs;
  if (!options.cudagraphs) {
    plan.cudagraphs_off_reason = "--disable-cudagraphs";
  } else if (config.disables_cudagraphs(plan.model) && !make_backend(plan.backend)->is_cuda_graphs()) {
    plan.cudagraphs = false;
    plan.cudagraphs_off_reason = config.suite() + ".yaml disable_cudagraph";
  }
}

// --optimizer upstream: for the torch.compile family (eager being the Python module, as
// upstream's), the optimizer upstream's init_optimizer picks; zoobench's own backends step SGD
// (a C++ Adam step keeps a host-side count that a CUDA graph cannot capture).
void plan_optimizer(ModelPlan& plan, const RunOptions& options) {
  plan.optimizer = options.optimizer;
  if (options.optimizer.kind != "upstream") {
    plan.optimizer_why = "--optimizer " + options.optimizer.kind;
    return;
  }
  if (make_backend(plan.backend)->family() == "zoobench") {
    plan.optimizer.kind = "sgd";
    plan.optimizer_why = "zoobench's own backends step SGD (--optimizer adam for Adam)";
    return;
  }
  const OptimizerChoice choice = upstream_optimizer(
      {plan.model, plan.device.rfind("cuda", 0) == 0,
       dynamo_backend_of(plan.backend) == std::optional<std::string>("inductor"),
       options.accuracy, options.ci});
  plan.optimizer.kind = choice.kind;
  plan.optimizer_why = choice.why;
}

// What the flags ask of the model and how its backends prepare it.
void plan_flags(ModelPlan& plan, const ZooEntry& entry, const RunOptions& options) {
  plan.accuracy = options.accuracy;
  plan.performance = options.performance;
  plan.input_layouts = accuracy_layouts(options);
  plan.training_steps = options.training_steps;
  plan.accuracy_summary = options.accu_summary;
  plan.skip_accuracy_check = options.skip_accuracy_check;
  if (!options.save_outputs.empty())
    plan.save_outputs_dir =
        (std::filesystem::path(options.save_outputs) / entry.suite / entry.name).string();
  plan.measurement = options.measurement;
  plan.pause_pipelines = options.pause_pipelines;
  plan.retime_unstable = options.retime_unstable;
  plan_optimizer(plan, options);
  plan.compile_options_json = options.compile_options_json;
  plan.cold_compile_cache = options.cold_compile_cache;
  plan.freezing = options.freezing;
  plan.dynamic_shapes = options.dynamic_shapes;
  plan.channels_last = options.channels_last;
  plan.log_file = options.log_file;
}

// How the accuracy check treats the two eager runs.
std::string eager_runs_rule(const ModelPlan& plan) {
  if (plan.eager_not_deterministic)
    return "not compared (accuracy.skip.eager_not_deterministic: pass_due_to_skip, zoobench's "
           "verdict in strict_accuracy)";
  if (plan.non_deterministic)
    return "may differ (non_deterministic: fail_accuracy counts as pass, zoobench's verdict in "
           "strict_accuracy)";
  return "must agree bitwise";
}

// "cuDNN deterministic off, benchmark on" as the model's code sets them; "" when it sets none.
std::string cudnn_switches_text(const CudnnSwitches& switches) {
  std::vector<std::string> parts;
  auto on_off = [](bool on) { return on ? "on" : "off"; };
  if (switches.deterministic)
    parts.push_back(fmt::format("deterministic {}", on_off(*switches.deterministic)));
  if (switches.benchmark) parts.push_back(fmt::format("benchmark {}", on_off(*switches.benchmark)));
  if (parts.empty()) return "";
  return fmt::format("; cuDNN {} as the model's TorchBench code sets them "
                     "(zoobench.cudnn_set_by_model)",
                     fmt::join(parts, ", "));
}

// Whether accuracy checks enforce torch's deterministic algorithms, and cuDNN's switches.
std::string determinism_rule(const ModelPlan& plan) {
  const std::string algorithms =
      plan.deterministic_algorithms
          ? "torch's deterministic algorithms enforced (upstream's setup_determinism)"
          : "torch's deterministic algorithms not asked for "
            "(zoobench.deterministic_algorithms_off: upstream's exception list)";
  return algorithms + cudnn_switches_text(plan.cudnn_by_model);
}

}  // namespace

std::vector<std::string> needed_roles(const std::string& eager_reference,
                                      const std::vector<std::string>& backends, Mode mode,
                                      Precision precision, const std::string& device_type) {
  std::vector<std::string> loading = {eager_reference_backend(eager_reference)};
  loading.insert(loading.end(), backends.begin(), backends.end());
  std::vector<std::string> roles;
  for (const auto& backend : loading) {
    for (const auto& role : make_backend(backend)->needed_artifacts(mode, precision, device_type))
      add_once(roles, role);
  }
  return roles;
}

ExportRequest export_request(const RunOptions& options, const std::string& suites_dir) {
  ExportRequest request;
  request.device_type = options.devices[0].substr(0, options.devices[0].find(':'));
  request.roles = needed_roles(eager_reference(options), options.backends, options.mode,
                               options.precision, request.device_type);
  request.training = options.mode == Mode::kTraining;
  request.batch_size = options.batch_size;
  request.accuracy_batch = options.accuracy_batch;
  request.zoo_dir = options.zoo_dir;
  request.suites_dir = suites_dir;
  request.torchbench_dir = options.torchbench_dir;
  return request;
}

std::string reference_backend(const ModelPlan& plan) {
  return eager_reference_backend(plan.eager_reference);
}

ModelPlan plan_model(const ZooEntry& entry, const Manifest& manifest, const RunOptions& options,
                     const SuiteConfig& config, const std::string& device) {
  ModelPlan plan;
  plan.model = entry.name;
  plan.backend = options.backend;
  plan.device = device;
  plan.mode = options.mode;
  plan.precision = options.precision;
  plan.batch_size = manifest.batch_size;
  const std::string device_type = device.substr(0, device.find(':'));
  plan.eager_reference = eager_reference(options);
  plan.artifacts = needed_roles(plan.eager_reference, {options.backend}, options.mode,
                                options.precision, device_type);
  plan_switches(plan, entry, options, config);
  plan.patches = plan_patches(manifest, options, config, plan.switches_off);
  plan.tolerance =
      config.tolerance(entry.name, options.mode, options.precision, device_type, options.cosine);
  if (options.tolerance) {
    plan.tolerance.tolerance = *options.tolerance;
    plan.tolerance.source = "--tol";
  }
  plan.non_deterministic = config.is_non_deterministic(entry.name);
  plan.eager_not_deterministic = config.eager_not_deterministic(entry.name, options.mode);
  plan.equal_nan = options.equal_nan;
  plan.deterministic_algorithms = config.asks_for_deterministic_algorithms(entry.name);
  plan.cudnn_by_model = config.cudnn_set_by_model(entry.name);
  plan.training_in_eval_mode = options.mode == Mode::kTraining && plan.eager_reference == "python" &&
                               config.trains_in_eval_mode_for_accuracy(entry.name);
  plan.check_runs = config.accuracy_check_runs(entry.name);
  plan.loss_scale = config.loss_scale(entry.name);
  plan_cudagraphs(plan, options, config);
  plan_flags(plan, entry, options);
  return plan;
}

std::string describe(const ModelPlan& plan) {
  const auto or_none = [](const std::vector<std::string>& list) {
    return list.empty() ? std::string("none") : join(list, ", ");
  };
  std::string tolerance = fmt::format("{} {}", plan.tolerance.cosine ? "cosine" : "tolerance",
                                      plan.tolerance.tolerance);
  if (plan.tolerance.larger_multiplier_for_smaller_tensor)
    tolerance += ", larger multiplier for small tensors";
  if (plan.tolerance.use_iou_for_bool)
    tolerance += fmt::format(", IoU >= {} for masks", plan.tolerance.iou_threshold);
  std::string text = fmt::format(
      "plan: {} with {}, {} {}, on {}, batch size {}\n"
      "plan: eager reference {}\n"
      "plan: artifacts {}\n"
      "plan: patches {}\n"
      "plan: switches off {}{}\n"
      "plan: accuracy rule {} (from {}); {} compiled run(s) voted; eager runs {}; {}\n",
      plan.model, plan.backend, mode_name(plan.mode), precision_name(plan.precision), plan.device,
      plan.batch_size,
      plan.eager_reference == "python"
          ? "the model's Python module, built from its recipe (no TorchScript)"
          : "eval.pt in the TorchScript interpreter",
      or_none(plan.artifacts), or_none(plan.patches), or_none(plan.switches_off),
      plan.suite_switches_reason.empty() ? "" : " (" + plan.suite_switches_reason + ")", tolerance,
      plan.tolerance.source, plan.check_runs,
      eager_runs_rule(plan), determinism_rule(plan));
  if (plan.mode == Mode::kTraining)
    text += fmt::format(
        "plan: loss scale {}; accuracy checked in {} mode; optimizer {} lr {} ({})\n",
        plan.loss_scale, plan.training_in_eval_mode ? "eval (upstream's use_eval_mode)" : "train",
        plan.optimizer.kind, plan.optimizer.learning_rate, plan.optimizer_why);
  if (plan.device.rfind("cuda", 0) == 0)
    text += fmt::format("plan: CUDA graphs {}\n",
                        plan.cudagraphs ? "allowed" : "off (" + plan.cudagraphs_off_reason + ")");
  if (plan.invalid) text += "plan: cannot run: " + *plan.invalid + "\n";
  return text;
}

}  // namespace zoobench
