// Opening a model's verified files on a device: the TorchScript module of a role and the
// example inputs. Each call loads afresh (manifests may say deepcopy: false; reloading is how
// every backend gets its own, independent copy of the weights).
#pragma once

#include <torch/script.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "zoobench/zoo/manifest.h"
#include "zoobench/zoo/run_config.h"

namespace zoobench {

// The module for `role` ("eval"/"train") on `device`, after checking its sha256. Throws
// ModelLoadError (missing role, corrupt file, TorchScript that does not load: the reason
// carries the first line of LibTorch's message, e.g. an unknown custom op).
torch::jit::Module load_torchscript(const Manifest& manifest, const std::string& role,
                                    const c10::Device& device);
// The module in `bytes` (read_verified_artifact's, of `artifact`) on `device`: what
// load_torchscript loads once the file is read and checked. The path is never opened again.
torch::jit::Module load_torchscript_bytes(const std::string& bytes, const Artifact& artifact,
                                          const c10::Device& device);

// The tensor constants of a file traced on CUDA, loaded without a map_location, are where the
// trace had them: on the GPU those the model made there, on the CPU the 0-dim ones it made
// from Python numbers (`torch.tensor(0.5)`, a scale computed from a size), which a trace
// records as constants. On the CPU such a tensor is a scalar to a CUDA kernel, as it is in
// Python; moved to the GPU (a map_location moves every tensor) it turns each op that uses it
// into a broadcasting kernel that reads it per element (docs/performance.md: the kernel
// listings of the Python module against the TorchScript eager reference). This moves only constants
// on another GPU than `device` (a file traced on cuda:0 run on cuda:1); the caller moves the
// weights. load_torchscript applies it; returns how many constants moved.
int keep_trace_devices(torch::jit::Module& module, const c10::Device& device);

// The tensor a prim::Constant holds, or nullopt for any other value.
std::optional<at::Tensor> tensor_constant(const torch::jit::Value* value);

// Calls `visit` with each method graph of `module` and its submodules, once per graph: the
// instances of one class (a model's twelve identical layers) share their methods' graphs, so a
// graph pass walks each once.
void for_each_method_graph(
    const torch::jit::Module& module,
    const std::function<void(const std::shared_ptr<torch::jit::Graph>&)>& visit);

// Traced convolutions are recorded as aten::_convolution with the cuDNN switches of the moment
// of tracing as constants (benchmark, deterministic, cudnn_enabled, allow_tf32): a file traced
// on CUDA with PyTorch's defaults runs its convolutions in TF32 and never in benchmark mode,
// whatever the run asks for. This rewrites each into the aten::conv*d op that reads the switches
// when it runs (PyTorch's own rewrite, which freezing also applies), in every method of every
// submodule, so accuracy runs get float32 convolutions and performance runs benchmark mode.
// load_torchscript applies it; returns how many convolutions changed.
int follow_run_convolution_settings(torch::jit::Module& module);

// The role a mode runs: "train" for training when exported, else "eval".
std::string torchscript_role(const Manifest& manifest, Mode mode);

// The saved example inputs (a flat tuple of tensors) on `device`, after checking sha256.
std::vector<c10::IValue> load_inputs(const Manifest& manifest, const c10::Device& device);
// The inputs in `bytes` (read_verified_artifact's, of the file `path`, which names it in errors).
std::vector<c10::IValue> load_inputs_bytes(const std::string& bytes, const std::string& path,
                                           const c10::Device& device);

// Casts a module's floating parameters/buffers and the floating inputs to `dtype` (in place for
// the module). Integer tensors (ids, masks) are left alone.
void cast_module(torch::jit::Module& module, c10::ScalarType dtype);
std::vector<c10::IValue> cast_inputs(const std::vector<c10::IValue>& inputs, c10::ScalarType dtype);

// A float64 run of a traced model (the golden run) fails where the trace recorded a cast to
// float32 as a constant: `x.to(value.dtype)` or `.float()` in HuggingFace's attention (GPT-2,
// GPT-Neo, OPT, LayoutLM) and llama's rotary embedding become `aten::to(x, 6)`, and the next
// matmul meets float32 and float64 operands. This makes every float32 dtype constant that an
// operator takes as its dtype argument float64, in every method of every submodule, so the
// model computes in float64 throughout. For a freshly loaded module (an executor keeps the plan
// of its first run); returns how many constants changed.
int widen_float_dtype_constants(torch::jit::Module& module);

// Deep copies of the inputs (tensors cloned, keeping strides), so a run that mutates its
// inputs cannot change what the next run sees.
std::vector<c10::IValue> clone_inputs(const std::vector<c10::IValue>& inputs);

}  // namespace zoobench
