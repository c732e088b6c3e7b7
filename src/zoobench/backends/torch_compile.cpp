// python_eager and torch.compile's backends. The model is rebuilt in the embedded Python from
// the manifest's source record and proven identical to eval.pt before anything compiles it
// (tools/zoo_compile/rebuild.py); tensors pass without copies; preparation compiles and warms
// up, so compilation is preparation time, as jit's profiling runs are.
#include "zoobench/backends/torch_compile.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <regex>

#include "zoobench/backends/inductor_switches.h"
#include "zoobench/python/embedded_python.h"
#include "zoobench/serialization/pickle.h"
#include "zoobench/util/device_gate.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/log.h"
#include "zoobench/util/text.h"
#include "zoobench/zoo/export_request.h"
#include "zoobench/zoo/model_files.h"

namespace zoobench {
namespace {

// What the embedded Python can do (zoo_compile.environment.describe), asked once per process.
struct PythonFacts {
  std::optional<std::string> unavailable;  // no Python, or it failed to describe itself
  nlohmann::json facts;
};

const PythonFacts& python_facts() {
  static std::once_flag once;
  static PythonFacts state;
  std::call_once(once, [] {
    if (auto why = python::unavailable_reason()) {
      state.unavailable = *why;
      return;
    }
    try {
      state.facts = python::call_json("zoo_compile.environment", "describe");
    } catch (const std::exception& e) {
      state.unavailable = "the embedded Python (" + python::interpreter_path() +
                          ") cannot import torch: " + first_line(e.what());
    }
  });
  return state;
}

// Calls that wait for the first compile of a model (and, in CUDA-graph modes, its recording:
// cudagraph trees warm up, then record, then replay).
constexpr int kWarmUpCalls = 3;

c10::IValue as_tuple(const std::vector<c10::IValue>& inputs) {
  return c10::ivalue::Tuple::create(inputs);
}

std::vector<std::pair<std::string, at::Tensor>> named_tensors(const c10::IValue& list) {
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (const auto& item : list.toListRef()) {
    const auto& pair = item.toTupleRef().elements();
    out.emplace_back(pair.at(0).toStringRef(), pair.at(1).toTensor());
  }
  return out;
}

// A Python exception from the session: the rebuild's refusals are the model's fault
// (model_fail_to_load); everything else fails the run with Python's own message.
[[noreturn]] void rethrow_python(const python::PythonError& e) {
  if (ends_with(e.type(), "RebuildError")) throw ModelLoadError(first_line(e.what()));
  throw;
}

class PythonModelExecutable;

// The same Python module called without compilation (Executable::uncompiled()).
class UncompiledSide : public Executable {
 public:
  explicit UncompiledSide(PythonModelExecutable& owner) : owner_(owner) {}
  c10::IValue run(const std::vector<c10::IValue>& inputs) override;
  StepResult step(const std::vector<c10::IValue>& inputs) override;
  TrainingState training_state() const override;

 private:
  PythonModelExecutable& owner_;
};

class PythonModelExecutable : public Executable {
 public:
  PythonModelExecutable(python::Object session, bool compiled,
                        std::optional<double> compile_seconds)
      : session_(std::move(session)), compile_seconds_(compile_seconds) {
    if (compiled) uncompiled_ = std::make_unique<UncompiledSide>(*this);
  }
  ~PythonModelExecutable() override {
    try {
      session_.call_json("close");
    } catch (const std::exception& e) {
      log::warn("closing the Python session: {}", first_line(e.what()));
    }
  }

