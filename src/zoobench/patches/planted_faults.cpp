// The planted-fault patches (test-only) and their graph rewrite.
#include "zoobench/patches/planted_faults.h"

#include <torch/csrc/jit/ir/ir.h>

namespace zoobench::patches {

int perturb_child_output(torch::jit::Module& module, const std::string& child, double factor,
                         double offset) {
  auto graph = module.get_method("forward").graph();
  std::vector<torch::jit::Node*> calls;
  for (torch::jit::Node* node : graph->nodes()) {
    if (node->kind() != torch::jit::prim::CallMethod || node->s(torch::jit::attr::name) != "forward")
      continue;
    torch::jit::Node* owner = node->input(0)->node();
    if (owner->kind() == torch::jit::prim::GetAttr &&
        owner->s(torch::jit::attr::name) == child && owner->input(0) == graph->inputs()[0]) {
      calls.push_back(node);
    }
  }
  for (torch::jit::Node* call : calls) {
    torch::jit::Value* output = call->output();
    torch::jit::WithInsertPoint guard(call->next());
    torch::jit::Value* changed = output;
    if (factor != 1.0) changed = graph->insert(at::aten::mul, {changed, factor});
    if (offset != 0.0) changed = graph->insert(at::aten::add, {changed, offset});
    output->replaceAllUsesAfterNodeWith(changed->node(), changed);
  }
  return static_cast<int>(calls.size());
}

namespace {

Patch planted(const std::string& name, const std::string& child, double factor, double offset,
              const std::string& what) {
  Patch p;
  p.name = name;
  p.description = "test only: " + what + " on the compiled side alone (a planted fault for "
                  "`zoobench bisect`'s tests); never assign it to a real model";
  p.rewrites = {"output of child `" + child + "` -> " + what};
  p.applies = "at load, compiled side only";
  p.compiled_only = true;
  p.apply = [] { return Registrations{}; };  // a graph rewrite only: nothing to register
  p.rewrite = [child, factor, offset](torch::jit::Module& module) {
    return perturb_child_output(module, child, factor, offset);
  };
  return p;
}

}  // namespace

std::vector<Patch> planted_fault_patches() {
  return {planted("test_scale_planted", "planted", 1.5, 0.0, "output x 1.5"),
          planted("test_offset_pair_a", "pair_a", 1.0, 0.006, "output + 0.006"),
          planted("test_offset_pair_b", "pair_b", 1.0, 0.006, "output + 0.006")};
}

}  // namespace zoobench::patches
