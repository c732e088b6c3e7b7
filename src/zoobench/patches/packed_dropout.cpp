// zoobench::dropout_packed: operator declarations, autograd, the C++ entry points, and the
// TorchScript rewrite of aten::dropout.
#include "zoobench/patches/packed_dropout.h"

#include <torch/autograd.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/inliner.h>

#include <algorithm>
#include <map>

#include "zoobench/util/log.h"

namespace zoobench::patches {
namespace {

using ForwardFn = std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, double, bool);
using BackwardFn = at::Tensor(const at::Tensor&, const at::Tensor&, double);

// Looked up per call: the operators exist only while the patch is active.
c10::OperatorHandle find_op(const char* name) {
  auto op = c10::Dispatcher::singleton().findSchema({name, ""});
  TORCH_CHECK(op.has_value(), name, " is not registered: apply the packed_dropout patch");
  return *op;
}

std::tuple<at::Tensor, at::Tensor> call_forward(const at::Tensor& x, double p, bool train) {
  return find_op("zoobench::dropout_packed").typed<ForwardFn>().call(x, p, train);
}

at::Tensor call_backward(const at::Tensor& grad, const at::Tensor& mask_bits, double p) {
  return find_op("zoobench::dropout_packed_backward").typed<BackwardFn>().call(grad, mask_bits, p);
}

class DropoutPackedFunction : public torch::autograd::Function<DropoutPackedFunction> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx,
                                                const at::Tensor& x, double p, bool train) {
    at::Tensor y, mask;
    {
      at::AutoDispatchBelowADInplaceOrView guard;
      std::tie(y, mask) = call_forward(x, p, train);
    }
    ctx->mark_non_differentiable({mask});
    // Only the packed mask is kept for backward: numel / 8 bytes, not x and not a byte mask.
    ctx->save_for_backward({mask});
    ctx->saved_data["p"] = p;
    return {y, mask};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const at::Tensor mask = ctx->get_saved_variables()[0];
    // Through the dispatcher with autograd, so double backward works.
    return {call_backward(grads[0], mask, ctx->saved_data["p"].toDouble()), at::Tensor(),
            at::Tensor()};
  }
};

// grad -> grad * mask * scale is linear in grad, so its derivative is itself.
class DropoutPackedBackwardFunction
    : public torch::autograd::Function<DropoutPackedBackwardFunction> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx,
                                                const at::Tensor& grad, const at::Tensor& mask_bits,
                                                double p) {
    ctx->save_for_backward({mask_bits});
    ctx->saved_data["p"] = p;
    at::AutoDispatchBelowADInplaceOrView guard;
    return {call_backward(grad, mask_bits, p)};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const at::Tensor mask = ctx->get_saved_variables()[0];
    return {call_backward(grads[0], mask, ctx->saved_data["p"].toDouble()), at::Tensor(),
            at::Tensor()};
  }
};

std::tuple<at::Tensor, at::Tensor> forward_autograd(const at::Tensor& x, double p, bool train) {
  auto outputs = DropoutPackedFunction::apply(x, p, train);
  return {outputs[0], outputs[1]};
}

at::Tensor backward_autograd(const at::Tensor& grad, const at::Tensor& mask_bits, double p) {
  return DropoutPackedBackwardFunction::apply(grad, mask_bits, p)[0];
}

// Composite: the channel mask is dropout_packed of N * C ones, whose output (keep / (1 - p) per
// channel) scales x. Autograd goes through the multiplication, which keeps that N * C scale for
// the backward, not a mask of x's size.
std::tuple<at::Tensor, at::Tensor> feature_forward(const at::Tensor& x, double p, bool train) {
  TORCH_CHECK(x.dim() >= 2,
              "feature_dropout_packed: x must have at least 2 dimensions [N, C, ...], got ",
              x.sizes());
  if (!train) return call_forward(x, p, false);
  std::vector<int64_t> channel_shape(x.dim(), 1);
  channel_shape[0] = x.size(0);
  channel_shape[1] = x.size(1);
  auto [scale, mask] = call_forward(at::ones({x.size(0) * x.size(1)}, x.options()), p, true);
  return {x * scale.view(channel_shape), mask};
}

