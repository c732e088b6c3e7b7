// The planted-fault patches (test-only) and their graph rewrite.
#include "zoobench/patches/planted_faults.h"

#include <torch/csrc/jit/ir/ir.h>

#include <unordered_set>

namespace zoobench::patches {

int perturb_class_output(torch::jit::Module& module, const std::string& type, double factor,
                         double offset) {
  std::unordered_set<const torch::jit::Graph*> done;
  for (const auto& m : module.modules()) {
    if (m.type()->name()->name() != type) continue;
    auto graph = m.get_method("forward").graph();
    if (!done.insert(graph.get()).second) continue;
    torch::jit::Node* ret = graph->return_node();
    torch::jit::WithInsertPoint guard(ret);
    torch::jit::Value* changed = ret->input(0);
    if (factor != 1.0) changed = graph->insert(at::aten::mul, {changed, factor});
    if (offset != 0.0) changed = graph->insert(at::aten::add, {changed, offset});
    ret->replaceInput(0, changed);
  }
  return static_cast<int>(done.size());
}

namespace {

Patch planted(const std::string& name, const std::string& type, double factor, double offset,
              const std::string& what) {
  Patch p;
  p.name = name;
  p.description = "test only: " + what + " on the compiled side alone (a planted fault for "
                  "`zoobench bisect`'s tests); never assign it to a real model";
  p.rewrites = {"output of class " + type + " -> " + what};
  p.applies = "at load, compiled side only";
  p.compiled_only = true;
  p.apply = [] { return Registrations{}; };  // a graph rewrite only: nothing to register
  p.rewrite = [type, factor, offset](torch::jit::Module& module) {
    return perturb_class_output(module, type, factor, offset);
  };
  return p;
}

}  // namespace

std::vector<Patch> planted_fault_patches() {
  return {planted("test_scale_planted", "PlantedLinear", 1.5, 0.0, "output x 1.5"),
          planted("test_offset_pair_a", "PairA", 1.0, 0.006, "output + 0.006"),
          planted("test_offset_pair_b", "PairB", 1.0, 0.006, "output + 0.006")};
}

}  // namespace zoobench::patches