  c10::IValue run(const std::vector<c10::IValue>& inputs) override { return call("run", inputs); }
  StepResult step(const std::vector<c10::IValue>& inputs) override {
    return as_step(call("step", inputs));
  }
  TrainingState training_state() const override {
    c10::IValue state = session_.call("training_state");
    const auto& parts = state.toTupleRef().elements();
    TrainingState out;
    out.gradients = named_tensors(parts.at(0));
    out.parameters = named_tensors(parts.at(1));
    out.buffers = named_tensors(parts.at(2));
    return out;
  }
  ExecutionInfo info() const override {
    ExecutionInfo info;
    nlohmann::json facts = session_.call_json("facts");
    info.cudagraphs = facts.value("cudagraphs", false) ? "on" : "off";
    if (facts.contains("graphs")) info.graphs = facts["graphs"].get<int64_t>();
    if (facts.contains("graph_breaks")) info.graph_breaks = facts["graph_breaks"].get<int64_t>();
    if (facts.contains("recompiles")) info.recompiles = facts["recompiles"].get<int64_t>();
    if (facts.contains("dynamo_stats") && facts["dynamo_stats"].is_object())
      info.dynamo_stats = facts["dynamo_stats"];
    if (facts.contains("graph_break_reasons") && facts["graph_break_reasons"].is_array() &&
        !facts["graph_break_reasons"].empty()) {
      info.graph_break_reasons = facts["graph_break_reasons"];
      // Dynamo's reasons run over several lines (explanation, hint): the first says which.
      info.note = fmt::format("{} graph break(s), the first: {}", info.graph_breaks.value_or(1),
                              first_line(info.graph_break_reasons[0].value("reason", "")));
    }
    if (facts.contains("frames_not_converted") && facts["frames_not_converted"].is_array())
      info.frames_not_converted = facts["frames_not_converted"];
    if (facts.contains("compile_phases_s") && facts["compile_phases_s"].is_object())
      info.compile_phases = facts["compile_phases_s"];
    info.compile_seconds = compile_seconds_;
    return info;
  }
  Executable* uncompiled() override { return uncompiled_.get(); }

  c10::IValue call(const char* method, const std::vector<c10::IValue>& inputs) {
    return session_.call(method, {as_tuple(inputs)});
  }
  static StepResult as_step(const c10::IValue& value) {
    const auto& parts = value.toTupleRef().elements();
    return StepResult{parts.at(0).toTensor(), parts.at(1)};
  }

 private:
  python::Object session_;
  std::optional<double> compile_seconds_;
  std::unique_ptr<UncompiledSide> uncompiled_;
};

c10::IValue UncompiledSide::run(const std::vector<c10::IValue>& inputs) {
  return owner_.call("run_uncompiled", inputs);
}
StepResult UncompiledSide::step(const std::vector<c10::IValue>& inputs) {
  return PythonModelExecutable::as_step(owner_.call("step_uncompiled", inputs));
}
TrainingState UncompiledSide::training_state() const { return owner_.training_state(); }

// triton.cudagraphs as torch_compile_cudagraphs says, where a switch or --compile-options
// has not set it.
void set_cudagraphs(nlohmann::json& options, const BackendRequest& request,
                    const TorchCompileSpec& spec) {
  if (options.is_object() && options.contains("triton.cudagraphs")) return;
  if (auto on = torch_compile_cudagraphs(spec, request.device.is_cuda(), request.cudagraphs))
    options["triton.cudagraphs"] = *on;
}

// What the Python side needs of the model's files: the inputs, and eval.pt unless the reference
// is the Python module (whose missing recipe the Python side explains: a model added from a
// TorchScript file has none). The Python side reads each from bytes it hashes itself
// (zoo_compile.rebuild); checked here too, to fail before Python starts.
void check_files(const Manifest& manifest, const BackendRequest& request) {
  if (!request.python_reference) {
    const Artifact* eval = manifest.artifact("eval");
    if (eval == nullptr)
      throw ModelLoadError(manifest.name + " has no eval.pt to rebuild its Python module against");
    verify_artifact(eval->path, eval->sha256, "TorchScript");
  }
  verify_artifact(manifest.inputs_path, manifest.inputs_sha256, "inputs");
}

// The descriptors of this process's shared hold of the device gate, for the Python side to let
// go across a compile (util/device_gate.h); None when it holds none.
c10::IValue gate_descriptors() {
  const auto held = process_device_gate().shared_descriptors();
  if (!held) return c10::IValue();
  return c10::ivalue::Tuple::create(
      {c10::IValue(int64_t{held->first}), c10::IValue(int64_t{held->second})});
}

class PythonModelBackend : public Backend {
 public:
  explicit PythonModelBackend(std::optional<TorchCompileSpec> spec) : spec_(std::move(spec)) {}

