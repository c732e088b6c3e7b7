// `cudagraphs`: the eager reference captured into a CUDA graph and replayed, like upstream's
// `cudagraphs` backend: what graph capture alone buys, without any compiler.
#include "zoobench/backends/builtin_backends.h"
#include "zoobench/backends/cuda_graph_executable.h"
#include "zoobench/util/compat.h"

namespace zoobench {
namespace {

class CudaGraphsBackend : public Backend {
 public:
  std::string name() const override { return "cudagraphs"; }
  std::string description() const override {
    return "the eager reference captured into a CUDA graph and replayed (CUDA only)";
  }
  std::optional<std::string> unavailable_reason() const override {
    if (!compat::kHasCuda) return "cudagraphs needs CUDA; this zoobench was built against a CPU-only LibTorch";
    return std::nullopt;
  }
  std::optional<std::string> unsupported_reason(const Manifest& manifest,
                                                const BackendRequest& request) const override {
    if (!request.device.is_cuda()) return "cudagraphs needs a CUDA device (--devices cuda)";
    return make_eager_backend()->unsupported_reason(manifest, request);
  }
  std::unique_ptr<Executable> prepare(const Manifest& manifest, const BackendRequest& request,
                                      const std::vector<c10::IValue>& example_inputs) override {
    auto eager = make_eager_backend()->prepare(manifest, request, example_inputs);
    return wrap_in_cuda_graph_if_requested(std::move(eager), request, example_inputs);
  }
};

}  // namespace

std::unique_ptr<Backend> make_cudagraphs_backend() { return std::make_unique<CudaGraphsBackend>(); }

}  // namespace zoobench
