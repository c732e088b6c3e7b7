// `aot_inductor`: the C++ runtime of torch.compile's Inductor, loading the AOTInductor package
// the exporter made for this device and dtype (`--aoti`). Inference only. Inputs are staged to
// the package's input contract (e.g. int32 ids) through the 64-bit boundary, memoized so
// repeated timed calls do not pay for the cast. Built only with Torch >= 2.6.
// Its switches are the run-time steps zoobench adds (CUDA graph capture, the memo); the
// staging itself cannot be switched off (the package reads only its contract), and Inductor's
// own optimizations were fixed when the package was compiled (fixed_steps()).
#include <algorithm>

#include "zoobench/backends/builtin_backends.h"
#include "zoobench/backends/cuda_graph_executable.h"
#include "zoobench/util/compat.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/files.h"

#if ZOOBENCH_WITH_AOTI
#include <c10/core/InferenceMode.h>
#include <c10/util/strides.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>

#include "zoobench/boundary/boundary.h"
#endif

namespace zoobench {
namespace {

std::string package_role(Precision precision, const std::string& device_type) {
  return "aoti." + precision_name(precision) + "." + device_type;
}

std::string package_role(const BackendRequest& request) {
  return package_role(request.precision, request.device.is_cuda() ? "cuda" : "cpu");
}

#if ZOOBENCH_WITH_AOTI
c10::ScalarType scalar_type_named(const std::string& name) {
  static const std::vector<std::pair<std::string, c10::ScalarType>> kTypes = {
      {"float32", c10::kFloat}, {"float16", c10::kHalf},  {"bfloat16", c10::kBFloat16},
      {"float64", c10::kDouble}, {"int32", c10::kInt},   {"int64", c10::kLong},
      {"bool", c10::kBool},     {"int8", c10::kChar},    {"uint8", c10::kByte}};
  for (const auto& [n, t] : kTypes) {
    if (n == name) return t;
  }
  throw ModelLoadError("input contract names an unknown dtype '" + name + "'");
}

// What the package was compiled for, per input: the contract's dtype and strides where the
// exporter recorded them (matched by input name), else the input's own dtype, contiguous for
// the input's shape in the manifest (a package is compiled for that one shape).
// AOTInductor bakes the strides into its kernels and does not check them by default, so every
// input is staged to them (--input-layouts finds a backend that forgets this).
std::vector<boundary::InputContract> compiled_contracts(const Manifest& manifest,
                                                        const Artifact& package) {
  std::vector<boundary::InputContract> contracts(manifest.input_specs.size());
  for (const TensorContract& declared : package.input_contract) {
    auto spec = std::find_if(manifest.input_specs.begin(), manifest.input_specs.end(),
                             [&](const InputSpec& s) { return s.name == declared.name; });
    if (spec == manifest.input_specs.end()) {
      throw ModelLoadError("the input contract of " + package.path + " names input '" +
                           declared.name + "', which the manifest's inputs do not have");
    }
    boundary::InputContract& contract = contracts[spec - manifest.input_specs.begin()];
    if (!declared.dtype.empty()) contract.dtype = scalar_type_named(declared.dtype);
    if (!declared.strides.empty()) contract.strides = declared.strides;
  }
  for (std::size_t i = 0; i < contracts.size(); ++i) {
    if (contracts[i].strides) continue;
    const c10::DimVector contiguous = c10::contiguous_strides(manifest.input_specs[i].shape);
    contracts[i].strides = std::vector<int64_t>(contiguous.begin(), contiguous.end());
  }
  for (int64_t index : manifest.mutated_inputs) {
    if (index >= 0 && index < static_cast<int64_t>(contracts.size()))
      contracts[index].mutated = true;
  }
  return contracts;
}

// Whether the package runs inside a CUDA graph: on CUDA, asked for (--disable-cudagraphs not
// given) and its switch on.
bool captured(const BackendRequest& request) {
  return request.device.is_cuda() && request.cudagraphs && request.switch_on("cudagraphs");
}

class AotInductorExecutable : public Executable {
 public:
  // `verified_path`: a private copy of the package's verified bytes (the loader takes a path).
  AotInductorExecutable(const Manifest& manifest, const Artifact& package,
                        const std::string& verified_path, const BackendRequest& request)
      : loader_(std::make_unique<torch::inductor::AOTIModelPackageLoader>(
            verified_path, "model",
            // The container's default run() waits on its own events to pick a free model
            // instance, which a capturing stream does not permit; the single-threaded run
            // (chosen at load) is PyTorch's mode for CUDA graphs.
            /*run_single_threaded=*/captured(request),
            /*num_runners=*/1,
            request.device.is_cuda() ? request.device.index() : c10::DeviceIndex(-1))),
        contracts_(compiled_contracts(manifest, package)),
        // Inside a CUDA graph the cast must be recorded and replayed with the inputs; a memo
        // hit at capture time would leave replays reading a stale narrowed copy.
        memo_(/*enabled=*/!captured(request) && request.switch_on("narrowing_memo")) {}

  c10::IValue run(const std::vector<c10::IValue>& inputs) override {
    c10::InferenceMode no_autograd;
    std::vector<at::Tensor> tensors;
    tensors.reserve(inputs.size());
    for (const auto& input : inputs) tensors.push_back(input.toTensor());
    std::vector<at::Tensor> outputs = boundary::call_with_narrowed_inputs(
        tensors, contracts_,
        [&](const std::vector<at::Tensor>& staged) { return loader_->run(staged); }, &memo_);
    c10::List<at::Tensor> list;
    for (auto& t : outputs) list.push_back(std::move(t));
    return c10::IValue(list);
  }