  std::string name() const override { return spec_ ? spec_->name : "python_eager"; }
  std::string family() const override { return spec_ ? "torch.compile" : "python"; }
  std::string description() const override {
    if (!spec_)
      return "the zoo model's Python module, uncompiled (upstream's eager baseline), in embedded "
             "Python";
    const bool upstream_inductor = spec_->dynamo_backend == "inductor" && spec_->mode.empty();
    return "torch.compile(backend=\"" + spec_->dynamo_backend + "\"" +
           (spec_->mode.empty() ? "" : ", mode=\"" + spec_->mode + "\"") + ") in embedded Python" +
           (upstream_inductor ? "; on CUDA inside CUDA graphs, as upstream's --backend inductor "
                                "(--disable-cudagraphs, or inductor:default, without)"
                              : "");
  }

  std::optional<std::string> unavailable_reason() const override {
    const PythonFacts& python = python_facts();
    if (python.unavailable) return python.unavailable;
    if (!spec_) return std::nullopt;
    if (!python.facts.value("torch_compile", false))
      return python.facts.value("why_not", "no torch.compile");
    return unknown_dynamo_backend(spec_->dynamo_backend);
  }

  // Per model: whether torch.compile runs here. The backend's name was checked by the run
  // before any model started (unavailable_reason, require_runnable_backends).
  std::optional<std::string> unsupported_reason(const Manifest&,
                                                const BackendRequest&) const override {
    const PythonFacts& python = python_facts();
    if (python.unavailable) return python.unavailable;
    if (spec_ && !python.facts.value("torch_compile", false))
      return python.facts.value("why_not", "no torch.compile");
    return std::nullopt;
  }

  // Inductor's config steps (inductor_switches.h); python_eager compiles nothing.
  std::vector<OptimizationSwitch> switches() const override {
    return spec_ ? torch_compile_switches(*spec_) : std::vector<OptimizationSwitch>{};
  }
  std::string fixed_steps() const override {
    return spec_ ? torch_compile_fixed_steps(*spec_) : std::string();
  }

  // The model's recipe; with a TorchScript reference, eval.pt too.
  std::vector<std::string> needed_artifacts(Mode, Precision, const std::string&) const override {
    return {kRecipeRole};
  }

  std::unique_ptr<Executable> prepare(const Manifest& manifest, const BackendRequest& request,
                                      const std::vector<c10::IValue>& example_inputs) override {
    check_files(manifest, request);
    nlohmann::json config = {
        {"manifest", manifest.directory + "/manifest.json"},
        {"device", device_name(request.device)},
        {"mode", mode_name(request.mode)},
        {"dtype", serialization::detail::python_name_of_dtype(request.dtype())},
        {"amp", request.precision == Precision::kAmp},
        {"loss_scale", request.loss_scale},
        {"optimizer",
         {{"kind", request.optimizer.kind}, {"learning_rate", request.optimizer.learning_rate}}},
        {"compile", nullptr},
        {"channels_last", request.channels_last},
        {"weights", request.python_reference ? "recipe" : "eval.pt"},
        {"eval_mode", request.training_in_eval_mode},
    };
    if (spec_) {
      // With a mode, the Python side turns the mode into options beneath these
      // (zoo_compile.session.compile_arguments): torch.compile takes one or the other.
      const std::string options = torch_compile_options_json(*spec_, request.compile_options_json,
                                                             request.disabled_switches);
      nlohmann::json parsed = options.empty() ? nlohmann::json() : nlohmann::json::parse(options);
      if (request.freezing && spec_->dynamo_backend == "inductor" &&
          request.mode == Mode::kInference)
        parsed["freezing"] = true;
      if (request.fallback_random && spec_->dynamo_backend == "inductor")
        parsed["fallback_random"] = true;
      set_cudagraphs(parsed, request, *spec_);
      config["compile"] = {
          {"backend", spec_->dynamo_backend},
          {"mode", spec_->mode.empty() ? nlohmann::json() : nlohmann::json(spec_->mode)},
          {"options", parsed},
          {"keep_cache", request.keep_compile_cache},
          {"dynamic_shapes", request.dynamic_shapes}};
    }
    try {
      python::Object session = python::make_object("zoo_compile.session", "open_session", config);
      // Rebuilding the module and proving it identical is loading, not compiling: python_eager
      // compiles nothing.
      std::optional<double> compile_seconds = 0.0;
      if (spec_) {
        // Compilation happens on the first calls: time them as the compile. The calls hold the
        // device shared (the caller's hold); the Python side lets it go while dynamo and Inductor
        // compile on the CPU, so that another pipeline's timed section need not wait for them.
        auto start = std::chrono::steady_clock::now();
        session.call("warm_up", {as_tuple(clone_inputs(example_inputs)),
                                 c10::IValue(int64_t{kWarmUpCalls}), gate_descriptors()});
        compile_seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }
      return std::make_unique<PythonModelExecutable>(std::move(session), spec_.has_value(),
                                                     compile_seconds);
    } catch (const python::PythonError& e) {
      rethrow_python(e);
    }
  }

