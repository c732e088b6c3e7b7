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

// Only the data-dependent ones (nonzero, unique, nms, ...): a capture is not even tried with
// them (a failed capture of vision_maskrcnn crashed the process). Whether a conversion reads
// the device is decided when the model runs (cuda_graph_executable.cpp's sync check): from the
// graph alone it cannot be told reliably (a traced size computation is host arithmetic unless a
// device constant joins it).
std::vector<std::string> data_dependent_host_ops(const torch::jit::Module& module);

// A conversion of one tensor to a number (aten::Int, aten::Float, aten::item, ...): a host read
// when the tensor is on the device.
bool is_tensor_to_number(const torch::jit::Node* node);

// Where a TorchScript interpreter error's traceback points last (the innermost frame), as
// "timm/layers/conv2d_same.py:27 (`_11 = int(_10)`)"; the message's first line when it has none.
std::string torchscript_innermost_frame(const std::string& message);

}  // namespace zoobench
