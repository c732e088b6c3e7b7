// `cudagraphs`: the eager reference captured into a CUDA graph and replayed, like upstream's
// `cudagraphs` backend: what graph capture alone buys, without any compiler.
#include "zoobench/backends/builtin_backends.h"
#include "zoobench/backends/capture_rewrites.h"
#include "zoobench/backends/cuda_graph_executable.h"
#include "zoobench/backends/torchscript_executable.h"
#include "zoobench/util/compat.h"

namespace zoobench {
namespace {

class CudaGraphsBackend : public Backend {
 public:
  std::string name() const override { return "cudagraphs"; }
  bool is_cuda_graphs() const override { return true; }
  std::optional<std::string> submodules_refusal() const override { return std::nullopt; }
  std::string description() const override {
    return "the eager reference captured into a CUDA graph and replayed (CUDA only)";
  }
  std::optional<std::string> unavailable_reason() const override {
    if (!compat::kHasCuda) return "cudagraphs needs CUDA; this zoobench was built against a CPU-only LibTorch";
    return std::nullopt;
  }
  std::optional<std::string> unsupported_run(Mode, Precision,
                                             const std::string& device_type) const override {
    if (auto why = unavailable_reason()) return why;
    if (device_type != "cuda") return "cudagraphs needs a CUDA device (--devices cuda)";
    return std::nullopt;
  }
  std::optional<std::string> unsupported_reason(const Manifest& manifest,
                                                const BackendRequest& request) const override {
    if (!request.device.is_cuda()) return "cudagraphs needs a CUDA device (--devices cuda)";
    return make_eager_backend()->unsupported_reason(manifest, request);
  }
  std::vector<OptimizationSwitch> switches() const override {
    std::vector<OptimizationSwitch> switches = {
        {"cudagraphs", "CUDA graph capture and replay (off: the eager reference itself)", "cuda", ""}};
    for (auto& s : capture_rewrite_switches()) switches.push_back(std::move(s));
    return switches;
  }
  std::unique_ptr<Executable> prepare(const Manifest& manifest, const BackendRequest& request,
                                      const std::vector<c10::IValue>& example_inputs) override {
    // The eager reference's module (eager.cpp), rewritten where that lets a CUDA graph hold it.
    auto module = load_torchscript_for(manifest, request);
    rewrite_for_capture(module, request, manifest.name);
    auto eager = std::make_unique<TorchScriptExecutable>(std::move(module), manifest, request,
                                                         /*optimize=*/false);
    BackendRequest capture = request;
    capture.cudagraphs = request.cudagraphs && request.switch_on("cudagraphs");
    return wrap_in_cuda_graph_if_requested(std::move(eager), capture, example_inputs);
  }
};

}  // namespace

std::unique_ptr<Backend> make_cudagraphs_backend() { return std::make_unique<CudaGraphsBackend>(); }

}  // namespace zoobench
