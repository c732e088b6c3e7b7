// Child calls recorded through a side-effecting operator, and each child written as a repro.
#include "zoobench/bisect/submodule_capture.h"

#include <ATen/core/stack.h>
#include <fmt/format.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/custom_operator.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <stdexcept>

#include "zoobench/patches/registry.h"
#include "zoobench/runner/selection.h"
#include "zoobench/serialization/pickle.h"
#include "zoobench/serialization/torch_save.h"
#include "zoobench/util/compat.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/files.h"
#include "zoobench/util/ivalue_tree.h"
#include "zoobench/util/log.h"
#include "zoobench/util/sha256.h"
#include "zoobench/util/text.h"
#include "zoobench/zoo/catalog.h"
#include "zoobench/zoo/manifest.h"
#include "zoobench/zoo/model_files.h"
#include "zoobench/zoo/run_config.h"

namespace fs = std::filesystem;

namespace zoobench {
namespace {

using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;

const c10::Symbol& tap_kind() {
  static const c10::Symbol kind = c10::Symbol::fromQualString("zoobench_bisect::tap");
  return kind;
}

// The calls of one run, for one parent object; null outside capture_child_calls.
struct Recording {
  const c10::ivalue::Object* parent = nullptr;
  std::map<std::string, ChildCall> calls;  // by child name
  std::vector<std::string> order;          // child names by first call
};
Recording* g_recording = nullptr;

// zoobench_bisect::tap(key, module, value): "in:<child>" with the call's arguments as a tuple,
// "out:<child>" with its result. Only calls made by the recorded parent object count: a type's
// graph is shared by all its instances (the twelve layers of an encoder).
void tap(torch::jit::Stack& stack) {
  c10::IValue value = torch::jit::pop(stack);
  c10::IValue module = torch::jit::pop(stack);
  const std::string key = torch::jit::pop(stack).toStringRef();
  Recording* recording = g_recording;
  if (recording == nullptr || !module.isObject() || module.toObject().get() != recording->parent) return;
  const bool input = starts_with(key, "in:");
  const std::string child = key.substr(input ? 3 : 4);
  auto [it, first] = recording->calls.try_emplace(child);
  ChildCall& call = it->second;
  if (first) {
    call.name = child;
    recording->order.push_back(child);
  }
  if (input) {
    if (++call.calls == 1) {
      for (const auto& arg : value.toTupleRef().elements()) call.inputs.push_back(clone_tree(arg));
    }
  } else if (call.calls == 1 && call.output.isNone()) {
    call.output = clone_tree(value);
  }
}

// Conservative aliasing: the operator has side effects, so no pass removes it.
torch::jit::RegisterOperators register_tap({torch::jit::Operator(
    "zoobench_bisect::tap(str key, Any module, Any value) -> ()", tap,
    c10::AliasAnalysisKind::CONSERVATIVE)});

bool has_taps(const Graph& graph) {
  return !torch::jit::findAllNodes(const_cast<Graph&>(graph), tap_kind(), /*recurse=*/true).empty();
}

// The dotted path from `self` to the module a call's receiver is ("attention", or "layer.3"
// through a ModuleList, as traced encoders call their layers), or "" when the receiver is not
// reached through attributes of `self` alone.
std::string callee_path(const Node* call, const Value* self) {
  std::vector<std::string> parts;
  for (const Value* v = call->input(0); v != self; v = v->node()->input(0)) {
    if (v->node()->kind() != c10::prim::GetAttr) return "";
    parts.push_back(v->node()->s(c10::attr::name));
  }
  std::reverse(parts.begin(), parts.end());
  return join(parts, ".");
}

// Each `forward` call of a submodule in the methods of `parent`'s type, with the submodule's path.
std::vector<std::pair<Node*, std::string>> submodule_calls(const torch::jit::Module& parent) {
  std::vector<std::pair<Node*, std::string>> calls;
  for (torch::jit::Function* method : parent.type()->methods()) {
    if (!method->isGraphFunction()) continue;
    const std::shared_ptr<Graph> graph = torch::jit::toGraphFunction(*method).graph();
    Value* self = graph->inputs()[0];
    for (Node* call : torch::jit::findAllNodes(*graph, c10::prim::CallMethod, /*recurse=*/true)) {
      if (call->s(c10::attr::name) != "forward" || call->outputs().size() != 1) continue;
      std::string path = callee_path(call, self);
      if (!path.empty()) calls.emplace_back(call, std::move(path));
    }
  }
  return calls;
}

// Taps around every such call.
void instrument(torch::jit::Module& parent) {
  for (torch::jit::Function* method : parent.type()->methods()) {
    if (method->isGraphFunction() && has_taps(*torch::jit::toGraphFunction(*method).graph())) return;
  }
  for (const auto& [call, child] : submodule_calls(parent)) {
    Graph& graph = *call->owningGraph();
    Value* self = graph.inputs()[0];
    {
      torch::jit::WithInsertPoint before(call);
      std::vector<Value*> args(call->inputs().begin() + 1, call->inputs().end());
      Value* tuple = graph.insertNode(graph.createTuple(args))->output();
      Value* key = graph.insertConstant("in:" + child);
      graph.insertNode(graph.create(tap_kind(), {key, self, tuple}, 0));
    }
    torch::jit::WithInsertPoint after(call->next());
    Value* key = graph.insertConstant("out:" + child);
    graph.insertNode(graph.create(tap_kind(), {key, self, call->output()}, 0));
  }
}

std::string path_of(const std::string& parent, const std::string& child) {
  return parent.empty() ? child : parent + "." + child;
}

bool all_tensors(const std::vector<c10::IValue>& values) {
  for (const auto& v : values) {
    if (!v.isTensor()) return false;
  }
  return true;
}

std::string kinds_of(const std::vector<c10::IValue>& values) {
  std::vector<std::string> kinds;
  for (const auto& v : values) kinds.push_back(v.tagKind());
  return join(kinds, ", ");
}

c10::IValue on_cpu(const c10::IValue& v) {
  return map_tensors(v, [](const at::Tensor& t) { return t.cpu(); });
}

// The repro's manifest (docs/formats.md), with `patches` and `submodule_of`.
nlohmann::json repro_manifest(const Manifest& model, const std::string& name, const std::string& path,
                              const ChildCall& call, const std::vector<std::string>& patches,
                              const fs::path& folder, const std::string& device) {
  nlohmann::json spec = nlohmann::json::array();
  for (std::size_t i = 0; i < call.inputs.size(); ++i) {
    const at::Tensor& t = call.inputs[i].toTensor();
    spec.push_back({{"name", fmt::format("input{}", i)},
                    {"dtype", serialization::detail::python_name_of_dtype(t.scalar_type())},
                    {"shape", t.sizes().vec()},
                    {"init", "captured"}});
  }
  return {{"format", "zoobench-manifest/1"},
          {"name", name},
          {"suite", model.suite},
          {"source", fmt::format("zoobench-bisect:{}:{}", model.name, path)},
          {"batch_size", model.batch_size},
          {"artifacts",
           {{"eval",
             {{"path", "eval.pt"},
              {"sha256", sha256_file((folder / "eval.pt").string())},
              {"kind", "torchscript"},
              {"traced_on", device},
              {"method", "submodule"}}}}},
          {"inputs",
           {{"path", "inputs.pt"}, {"sha256", sha256_file((folder / "inputs.pt").string())}, {"spec", spec}}},
          {"outputs", {{"names", nlohmann::json::array()}}},
          {"mutated_inputs", nlohmann::json::array()},
          {"training", {{"loss", "mean_of_floating_outputs"}, {"loss_scale", 1.0}}},
          {"dropout", false},
          {"deepcopy", model.deepcopy},
          {"patches", patches},
          {"submodule_of", {{"model", model.name}, {"path", path}, {"type", call.type}, {"calls", call.calls}}},
          {"versions", model.versions}};
}

}  // namespace

std::string submodule_model_name(const std::string& model, const std::string& path) {
  return model + "@" + path;
}

torch::jit::Module submodule_at(const torch::jit::Module& root, const std::string& path) {
  torch::jit::Module module = root;
  if (path.empty()) return module;
  std::string walked;
  for (const auto& part : split(path, '.')) {
    walked = path_of(walked, part);
    if (!module.hasattr(part) || !module.attr(part).isModule())
      throw std::invalid_argument("the model has no submodule '" + walked + "'");
    module = module.attr(part).toModule();
  }
  return module;
}

std::vector<ChildCall> capture_child_calls(torch::jit::Module& root, const std::string& parent_path,
                                           const std::vector<c10::IValue>& inputs) {
  torch::jit::Module parent = submodule_at(root, parent_path);
  instrument(parent);
  Recording recording;
  recording.parent = parent._ivalue().get();
  struct Active {
    explicit Active(Recording* r) { g_recording = r; }
    ~Active() { g_recording = nullptr; }
  } active(&recording);
  {
    c10::NoGradGuard no_grad;
    torch::jit::GraphOptimizerEnabledGuard eager_reference(false);
    root.forward(clone_inputs(inputs));
  }
  std::vector<ChildCall> calls;
  for (const auto& name : recording.order) {
    ChildCall call = std::move(recording.calls.at(name));
    const auto type_name = submodule_at(parent, name).type()->name();
    call.type = type_name ? type_name->name() : "?";
    calls.push_back(std::move(call));
  }
  return calls;
}

namespace {

// The manifest of the one model `o` names. Throws UsageError.
Manifest manifest_to_capture(const RunOptions& o) {
  if (o.mode != Mode::kInference) throw UsageError("submodules are captured for inference only");
  if (o.only.size() != 1 || o.devices.size() != 1)
    throw UsageError("--capture-children needs one model (--only) and one device");
  const auto found = ZooCatalog::scan(o.zoo_dir).find(o.suite, o.only[0]);
  if (!found) throw UsageError("no model " + o.only[0] + " in suite " + o.suite);
  return read_manifest(found->manifest_path);
}

// Each child `parent` calls saved as a repro's eval.pt under `suite_dir`, by child name.
// Only modules the parent calls: a container (a ModuleList of layers) has no forward to save.
std::map<std::string, fs::path> save_called_children(const torch::jit::Module& parent,
                                                     const std::string& parent_path,
                                                     const std::string& model,
                                                     const fs::path& suite_dir) {
  std::map<std::string, fs::path> folders;
  for (const auto& [call, child] : submodule_calls(parent)) {
    if (folders.count(child) != 0) continue;
    const fs::path folder = suite_dir / submodule_model_name(model, path_of(parent_path, child));
    log::info("capture: saving {}", path_of(parent_path, child));
    fs::create_directories(folder);
    submodule_at(parent, child).save((folder / "eval.pt").string());
    folders[child] = folder;
  }
  return folders;
}

// The same run in float64: the golden side of each child's outputs. On a module loaded
// afresh, as the eager backend's golden run does: the float32 casts a trace recorded are
// widened to float64 only before a module's first run (its executor keeps that run's plan).
std::vector<ChildCall> capture_golden_calls(const Manifest& manifest, const c10::Device& device,
                                            const patches::PatchScope& scope,
                                            const std::string& parent_path,
                                            const std::vector<c10::IValue>& inputs) {
  log::info("capture: running the model in float64");
  torch::jit::Module golden_root = load_torchscript(manifest, "eval", device);
  scope.rewrite(golden_root, /*training=*/false);
  cast_module(golden_root, c10::kDouble);
  widen_float_dtype_constants(golden_root);
  return capture_child_calls(golden_root, parent_path, cast_inputs(inputs, c10::kDouble));
}

// The rest of one child's repro next to its eval.pt: its inputs, its outputs (float64 ones
// when the golden run made the same call) and its manifest.
void write_repro(const Manifest& manifest, const std::string& path, const ChildCall& call,
                 const ChildCall* golden, const std::vector<std::string>& patch_names,
                 const fs::path& folder, const std::string& device) {
  std::vector<c10::IValue> cpu_inputs;
  for (const auto& t : call.inputs) cpu_inputs.push_back(t.toTensor().cpu());
  serialization::save_for_python(c10::ivalue::Tuple::create(cpu_inputs),
                                 (folder / "inputs.pt").string());
  serialization::save_for_python(on_cpu(call.output), (folder / "eager.pt").string());
  if (golden != nullptr)
    serialization::save_for_python(on_cpu(golden->output), (folder / "float64.pt").string());
  const std::string name = folder.filename().string();
  log::info("capture: writing {}", name);
  write_file_atomically(
      (folder / "manifest.json").string(),
      repro_manifest(manifest, name, path, call, patch_names, folder, device).dump(2) + "\n");
}

// The level's zoo index (the checks load its repros as any zoo's models) and the level.json the
// bisect reads: every child the parent called, with its repro or why it has none.
void write_level_files(const std::string& into, const std::string& model,
                       const std::string& parent_path, const nlohmann::json& level,
                       const nlohmann::json& index) {
  fs::create_directories(fs::path(into) / "zoo");
  write_file_atomically(
      (fs::path(into) / "zoo" / "index.json").string(),
      nlohmann::json{{"format", "zoobench-index/1"}, {"models", index}}.dump(2) + "\n");
  write_file_atomically(
      (fs::path(into) / "level.json").string(),
      nlohmann::json{{"model", model}, {"parent", parent_path}, {"children", level}}.dump(2) +
          "\n");
}

}  // namespace

int execute_submodule_capture(const RunOptions& o, const std::string& parent_path,
                              const std::string& into) {
  const Manifest manifest = manifest_to_capture(o);
  const c10::Device device = parse_device(o.devices[0]);
  compat::set_current_device(device);
  compat::set_deterministic_numerics(true);

  torch::jit::Module root = load_torchscript(manifest, "eval", device);
  torch::jit::Module parent = submodule_at(root, parent_path);
  // Each child saved before the patches rewrite the model: a repro's manifest names the
  // patches, and they rewrite it when it loads, as they do the model.
  const fs::path suite_dir = fs::path(into) / "zoo" / manifest.suite;
  std::map<std::string, fs::path> folders =
      save_called_children(parent, parent_path, manifest.name, suite_dir);
  const std::string suites_dir = o.suites_dir.empty() ? default_suites_dir() : o.suites_dir;
  const std::vector<std::string> patch_names =
      o.patches ? load_suite_configs(suites_dir, {manifest.suite})
                      .at(manifest.suite)
                      .patches_for(manifest, o.mode)
                : std::vector<std::string>{};
  patches::PatchScope scope(patch_names);
  scope.rewrite(root, /*training=*/false);

  const c10::ScalarType dtype = parameter_dtype(o.precision);
  if (dtype != c10::kFloat) cast_module(root, dtype);
  const std::vector<c10::IValue> inputs = cast_inputs(load_inputs(manifest, device), dtype);
  // Phase lines: a crash in this child (the log keeps them) then says where it happened.
  log::info("capture: running the model ({} submodules called by {})", folders.size(),
            parent_path.empty() ? "the model" : parent_path);
  std::vector<ChildCall> calls = capture_child_calls(root, parent_path, inputs);
  std::vector<ChildCall> golden =
      capture_golden_calls(manifest, device, scope, parent_path, inputs);

  nlohmann::json level = nlohmann::json::array();
  nlohmann::json index = nlohmann::json::array();
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const ChildCall& call = calls[i];
    const std::string path = path_of(parent_path, call.name);
    const fs::path folder = folders.at(call.name);
    nlohmann::json item = {{"path", path}, {"type", call.type}, {"calls", call.calls}};
    if (!all_tensors(call.inputs)) {
      item["skipped"] = "its inputs are not all tensors (" + kinds_of(call.inputs) + ")";
      remove_tree(folder.string());
      folders.erase(call.name);
      level.push_back(item);
      continue;
    }
    const bool golden_made_it = i < golden.size() && golden[i].name == call.name;
    write_repro(manifest, path, call, golden_made_it ? &golden[i] : nullptr, patch_names, folder,
                device.str());
    const std::string name = folder.filename().string();
    item["folder"] = folder.string();
    item["model"] = name;
    index.push_back(
        {{"name", name}, {"suite", manifest.suite}, {"status", "exported"}, {"reason", ""}});
    level.push_back(item);
    folders.erase(call.name);
  }
  // Saved, but not called by the model.
  for (const auto& [name, folder] : folders) remove_tree(folder.string());
  write_level_files(into, manifest.name, parent_path, level, index);
  return 0;
}

}  // namespace zoobench