// What the rewrite replaces, by what (output 0 of the packed op stands for the ATen result).
struct Replacement {
  const char* aten_kind;
  const char* aten_schema;
  const char* packed_kind;
};
constexpr Replacement kReplacements[] = {
    {"aten::dropout", "aten::dropout(Tensor input, float p, bool train) -> Tensor",
     "zoobench::dropout_packed"},
    {"aten::feature_dropout", "aten::feature_dropout(Tensor input, float p, bool train) -> Tensor",
     "zoobench::feature_dropout_packed"},
};

// Dropout flavours this rewrite leaves to ATen: the in-place forms write into their input, the
// alpha forms keep the activations' mean and variance with another formula.
bool left_alone(const std::string& kind) {
  static const char* const kinds[] = {
      "aten::dropout_",       "aten::feature_dropout_",      "aten::alpha_dropout",
      "aten::alpha_dropout_", "aten::feature_alpha_dropout", "aten::feature_alpha_dropout_"};
  return std::find(std::begin(kinds), std::end(kinds), kind) != std::end(kinds);
}

int rewrite_block(torch::jit::Block* block, std::map<std::string, int>& left) {
  int rewritten = 0;
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    torch::jit::Node* node = *it++;
    for (torch::jit::Block* sub : node->blocks()) rewritten += rewrite_block(sub, left);
    const std::string kind = node->kind().toQualString();
    const Replacement* match = nullptr;
    for (const Replacement& r : kReplacements) {
      if (kind == r.aten_kind) match = &r;
    }
    if (match == nullptr) {
      if (left_alone(kind)) ++left[kind];
      continue;
    }
    if (!node->matches(match->aten_schema)) {
      ++left[kind + " (unexpected signature)"];
      continue;
    }
    const auto packed = c10::Symbol::fromQualString(match->packed_kind);
    torch::jit::Node* replacement = node->owningGraph()->create(packed, node->inputs(), 2);
    replacement->setSourceRange(node->sourceRange());
    replacement->setScope(node->scope());
    replacement->insertBefore(node);
    replacement->output(0)->copyMetadata(node->output());
    replacement->output(1)->setType(c10::TensorType::get());
    node->output()->replaceAllUsesWith(replacement->output(0));
    node->destroy();
    TORCH_CHECK(replacement->maybeOperator() != nullptr, match->packed_kind,
                " does not match its inputs in the rewritten graph");
    ++rewritten;
  }
  return rewritten;
}

int count_calls(torch::jit::Block* block) {
  int n = 0;
  for (torch::jit::Node* node : block->nodes()) {
    if (node->kind() == c10::prim::CallFunction || node->kind() == c10::prim::CallMethod) ++n;
    for (torch::jit::Block* sub : node->blocks()) n += count_calls(sub);
  }
  return n;
}

// One Inline pass inlines each call site with the callee's optimised graph, which is itself
// inlined only while the graph executor's optimisation is on; repeating until no call goes
// away makes the result the same either way.
void inline_fully(torch::jit::Graph& graph) {
  for (int calls = count_calls(graph.block()); calls > 0;) {
    torch::jit::Inline(graph);
    const int left = count_calls(graph.block());
    if (left >= calls) break;  // what is left cannot be inlined (e.g. interface calls)
    calls = left;
  }
}

}  // namespace

