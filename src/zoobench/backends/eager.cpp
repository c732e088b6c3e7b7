// `eager`: the TorchScript interpreter with graph-executor optimization off — op-by-op
// dispatch, the reference for accuracy and the baseline for speedups.
#include "zoobench/backends/builtin_backends.h"
#include "zoobench/backends/torchscript_executable.h"
#include "zoobench/util/log.h"
#include "zoobench/zoo/model_files.h"

namespace zoobench {
namespace {

class EagerBackend : public Backend {
 public:
  std::string name() const override { return "eager"; }
  std::optional<std::string> submodules_refusal() const override { return std::nullopt; }
  std::string description() const override {
    return "TorchScript interpreter, optimizations off (op-by-op): the reference and the baseline";
  }
  std::optional<std::string> unsupported_reason(const Manifest& manifest,
                                                const BackendRequest&) const override {
    return torchscript_unsupported_reason(manifest);
  }
  std::unique_ptr<Executable> prepare(const Manifest& manifest, const BackendRequest& request,
                                      const std::vector<c10::IValue>&) override {
    return std::make_unique<TorchScriptExecutable>(load_torchscript_for(manifest, request), manifest,
                                                   request, /*optimize=*/false);
  }
};

}  // namespace

std::optional<std::string> torchscript_unsupported_reason(const Manifest& manifest) {
  if (manifest.artifact("eval") == nullptr && manifest.artifact("train") == nullptr) {
    return "the model has no TorchScript artifact";
  }
  return std::nullopt;
}

torch::jit::Module load_torchscript_for(const Manifest& manifest, const BackendRequest& request) {
  auto module = load_torchscript(manifest, torchscript_role(manifest, request.mode), request.device);
  if (request.after_load) request.after_load(module);
  if (request.dtype() != c10::kFloat) cast_module(module, request.dtype());
  if (request.dtype() == c10::kDouble) {
    if (const int widened = widen_float_dtype_constants(module); widened > 0)
      log::info("float64: {} float32 cast(s) the trace recorded now cast to float64", widened);
  }
  return module;
}

std::unique_ptr<Backend> make_eager_backend() { return std::make_unique<EagerBackend>(); }

}  // namespace zoobench
