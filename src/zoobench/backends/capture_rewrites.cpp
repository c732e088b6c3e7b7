// The capture rewrites (capture_rewrites.h) and the operator the mask rewrite calls.
#include "zoobench/backends/capture_rewrites.h"

#include <ATen/TensorIndexing.h>
#include <torch/csrc/jit/ir/alias_analysis.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/library.h>

#include "zoobench/backends/host_sync_ops.h"
#include "zoobench/util/log.h"
#include "zoobench/zoo/model_files.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace zoobench {
namespace {

using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;

bool is_tensor(const Value* v) { return v->type()->cast<c10::TensorType>() != nullptr; }

// Elementwise arithmetic that size computations trace to: it runs where its tensor inputs are.
bool is_scalar_arithmetic(const Node* node) {
  static const std::unordered_set<std::string> kinds = {
      "aten::add", "aten::sub", "aten::rsub", "aten::mul", "aten::div", "aten::floor_divide",
      "aten::remainder", "aten::fmod", "aten::ceil", "aten::floor", "aten::round", "aten::trunc",
      "aten::neg", "aten::abs", "aten::clamp", "aten::clamp_min", "aten::clamp_max",
      "aten::maximum", "aten::minimum", "aten::pow", "aten::sqrt", "aten::eq", "aten::ne",
      "aten::lt", "aten::le", "aten::gt", "aten::ge"};
  return node->blocks().empty() && node->outputs().size() == 1 &&
         kinds.count(node->kind().toQualString()) > 0;
}

class SizeArithmetic {
 public:
  // Every use of `v` is a number conversion or arithmetic whose result is used only so.
  bool only_feeds_numbers(Value* v) {
    auto [it, fresh] = feeds_numbers_.emplace(v, false);
    if (!fresh) return it->second;
    bool ok = !v->uses().empty();
    for (const auto& use : v->uses()) {
      Node* user = use.user;
      if (is_tensor_to_number(user)) continue;
      if (!is_scalar_arithmetic(user) || !only_feeds_numbers(user->output())) {
        ok = false;
        break;
      }
    }
    return feeds_numbers_[v] = ok;
  }

  // `v` is computed from sizes (prim::NumToTensor) and 0-dim constants by arithmetic alone.
  bool from_sizes_and_scalars(Value* v) {
    auto [it, fresh] = from_sizes_.emplace(v, false);
    if (!fresh) return it->second;
    Node* producer = v->node();
    bool ok = false;
    if (producer->kind() == c10::prim::NumToTensor) {
      ok = true;
    } else if (auto constant = tensor_constant(v)) {
      ok = constant->dim() == 0;
    } else if (is_scalar_arithmetic(producer)) {
      ok = true;
      for (Value* input : producer->inputs()) {
        if (is_tensor(input) && !from_sizes_and_scalars(input)) {
          ok = false;
          break;
        }
      }
    }
    return from_sizes_[v] = ok;
  }

 private:
  std::unordered_map<Value*, bool> feeds_numbers_;
  std::unordered_map<Value*, bool> from_sizes_;
};

}  // namespace

int keep_size_arithmetic_on_host(Graph& graph) {
  SizeArithmetic analysis;
  int changed = 0;
  for (Node* node : torch::jit::findAllNodes(graph, c10::prim::Constant, /*recurse=*/true)) {
    if (node->outputs().size() != 1) continue;
    Value* constant = node->output();
    auto tensor = tensor_constant(constant);
    if (!tensor || tensor->dim() != 0 || tensor->device().is_cpu()) continue;
    Value* on_host = nullptr;
    // Copy the uses first: replacing inputs edits the list being walked.
    const auto uses = constant->uses();
    for (const auto& use : uses) {
      Node* user = use.user;
      if (!is_scalar_arithmetic(user) || !analysis.from_sizes_and_scalars(user->output()) ||
          !analysis.only_feeds_numbers(user->output()))
        continue;
      if (on_host == nullptr) {
        torch::jit::WithInsertPoint here(node);
        on_host = graph.insertConstant(tensor->cpu());
      }
      user->replaceInput(use.offset, on_host);
      ++changed;
    }
  }
  return changed;
}

