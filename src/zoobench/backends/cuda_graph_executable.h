// CUDA graph capture and replay around another executable (the Ascend suite's aclgraph,
// upstream's `cudagraphs` backend): static input buffers, one capture after a warm-up on a
// side stream, then replay. A capture that fails falls back to running uncaptured, with a
// warning, and the row says so (ExecutionInfo::cudagraphs = "fallback").
#pragma once

#include <memory>
#include <vector>

#include "zoobench/backends/backend.h"

namespace zoobench {

// Wraps `inner` in CUDA graph capture when the request is on CUDA with cudagraphs on, in a
// build with CUDA; otherwise returns `inner` unchanged. The capture itself happens here
// (compile time), using `example_inputs` for the static buffers' shapes.
std::unique_ptr<Executable> wrap_in_cuda_graph_if_requested(std::unique_ptr<Executable> inner,
                                                            const BackendRequest& request,
                                                            const std::vector<c10::IValue>& example_inputs);

}  // namespace zoobench
