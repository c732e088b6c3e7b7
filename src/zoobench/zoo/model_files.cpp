// Loading verified TorchScript and inputs.
#include "zoobench/zoo/model_files.h"

#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/graph_rewrite_helper.h>

#include "zoobench/serialization/torch_save.h"
#include "zoobench/util/errors.h"

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
  verify_artifact(artifact->path, artifact->sha256, "TorchScript");
  torch::jit::Module module;
  try {
    module = torch::jit::load(artifact->path, device);
  } catch (...) {
    throw ModelLoadError("cannot load " + artifact->path + ": " + first_line(current_exception_message()));
  }
  follow_run_convolution_settings(module);
  return module;
}

int follow_run_convolution_settings(torch::jit::Module& module) {
  static const c10::Symbol kTraced = c10::Symbol::fromQualString("aten::_convolution");
  auto count = [](const std::shared_ptr<torch::jit::Graph>& graph) {
    return static_cast<int>(torch::jit::findAllNodes(*graph, kTraced, /*recurse=*/true).size());
  };
  int rewritten = 0;
  for (const auto& submodule : module.modules()) {
    for (const auto& method : submodule.get_methods()) {
      std::shared_ptr<torch::jit::Graph> graph = method.graph();
      const int before = count(graph);
      if (before == 0) continue;
      torch::jit::graph_rewrite_helper::replaceConvolutionWithAtenConv(graph);
      rewritten += before - count(graph);
    }
  }
  return rewritten;
}

std::vector<c10::IValue> load_inputs(const Manifest& manifest, const c10::Device& device) {
  verify_artifact(manifest.inputs_path, manifest.inputs_sha256, "inputs");
  c10::IValue value;
  try {
    value = serialization::load_torch_save(manifest.inputs_path, device);
  } catch (...) {
    throw ModelLoadError("cannot read inputs " + manifest.inputs_path + ": " +
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
