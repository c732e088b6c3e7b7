// Factories of the backends zoobench ships (internal to backends/; the registry lists them).
#pragma once

#include <memory>

#include <torch/script.h>

#include "zoobench/backends/backend.h"

namespace zoobench {

// What the TorchScript backends (eager, jit) share: they need a TorchScript artifact, and they
// load the one the mode uses, let the request's hook see it, and cast it to the request's dtype
// (to float64, the golden run, with the trace's float32 casts widened too).
std::optional<std::string> torchscript_unsupported_reason(const Manifest& manifest);
torch::jit::Module load_torchscript_for(const Manifest& manifest, const BackendRequest& request);

std::unique_ptr<Backend> make_eager_backend();
std::unique_ptr<Backend> make_jit_backend();
std::unique_ptr<Backend> make_cudagraphs_backend();
std::unique_ptr<Backend> make_aot_inductor_backend();

}  // namespace zoobench