int index_put_masks_to_masked_fill(Graph& graph) {
  static const auto in_place = c10::Symbol::fromQualString("zoobench_capture::index_put_bool_mask_");
  static const auto out_of_place = c10::Symbol::fromQualString("zoobench_capture::index_put_bool_mask");
  std::vector<Node*> sites;
  for (c10::Symbol kind : {c10::aten::index_put_, c10::aten::index_put}) {
    for (Node* node : torch::jit::findAllNodes(graph, kind, /*recurse=*/true)) sites.push_back(node);
  }
  int changed = 0;
  for (Node* node : sites) {
    if (node->inputs().size() != 4) continue;
    Node* indices = node->input(1)->node();
    auto accumulate = torch::jit::constant_as<bool>(node->input(3));
    // One index tensor, accumulate=False: `t[mask] = v`. Whether it is a boolean mask of t's
    // shape is known only when it runs, so the operator checks and falls back to index_put.
    if (indices->kind() != c10::prim::ListConstruct || indices->inputs().size() != 1 ||
        !accumulate || *accumulate)
      continue;
    torch::jit::WithInsertPoint here(node);
    Node* replacement = graph.create(node->kind() == c10::aten::index_put_ ? in_place : out_of_place,
                                     {node->input(0), indices->input(0), node->input(2)});
    graph.insertNode(replacement);
    replacement->output()->setType(node->output()->type());
    node->output()->replaceAllUsesWith(replacement->output());
    node->destroy();
    if (indices->output()->uses().empty()) indices->destroy();
    ++changed;
  }
  return changed;
}

int fold_constant_copies(const std::shared_ptr<Graph>& graph) {
  std::vector<Node*> copies;
  for (Node* node : torch::jit::findAllNodes(*graph, c10::aten::to, /*recurse=*/true)) {
    auto source = tensor_constant(node->input(0));
    if (node->outputs().size() == 1 && source && source->device().is_cpu() &&
        std::all_of(node->inputs().begin(), node->inputs().end(),
                    [](Value* v) { return v->node()->kind() == c10::prim::Constant; }))
      copies.push_back(node);
  }
  if (copies.empty()) return 0;
  {
    // Decided before the graph changes: the alias analysis holds its values.
    torch::jit::AliasDb aliases(graph);
    copies.erase(std::remove_if(copies.begin(), copies.end(),
                                [&](Node* node) {
                                  return aliases.hasWriters(node->output()) ||
                                         aliases.mayContainAlias(node->output(), graph->outputs());
                                }),
                 copies.end());
  }
  int folded = 0;
  for (Node* node : copies) {
    auto result = torch::jit::runNodeIfInputsAreConstant(node);
    if (!result || result->size() != 1 || !(*result)[0].isTensor()) continue;
    torch::jit::WithInsertPoint here(node);
    Value* constant = graph->insertConstant((*result)[0].toTensor());
    constant->setType(node->output()->type());
    node->output()->replaceAllUsesWith(constant);
    std::unordered_set<Node*> inputs;  // a constant may feed the copy twice (two Nones)
    for (Value* input : node->inputs()) inputs.insert(input->node());
    node->destroy();
    for (Node* input : inputs) {
      if (input->output()->uses().empty()) input->destroy();
    }
    ++folded;
  }
  return folded;
}