  StepResult step(const std::vector<c10::IValue>&) override {
    throw std::runtime_error("aot_inductor packages are inference-only");
  }
  TrainingState training_state() const override { return {}; }

 private:
  std::unique_ptr<torch::inductor::AOTIModelPackageLoader> loader_;
  std::vector<boundary::InputContract> contracts_;
  boundary::NarrowingMemo memo_;
};
#endif

class AotInductorBackend : public Backend {
 public:
  std::string name() const override { return "aot_inductor"; }
  std::optional<std::string> channels_last_refusal() const override {
    return "a package is compiled for the layout it was exported with";
  }
  std::optional<std::string> submodules_refusal() const override {
    return "an AOTInductor package is one compiled piece: it exposes no intermediate values";
  }
  std::string description() const override {
    return "AOTInductor package (torch.compile's C++ runtime), inference; export with --aoti";
  }
  std::vector<OptimizationSwitch> switches() const override {
    return {
        {"cudagraphs",
         "CUDA graph capture and replay of the package's run (also --disable-cudagraphs); off: "
         "the package's own runner, uncaptured",
         "cuda", ""},
        {"narrowing_memo",
         "reuse of an input's staged copy (the package's dtype and strides) while the input is "
         "unchanged; off: staged afresh on every call (under a CUDA graph it is off anyway: the "
         "capture records the staging)",
         "all", ""},
    };
  }
  std::string fixed_steps() const override {
    return "Inductor's own optimizations were compiled into the package at export and cannot "
           "be turned off here: to try others, re-export the model with tools/export_zoo.py "
           "--aoti --aoti-options '{\"KEY\": VALUE}' (torch._inductor.config keys, as "
           "`zoobench list --switches --backend inductor` shows them) --only MODEL";
  }
  std::optional<std::string> unavailable_reason() const override {
    if (!compat::kHasAotInductor) {
      return "this zoobench was built against torch " + compat::torch_version() +
             ", which has no AOTInductor runtime (needs >= 2.6)";
    }
    return std::nullopt;
  }
  std::vector<std::string> needed_artifacts(Mode mode, Precision precision,
                                            const std::string& device_type) const override {
    std::vector<std::string> roles = Backend::needed_artifacts(mode, precision, device_type);
    // Where no package can run, exporting one would only cost time: the rows say why.
    if (mode == Mode::kInference && precision != Precision::kAmp && !unavailable_reason())
      roles.push_back(package_role(precision, device_type));
    return roles;
  }
  std::optional<std::string> unsupported_run(Mode mode, Precision precision,
                                             const std::string&) const override {
    if (auto why = unavailable_reason()) return why;
    if (mode == Mode::kTraining) return "aot_inductor packages are inference-only";
    if (precision == Precision::kAmp)
      return "aot_inductor packages have no autocast; use --float16/--bfloat16";
    return std::nullopt;
  }
  std::optional<std::string> unsupported_reason(const Manifest&, const BackendRequest& request) const override {
    if (auto why = unsupported_run(request.mode, request.precision, "")) return why;
    if (request.dtype_override && *request.dtype_override != parameter_dtype(request.precision)) {
      return "aot_inductor packages are compiled for one dtype";
    }
    return std::nullopt;
  }
  std::unique_ptr<Executable> prepare(const Manifest& manifest, const BackendRequest& request,
                                      const std::vector<c10::IValue>& example_inputs) override {
    const std::string role = package_role(request);
    const Artifact* package = manifest.artifact(role);
    if (package == nullptr) {
      const auto failure = manifest.artifact_failures.find(role);
      if (failure != manifest.artifact_failures.end()) {
        throw ModelLoadError("AOTInductor could not export " + manifest.name + " (" + role +
                             ", recorded by the exporter): " + first_line(failure->second));
      }
      throw ModelLoadError(manifest.name + " has no AOTInductor package '" + role +
                           "'; export it with tools/export_zoo.py --aoti --device " +
                           (request.device.is_cuda() ? "cuda" : "cpu") + " --only " + manifest.name);
    }
    // The loader takes a path: it gets a private copy of the bytes that were hashed, so a
    // package replaced after the check is never the one loaded.
    const std::string bytes =
        read_verified_artifact(package->path, package->sha256, "AOTInductor package");
#if ZOOBENCH_WITH_AOTI
    std::unique_ptr<Executable> executable;
    try {
      const PrivateFileCopy verified(bytes, "package.pt2");
      executable =
          std::make_unique<AotInductorExecutable>(manifest, *package, verified.path(), request);
    } catch (...) {
      throw ModelLoadError("cannot load " + package->path + ": " + first_line(current_exception_message()));
    }
    BackendRequest capture = request;
    capture.cudagraphs = captured(request);
    return wrap_in_cuda_graph_if_requested(std::move(executable), capture, example_inputs);
#else
    (void)example_inputs;
    (void)bytes;
    throw ModelLoadError(*unsupported_reason(manifest, request));
#endif
  }
};

}  // namespace

std::unique_ptr<Backend> make_aot_inductor_backend() { return std::make_unique<AotInductorBackend>(); }

}  // namespace zoobench
