// Finds the operators in a TorchScript module that wait for the device and read a value back
// to the host (nonzero, item, float(tensor), torchvision::nms, ...): a CUDA graph cannot hold
// them, so capturing such a module can only fail. Upstream Inductor makes the same check
// before it captures ("skipping cudagraphs due to ..."). Checking first also keeps a failed
// capture from happening at all: on vision_maskrcnn with the jit backend the failed capture
// crashed the process (SIGSEGV inside the TorchScript interpreter, 2026-11-30).
#pragma once

#include <torch/script.h>

#include <memory>
#include <string>
#include <vector>

namespace zoobench {

// The host-synchronizing operators reachable from `module.forward` (through submodule methods
// and called functions), each once: the data-dependent ones, then the conversions, each group
// in the order found. Conversions of a tensor to a number (aten::Int, aten::Float, aten::Bool,
// aten::item) count only when the tensor may live on the device: not when it is made from host
// numbers, as tracing makes from tensor sizes.
std::vector<std::string> host_synchronizing_ops(const torch::jit::Module& module);

// The same for one graph and what it calls.
std::vector<std::string> host_synchronizing_ops(const std::shared_ptr<torch::jit::Graph>& graph);

}  // namespace zoobench
