// Loading verified TorchScript and inputs, from the bytes whose sha256 was checked.
#include "zoobench/zoo/model_files.h"

#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/graph_rewrite_helper.h>

#include <unordered_set>

#include "zoobench/serialization/bytes_reader.h"
#include "zoobench/serialization/torch_save.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/log.h"

namespace zoobench {

std::string torchscript_role(const Manifest& manifest, Mode mode) {
  if (mode == Mode::kTraining && manifest.artifact("train") != nullptr) return "train";
  return "eval";
}

torch::jit::Module load_torchscript(const Manifest& manifest, const std::string& role,
                                    const c10::Device& device) {
  const Artifact* artifact = manifest.artifact(role);
  if (artifact == nullptr) {
    throw ModelLoadError(manifest.name + " has no '" + role + "' artifact; re-export it" +
                         (role == "train" ? " with --training" : ""));
  }
  return load_torchscript_bytes(
      read_verified_artifact(artifact->path, artifact->sha256, "TorchScript"), *artifact, device);
}

torch::jit::Module load_torchscript_bytes(const std::string& bytes, const Artifact& artifact,
                                          const c10::Device& device) {
  using serialization::read_adapter_over;
  torch::jit::Module module;
  try {
    // A file traced on CUDA run on CUDA: every tensor where the file has it, so the constants
    // the trace left on the CPU stay there (keep_trace_devices says why), then the weights
    // and any constant of another GPU onto the run's. Otherwise everything onto the device.
    const bool traced_on_cuda = artifact.device.rfind("cuda", 0) == 0;
    if (device.is_cuda() && traced_on_cuda) {
      try {
        module = torch::jit::load(read_adapter_over(bytes));
      } catch (...) {
        // Saved from a GPU this machine does not have (cuda:1 on a one-GPU machine): mapped.
        log::warn("{}: {}; loading it with every tensor on {}", artifact.path,
                  first_line(current_exception_message()), device.str());
        module = torch::jit::load(read_adapter_over(bytes), device);
      }
      module.to(device);
      keep_trace_devices(module, device);
    } else {
      module = torch::jit::load(read_adapter_over(bytes), device);
    }
  } catch (...) {
    throw ModelLoadError("cannot load " + artifact.path + ": " +
                         first_line(current_exception_message()));
  }
  follow_run_convolution_settings(module);
  return module;
}

int keep_trace_devices(torch::jit::Module& module, const c10::Device& device) {
  int moved = 0;
  for_each_method_graph(module, [&](const std::shared_ptr<torch::jit::Graph>& graph) {
    for (torch::jit::Node* node : torch::jit::findAllNodes(*graph, c10::prim::Constant, /*recurse=*/true)) {
      const std::optional<at::Tensor> constant = tensor_constant(node->output());
      if (!constant || !constant->is_cuda()) continue;
      // "cuda" without an index is the current GPU, where the weights went.
      if (!device.has_index() || constant->device().index() == device.index()) continue;
      node->t_(c10::attr::value, constant->to(device));
      ++moved;
    }
  });
  return moved;
}

std::optional<at::Tensor> tensor_constant(const torch::jit::Value* value) {
  if (value->node()->kind() != c10::prim::Constant || !value->type()->cast<c10::TensorType>()) return std::nullopt;
  const std::optional<c10::IValue> constant = torch::jit::toIValue(value);
  if (!constant || !constant->isTensor()) return std::nullopt;
  return constant->toTensor();
}

void for_each_method_graph(
    const torch::jit::Module& module,
    const std::function<void(const std::shared_ptr<torch::jit::Graph>&)>& visit) {
  std::unordered_set<const torch::jit::Graph*> seen;
  for (const auto& submodule : module.modules()) {
    for (const auto& method : submodule.get_methods()) {
      std::shared_ptr<torch::jit::Graph> graph = method.graph();
      if (seen.insert(graph.get()).second) visit(graph);
    }
  }
}

int follow_run_convolution_settings(torch::jit::Module& module) {
  static const c10::Symbol kTraced = c10::Symbol::fromQualString("aten::_convolution");
  auto count = [](const std::shared_ptr<torch::jit::Graph>& graph) {
    return static_cast<int>(torch::jit::findAllNodes(*graph, kTraced, /*recurse=*/true).size());
  };
  int rewritten = 0;
  for_each_method_graph(module, [&](const std::shared_ptr<torch::jit::Graph>& graph) {
    const int before = count(graph);
    if (before == 0) return;
    std::shared_ptr<torch::jit::Graph> rewritable = graph;  // the pass takes a non-const one
    torch::jit::graph_rewrite_helper::replaceConvolutionWithAtenConv(rewritable);
    rewritten += before - count(graph);
  });
  return rewritten;
}

namespace {

// Whether schema argument `argument` is a dtype: ScalarType or ScalarType?, or an int named
// dtype (aten::to's prim_dtype overload, which `torch.to(x, 6)` in saved code may resolve to).
bool is_dtype_argument(const c10::Argument& argument) {
  c10::TypePtr type = argument.real_type();
  if (const auto optional = type->cast<c10::OptionalType>()) type = optional->getElementType();
  return type->kind() == c10::TypeKind::ScalarTypeType ||
         (type->kind() == c10::TypeKind::IntType && argument.name() == "dtype");
}

// The float32 dtype constants among `node`'s dtype arguments replaced by float64 ones, and
// likewise in the blocks nested in it; returns how many.
int widen_float_dtype_arguments(torch::jit::Node* node) {
  int widened = 0;
  for (torch::jit::Block* block : node->blocks()) {
    for (torch::jit::Node* inner : block->nodes()) widened += widen_float_dtype_arguments(inner);
  }
  const c10::FunctionSchema* schema = node->maybeSchema();
  // aten::view(Tensor, ScalarType) (PyTorch 2.x) reinterprets the bytes: its dtype is not a
  // precision.
  if (schema == nullptr || node->kind() == c10::aten::view) return widened;
  const auto& arguments = schema->arguments();
  for (std::size_t i = 0; i < arguments.size() && i < node->inputs().size(); ++i) {
    torch::jit::Value* input = node->input(i);
    if (!is_dtype_argument(arguments[i]) || input->node()->kind() != c10::prim::Constant) continue;
    const auto value = torch::jit::toIValue(input);
    if (!value || !value->isInt() || value->toInt() != static_cast<int64_t>(c10::kFloat)) continue;
    torch::jit::WithInsertPoint here(node);
    node->replaceInput(i, node->owningGraph()->insertConstant(static_cast<int64_t>(c10::kDouble)));
    ++widened;
  }
  return widened;
}

}  // namespace

int widen_float_dtype_constants(torch::jit::Module& module) {
  int widened = 0;
  for_each_method_graph(module, [&](const std::shared_ptr<torch::jit::Graph>& graph) {
    for (torch::jit::Node* node : graph->nodes()) widened += widen_float_dtype_arguments(node);
  });
  return widened;
}

std::vector<c10::IValue> load_inputs(const Manifest& manifest, const c10::Device& device) {
  return load_inputs_bytes(
      read_verified_artifact(manifest.inputs_path, manifest.inputs_sha256, "inputs"),
      manifest.inputs_path, device);
}

std::vector<c10::IValue> load_inputs_bytes(const std::string& bytes, const std::string& path,
                                           const c10::Device& device) {
  c10::IValue value;
  try {
    value = serialization::load_torch_save_bytes(bytes, path, device);
  } catch (...) {
    throw ModelLoadError("cannot read inputs " + path + ": " +
                         first_line(current_exception_message()));
  }
  std::vector<c10::IValue> inputs;
  if (value.isTuple()) {
    for (const auto& element : value.toTupleRef().elements()) inputs.push_back(element);
  } else if (value.isList()) {
    for (const auto& element : value.toListRef()) inputs.push_back(element);
  } else {
    inputs.push_back(value);
  }
  return inputs;
}

void cast_module(torch::jit::Module& module, c10::ScalarType dtype) {
  // Not Module::to(dtype): unlike nn.Module.to, it casts integer buffers too (batch norm's
  // num_batches_tracked, HuggingFace's position_ids, which must stay int64 to index an embedding).
  // So each floating parameter and buffer is cast in place, as Module::to does it (set_data).
  c10::NoGradGuard no_grad;
  auto cast = [dtype](at::Tensor t) {
    if (t.is_floating_point() && t.scalar_type() != dtype) t.set_data(t.to(dtype));
  };
  for (const auto& parameter : module.parameters()) cast(parameter);
  for (const auto& buffer : module.buffers()) cast(buffer);
}

std::vector<c10::IValue> cast_inputs(const std::vector<c10::IValue>& inputs, c10::ScalarType dtype) {
  std::vector<c10::IValue> out;
  out.reserve(inputs.size());
  for (const auto& input : inputs) {
    if (input.isTensor() && input.toTensor().is_floating_point()) {
      out.emplace_back(input.toTensor().to(dtype));
    } else {
      out.push_back(input);
    }
  }
  return out;
}

std::vector<c10::IValue> clone_inputs(const std::vector<c10::IValue>& inputs) {
  std::vector<c10::IValue> out;
  out.reserve(inputs.size());
  for (const auto& input : inputs) {
    if (input.isTensor()) {
      out.emplace_back(input.toTensor().clone(at::MemoryFormat::Preserve));
    } else {
      out.push_back(input);
    }
  }
  return out;
}

}  // namespace zoobench