Registrations register_packed_dropout_ops() {
  namespace k = dropout_kernels;
  Registrations handles;
  auto def = std::make_unique<torch::Library>(torch::Library::FRAGMENT, "zoobench", c10::nullopt,
                                              __FILE__, __LINE__);
  // CONSERVATIVE: the op draws random numbers, so the JIT must not merge two calls (CSE),
  // drop one or move one across another; FROM_SCHEMA would allow all three.
  def->def(torch::schema(kDropoutPackedSchema, c10::AliasAnalysisKind::CONSERVATIVE));
  def->def(torch::schema(kDropoutPackedBackwardSchema, c10::AliasAnalysisKind::FROM_SCHEMA));
  def->def(torch::schema(kFeatureDropoutPackedSchema, c10::AliasAnalysisKind::CONSERVATIVE));
  handles.push_back(std::move(def));

  auto composite = std::make_unique<torch::Library>(torch::Library::IMPL, "zoobench",
                                                    c10::DispatchKey::CompositeImplicitAutograd,
                                                    __FILE__, __LINE__);
  composite->impl("feature_dropout_packed", &feature_forward);
  handles.push_back(std::move(composite));

  auto cpu = std::make_unique<torch::Library>(torch::Library::IMPL, "zoobench",
                                              c10::DispatchKey::CPU, __FILE__, __LINE__);
  cpu->impl("dropout_packed", &k::forward_cpu);
  cpu->impl("dropout_packed_backward", &k::backward_cpu);
  handles.push_back(std::move(cpu));
#if ZOOBENCH_WITH_CUDA
  auto cuda = std::make_unique<torch::Library>(torch::Library::IMPL, "zoobench",
                                               c10::DispatchKey::CUDA, __FILE__, __LINE__);
  cuda->impl("dropout_packed", &k::forward_cuda);
  cuda->impl("dropout_packed_backward", &k::backward_cuda);
  handles.push_back(std::move(cuda));
#endif
  auto autograd = std::make_unique<torch::Library>(torch::Library::IMPL, "zoobench",
                                                   c10::DispatchKey::Autograd, __FILE__, __LINE__);
  autograd->impl("dropout_packed", &forward_autograd);
  autograd->impl("dropout_packed_backward", &backward_autograd);
  handles.push_back(std::move(autograd));
  return handles;
}

std::tuple<at::Tensor, at::Tensor> dropout_packed(const at::Tensor& x, double p, bool train) {
  return call_forward(x, p, train);
}

at::Tensor dropout_packed_backward(const at::Tensor& grad, const at::Tensor& mask_bits, double p) {
  return call_backward(grad, mask_bits, p);
}

std::tuple<at::Tensor, at::Tensor> feature_dropout_packed(const at::Tensor& x, double p,
                                                          bool train) {
  return find_op("zoobench::feature_dropout_packed").typed<ForwardFn>().call(x, p, train);
}

at::Tensor unpack_dropout_mask(const at::Tensor& mask_bits, at::IntArrayRef sizes) {
  const int64_t numel = c10::multiply_integers(sizes);
  const auto bool_options = mask_bits.options().dtype(at::kBool);
  if (mask_bits.numel() == 0) return at::ones(sizes, bool_options);  // eval mode: all kept
  TORCH_CHECK(mask_bits.numel() == dropout_kernels::mask_bytes(numel),
              "unpack_dropout_mask: ", mask_bits.numel(), " bytes cannot hold the mask of ", numel,
              " elements");
  const at::Tensor shifts = at::arange(8, mask_bits.options().dtype(at::kLong));
  return mask_bits.reshape({-1, 1})
      .to(at::kLong)
      .__rshift__(shifts)
      .bitwise_and(1)
      .to(at::kBool)
      .reshape({-1})
      .narrow(0, 0, numel)
      .reshape(sizes);
}

int rewrite_dropout_to_packed(torch::jit::Module& module) {
  TORCH_CHECK(c10::Dispatcher::singleton().findSchema({"zoobench::dropout_packed", ""}),
              "rewrite_dropout_to_packed: zoobench::dropout_packed is not registered; apply the "
              "packed_dropout patch first");
  int rewritten = 0;
  std::map<std::string, int> left;
  for (const auto& method : module.get_methods()) {
    std::shared_ptr<torch::jit::Graph> graph = method.graph();
    inline_fully(*graph);
    // Folds F.dropout's `if inplace:` on its constant argument, leaving the branch that runs.
    torch::jit::ConstantPropagationImmutableTypes(graph);
    rewritten += rewrite_block(graph->block(), left);
  }
  for (const auto& [kind, count] : left) {
    log::info(
        "packed_dropout: left {} {} site(s) unchanged (aten::dropout and aten::feature_dropout "
        "are rewritten; the in-place and alpha forms are not)",
        count, kind);
  }
  return rewritten;
}

}  // namespace zoobench::patches