 private:
  std::optional<TorchCompileSpec> spec_;
};

}  // namespace

const std::vector<std::string>& torch_compile_modes() {
  static const std::vector<std::string> kModes = {"default", "reduce-overhead", "max-autotune",
                                                  "max-autotune-no-cudagraphs"};
  return kModes;
}

std::optional<TorchCompileSpec> parse_torch_compile_name(
    const std::string& name, const std::vector<std::string>& builtin_names) {
  static const std::string kExplicit = "compile:";
  const bool explicit_prefix = starts_with(name, kExplicit);
  const std::string rest = explicit_prefix ? name.substr(kExplicit.size()) : name;
  const auto colon = rest.find(':');
  TorchCompileSpec spec;
  spec.dynamo_backend = rest.substr(0, colon);
  std::string mode = colon == std::string::npos ? "" : rest.substr(colon + 1);
  static const std::regex kIdentifier(R"([A-Za-z_][A-Za-z0-9_]*)");
  if (!std::regex_match(spec.dynamo_backend, kIdentifier)) return std::nullopt;
  const bool builtin = std::find(builtin_names.begin(), builtin_names.end(), spec.dynamo_backend) !=
                       builtin_names.end();
  if (builtin && !explicit_prefix) {
    if (colon == std::string::npos) return std::nullopt;  // the built-in backend itself
    throw UsageError("'" + name + "': " + spec.dynamo_backend +
                     " is zoobench's own backend and takes no mode; " +
                     "for dynamo's backend of that name write compile:" + name);
  }
  const auto& modes = torch_compile_modes();
  if (colon != std::string::npos && std::find(modes.begin(), modes.end(), mode) == modes.end()) {
    throw UsageError("'" + name + "': unknown torch.compile mode '" + mode +
                     "' (modes: " + join(modes, ", ") + ")");
  }
  spec.mode = mode;  // "default" stays: torch.compile's default mode, without CUDA graphs
  spec.name = (explicit_prefix ? kExplicit : std::string()) + spec.dynamo_backend +
              (mode.empty() ? "" : ":" + mode);
  return spec;
}

std::unique_ptr<Backend> make_python_eager_backend() {
  return std::make_unique<PythonModelBackend>(std::nullopt);
}

std::unique_ptr<Backend> make_torch_compile_backend(const TorchCompileSpec& spec) {
  return std::make_unique<PythonModelBackend>(spec);
}

std::optional<std::string> unknown_dynamo_backend(const std::string& dynamo_backend) {
  const PythonFacts& python = python_facts();
  if (python.unavailable || !python.facts.value("torch_compile", false)) return std::nullopt;
  // Asked once per process, and only here: listing imports every backend dynamo has.
  static const std::vector<std::string> available = [] {
    std::vector<std::string> names;
    try {
      for (const auto& known : python::call_json("zoo_compile.environment", "dynamo_backends"))
        names.push_back(known.get<std::string>());
    } catch (const std::exception& e) {
      log::warn("cannot list dynamo's backends: {}", first_line(e.what()));
    }
    return names;
  }();
  if (available.empty() ||
      std::find(available.begin(), available.end(), dynamo_backend) != available.end()) {
    return std::nullopt;
  }
  return "dynamo has no backend '" + dynamo_backend + "' (it has: " + join(available, ", ") + ")";
}

}  // namespace zoobench
