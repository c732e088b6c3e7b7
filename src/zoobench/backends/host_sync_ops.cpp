#include "zoobench/backends/host_sync_ops.h"

#include <torch/csrc/jit/api/function_impl.h>

#include <algorithm>

#include "zoobench/util/errors.h"
#include "zoobench/util/text.h"
#include <unordered_map>
#include <unordered_set>

namespace zoobench {
namespace {

using torch::jit::Block;
using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;

// Their output's size depends on the data, or they return host values: always a sync.
const std::unordered_set<std::string>& data_dependent_ops() {
  static const std::unordered_set<std::string> ops = {
      "aten::nonzero",     "aten::nonzero_numpy", "aten::argwhere",     "aten::masked_select",
      "aten::unique",      "aten::_unique",       "aten::_unique2",     "aten::unique_consecutive",
      "aten::unique_dim",  "aten::_local_scalar_dense", "prim::tolist", "aten::tolist",
      "torchvision::nms",  "aten::bincount"};
  return ops;
}

// Tensor-to-number conversions: a sync when the tensor is on the device.
const std::unordered_set<std::string>& to_number_ops() {
  static const std::unordered_set<std::string> ops = {
      "aten::item", "aten::Int", "aten::Float", "aten::Bool", "aten::ScalarImplicit",
      "aten::IntImplicit", "aten::FloatImplicit"};
  return ops;
}

class Screen {
 public:
  // The data-dependent operators first: they say more about the model than the conversions.
  const std::vector<std::string>& data_dependent() const { return data_dependent_; }
  std::vector<std::string> found() const {
    std::vector<std::string> all = data_dependent_;
    all.insert(all.end(), to_number_.begin(), to_number_.end());
    return all;
  }

  void graph(const std::shared_ptr<Graph>& g) {
    if (!g || !seen_graphs_.insert(g.get()).second) return;
    block(g->block());
  }

 private:
  void block(Block* b) {
    for (Node* node : b->nodes()) {
      for (Block* sub : node->blocks()) block(sub);
      const std::string kind = node->kind().toQualString();
      // torch.where(condition) with one argument is nonzero in disguise.
      const bool where_nonzero = kind == "aten::where" && node->inputs().size() == 1;
      if (data_dependent_ops().count(kind) || where_nonzero) {
        note(data_dependent_, kind);
      } else if (is_tensor_to_number(node) && !is_host_value(node->input(0))) {
        note(to_number_, kind);
      } else if (node->kind() == c10::prim::CallMethod) {
        auto cls = node->input(0)->type()->cast<c10::ClassType>();
        if (cls) {
          if (auto* method = cls->findMethod(node->s(c10::attr::name))) callee(*method);
        }
      } else if (node->kind() == c10::prim::CallFunction) {
        if (auto fn = node->input(0)->type()->cast<c10::FunctionType>()) callee(*fn->function());
      }
    }
  }

  void callee(torch::jit::Function& fn) {
    if (fn.isGraphFunction()) graph(torch::jit::toGraphFunction(fn).graph());
  }

  static void note(std::vector<std::string>& list, const std::string& kind) {
    if (std::find(list.begin(), list.end(), kind) == list.end()) list.push_back(kind);
  }

  // Numbers and tensors made on the host: prim::NumToTensor (tracing turns sizes into
  // tensors that way), host-side constants, and arithmetic on nothing but those.
  bool is_host_value(Value* value) {
    if (!value->type()->cast<c10::TensorType>()) return true;
    auto cached = host_values_.find(value);
    if (cached != host_values_.end()) return cached->second;
    host_values_[value] = false;  // no cycles in SSA, but be safe
    bool host = false;
    Node* producer = value->node();
    if (producer->kind() == c10::prim::NumToTensor) {
      host = true;
    } else if (producer->kind() == c10::prim::Constant) {
      auto constant = torch::jit::toIValue(value);
      host = constant && constant->isTensor() && constant->toTensor().device().is_cpu();
    } else if (producer->kind() != c10::prim::Param) {
      bool any_tensor = false;
      host = true;
      for (Value* input : producer->inputs()) {
        if (!input->type()->cast<c10::TensorType>()) continue;
        any_tensor = true;
        if (!is_host_value(input)) {
          host = false;
          break;
        }
      }
      host = host && any_tensor;
    }
    host_values_[value] = host;
    return host;
  }

  std::vector<std::string> data_dependent_;
  std::vector<std::string> to_number_;
  std::unordered_set<const Graph*> seen_graphs_;
  std::unordered_map<const Value*, bool> host_values_;
};

}  // namespace

std::vector<std::string> host_synchronizing_ops(const std::shared_ptr<Graph>& graph) {
  Screen screen;
  screen.graph(graph);
  return screen.found();
}

std::vector<std::string> host_synchronizing_ops(const torch::jit::Module& module) {
  auto forward = module.find_method("forward");
  return forward ? host_synchronizing_ops(forward->graph()) : std::vector<std::string>{};
}

std::vector<std::string> data_dependent_host_ops(const torch::jit::Module& module) {
  auto forward = module.find_method("forward");
  if (!forward) return {};
  Screen screen;
  screen.graph(forward->graph());
  return screen.data_dependent();
}

bool is_tensor_to_number(const torch::jit::Node* node) {
  return to_number_ops().count(node->kind().toQualString()) > 0 && node->inputs().size() == 1;
}

std::string torchscript_innermost_frame(const std::string& message) {
  const std::vector<std::string> lines = split(message, '\n');
  // The traceback's frames: `File "code/__torch__/x.py", line 27, in forward`, a few lines of
  // source, the line that failed, then its "~~~ <--- HERE" marker.
  std::size_t marker = lines.size();
  for (std::size_t i = lines.size(); i-- > 1;) {
    if (lines[i].find("<--- HERE") != std::string::npos) {
      marker = i;
      break;
    }
  }
  if (marker == lines.size()) return first_line(message);
  std::string where;
  for (std::size_t i = marker; i-- > 0;) {
    const std::string line = trim(lines[i]);
    if (!starts_with(line, "File \"")) continue;
    const std::size_t name_end = line.find('"', 6);
    const std::size_t number = line.find("line ", name_end);
    if (name_end == std::string::npos || number == std::string::npos) break;
    std::string name = line.substr(6, name_end - 6);
    if (starts_with(name, "code/__torch__/")) name = name.substr(15);
    const std::size_t number_end = line.find_first_not_of("0123456789", number + 5);
    where = name + ":" + line.substr(number + 5, number_end - number - 5) + " ";
    break;
  }
  return where + "(`" + trim(lines[marker - 1]) + "`)";
}

}  // namespace zoobench
