// Compiling TorchScript source in C++ that calls custom operators: the C++ frontend resolves
// only `torch.<aten op>`, so this resolver also maps `zoobench.<op>` and `torchvision.<op>` to
// those namespaces' operators (what `torch.ops.zoobench.<op>` is in Python).
#pragma once

#include <torch/csrc/jit/api/compilation_unit.h>
#include <torch/csrc/jit/frontend/resolver.h>
#include <torch/script.h>

#include <memory>
#include <string>

namespace zoobench::testing {

struct OpsResolver : torch::jit::Resolver {
  std::shared_ptr<torch::jit::SugaredValue> resolveValue(const std::string& name,
                                                         torch::jit::GraphFunction&,
                                                         const torch::jit::SourceRange&) override {
    if (name == "torch") return std::make_shared<torch::jit::BuiltinModule>("aten");
    if (name == "zoobench" || name == "torchvision") {
      return std::make_shared<torch::jit::BuiltinModule>(name);
    }
    return nullptr;
  }
  c10::TypePtr resolveType(const std::string&, const torch::jit::SourceRange&) override {
    return nullptr;
  }
};

inline std::shared_ptr<torch::jit::CompilationUnit> compile_with_ops(const std::string& source) {
  auto cu = std::make_shared<torch::jit::CompilationUnit>();
  cu->define(c10::nullopt, source, std::make_shared<OpsResolver>(), nullptr);
  return cu;
}

}  // namespace zoobench::testing
