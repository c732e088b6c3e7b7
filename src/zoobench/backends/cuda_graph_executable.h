// CUDA graph capture and replay around another executable (the Ascend suite's aclgraph,
// upstream's `cudagraphs` backend): static input buffers, one capture after a warm-up on a
// side stream, then replay. A capture that fails falls back to running uncaptured, with a
// warning, and the row says so (ExecutionInfo::cudagraphs = "fallback").
#pragma once

#include <memory>
#include <vector>

#include "zoobench/backends/backend.h"
#include "zoobench/util/compat.h"

#if ZOOBENCH_WITH_CUDA
#include <ATen/cuda/CUDAGraph.h>

#include <functional>
#endif

namespace zoobench {

// Wraps `inner` in CUDA graph capture when the request is on CUDA with cudagraphs on, in a
// build with CUDA; otherwise returns `inner` unchanged. The capture itself happens here
// (compile time), using `example_inputs` for the static buffers' shapes.
std::unique_ptr<Executable> wrap_in_cuda_graph_if_requested(std::unique_ptr<Executable> inner,
                                                            const BackendRequest& request,
                                                            const std::vector<c10::IValue>& example_inputs);

#if ZOOBENCH_WITH_CUDA
// A CUDA graph of what `record` launches on the current stream (a non-default one). A capture
// that runs out of memory is tried once more after the caching allocator's unused blocks are
// released; any other failure, or a second one, is thrown.
std::unique_ptr<at::cuda::CUDAGraph> capture_graph(const std::function<void()>& record);
#endif

}  // namespace zoobench