CaptureRewriteCounts apply_capture_rewrites(torch::jit::Module& module, const CaptureRewriteSwitches& on) {
  CaptureRewriteCounts counts;
  for_each_method_graph(module, [&](const std::shared_ptr<Graph>& graph) {
    // First, so that a folded 0-dim device constant that feeds only size arithmetic is then
    // moved back to the host by the next rewrite.
    if (on.constant_copies) counts.folded_copies += fold_constant_copies(graph);
    if (on.host_size_arithmetic) counts.host_constants += keep_size_arithmetic_on_host(*graph);
    if (on.mask_fill_index_put) counts.masked_fills += index_put_masks_to_masked_fill(*graph);
  });
  return counts;
}

std::vector<OptimizationSwitch> capture_rewrite_switches() {
  return {
      {"host_size_arithmetic",
       "size arithmetic kept on the host: 0-dim device constants that feed only int()/float() "
       "conversions replaced by CPU copies (no host read of the device)",
       "cuda", "cudagraphs"},
      {"mask_fill_index_put",
       "t[mask] = v (index_put_ with one boolean mask of t's shape) as a masked fill, without "
       "nonzero's host read",
       "cuda", "cudagraphs"},
      {"constant_copies",
       "copies of tensor constants (a CPU constant's .to(cuda) on every call, which waits for "
       "the device) made once at load",
       "cuda", "cudagraphs"},
  };
}

void rewrite_for_capture(torch::jit::Module& module, const BackendRequest& request,
                         const std::string& model) {
  if (!request.device.is_cuda() || !request.cudagraphs || !request.switch_on("cudagraphs")) return;
  CaptureRewriteSwitches on;
  on.host_size_arithmetic = request.switch_on("host_size_arithmetic");
  on.mask_fill_index_put = request.switch_on("mask_fill_index_put");
  on.constant_copies = request.switch_on("constant_copies");
  const CaptureRewriteCounts counts = apply_capture_rewrites(module, on);
  if (counts.host_constants + counts.masked_fills + counts.folded_copies > 0) {
    log::info("{}: for CUDA-graph capture, {} size-arithmetic constant uses moved to the host, {} "
              "boolean-mask index_put_ as masked fills, {} copies of constants made once",
              model, counts.host_constants, counts.masked_fills, counts.folded_copies);
  }
}

namespace {

bool is_full_bool_mask(const at::Tensor& self, const at::Tensor& mask, const at::Tensor& value) {
  return mask.scalar_type() == at::kBool && mask.sizes() == self.sizes() && value.dim() == 0;
}

// The mask's elements set to `value` without finding them: where() on the device for a device
// value (masked_fill_ would read it back to the host), masked_fill_ for a host one.
at::Tensor& fill_where(at::Tensor& self, const at::Tensor& mask, const at::Tensor& value) {
  if (value.device().is_cpu()) return self.masked_fill_(mask, value);
  return self.copy_(at::where(mask, value.to(self.scalar_type()), self));
}

at::Tensor& index_put_bool_mask_(at::Tensor& self, const at::Tensor& mask, const at::Tensor& value) {
  if (is_full_bool_mask(self, mask, value)) return fill_where(self, mask, value);
  return self.index_put_({at::indexing::TensorIndex(mask)}, value);
}

at::Tensor index_put_bool_mask(const at::Tensor& self, const at::Tensor& mask, const at::Tensor& value) {
  at::Tensor out = self.clone();
  return index_put_bool_mask_(out, mask, value);
}

}  // namespace

// Composite: autograd goes through the ATen ops it calls, so training graphs work too.
TORCH_LIBRARY(zoobench_capture, m) {
  m.def("index_put_bool_mask_(Tensor(a!) self, Tensor mask, Tensor value) -> Tensor(a!)");
  m.def("index_put_bool_mask(Tensor self, Tensor mask, Tensor value) -> Tensor");
  m.impl("index_put_bool_mask_", c10::DispatchKey::CompositeImplicitAutograd, TORCH_FN(index_put_bool_mask_));
  m.impl("index_put_bool_mask", c10::DispatchKey::CompositeImplicitAutograd, TORCH_FN(index_put_bool_mask));
}

}  // namespace zoobench
