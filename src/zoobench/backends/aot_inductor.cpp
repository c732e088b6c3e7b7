// `aot_inductor`: the C++ runtime of torch.compile's Inductor, loading the AOTInductor package
// the exporter made for this device and dtype (`--aoti`). Inference only. Inputs are staged to
// the package's input contract (e.g. int32 ids) through the 64-bit boundary, memoized so
// repeated timed calls do not pay for the cast. Built only with Torch >= 2.6.
#include "zoobench/backends/builtin_backends.h"
#include "zoobench/backends/cuda_graph_executable.h"
#include "zoobench/util/compat.h"
#include "zoobench/util/errors.h"

#if ZOOBENCH_WITH_AOTI
#include <c10/core/InferenceMode.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>

#include "zoobench/boundary/boundary.h"
#endif

namespace zoobench {
namespace {

std::string package_role(const BackendRequest& request) {
  return "aoti." + precision_name(request.precision) + "." + (request.device.is_cuda() ? "cuda" : "cpu");
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

class AotInductorExecutable : public Executable {
 public:
  AotInductorExecutable(const Artifact& package, const BackendRequest& request)
      : loader_(std::make_unique<torch::inductor::AOTIModelPackageLoader>(
            package.path, "model", /*run_single_threaded=*/false, /*num_runners=*/1,
            request.device.is_cuda() ? request.device.index() : c10::DeviceIndex(-1))),
        // Inside a CUDA graph the cast must be recorded and replayed with the inputs; a memo
        // hit at capture time would leave replays reading a stale narrowed copy.
        memo_(/*enabled=*/!(request.device.is_cuda() && request.cudagraphs)) {
    for (const auto& contract : package.input_contract) {
      contract_dtypes_.push_back(contract.dtype.empty() ? std::optional<c10::ScalarType>()
                                                        : scalar_type_named(contract.dtype));
    }
  }

  c10::IValue run(const std::vector<c10::IValue>& inputs) override {
    c10::InferenceMode no_autograd;
    std::vector<at::Tensor> tensors;
    tensors.reserve(inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      at::Tensor t = inputs[i].toTensor();
      if (i < contract_dtypes_.size() && contract_dtypes_[i] && t.scalar_type() != *contract_dtypes_[i]) {
        t = memo_.narrow(t, *contract_dtypes_[i]);
      }
      tensors.push_back(std::move(t));
    }
    std::vector<at::Tensor> outputs = loader_->run(tensors);
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
  boundary::NarrowingMemo memo_;
  std::vector<std::optional<c10::ScalarType>> contract_dtypes_;
};
#endif

class AotInductorBackend : public Backend {
 public:
  std::string name() const override { return "aot_inductor"; }
  std::string description() const override {
    return "AOTInductor package (torch.compile's C++ runtime), inference; export with --aoti";
  }
  std::optional<std::string> unsupported_reason(const Manifest&, const BackendRequest& request) const override {
    if (!compat::kHasAotInductor) {
      return "this zoobench was built against torch " + compat::torch_version() +
             ", which has no AOTInductor runtime (needs >= 2.6)";
    }
    if (request.mode == Mode::kTraining) return "aot_inductor packages are inference-only";
    if (request.precision == Precision::kAmp) return "aot_inductor packages have no autocast; use --float16/--bfloat16";
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
      throw ModelLoadError(manifest.name + " has no AOTInductor package '" + role +
                           "'; export it with tools/export_zoo.py --aoti --device " +
                           (request.device.is_cuda() ? "cuda" : "cpu") + " --only " + manifest.name);
    }
    verify_artifact(package->path, package->sha256, "AOTInductor package");
#if ZOOBENCH_WITH_AOTI
    std::unique_ptr<Executable> executable;
    try {
      executable = std::make_unique<AotInductorExecutable>(*package, request);
    } catch (...) {
      throw ModelLoadError("cannot load " + package->path + ": " + first_line(current_exception_message()));
    }
    return wrap_in_cuda_graph_if_requested(std::move(executable), request, example_inputs);
#else
    (void)example_inputs;
    throw ModelLoadError(*unsupported_reason(manifest, request));
#endif
  }
};

}  // namespace

std::unique_ptr<Backend> make_aot_inductor_backend() { return std::make_unique<AotInductorBackend>(); }

}  // namespace zoobench
