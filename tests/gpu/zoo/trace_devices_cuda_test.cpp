// A file traced on CUDA keeps its constants where the trace had them when zoobench loads it on
// CUDA: the 0-dim constants the trace made from Python numbers and torch.tensor calls stay on the
// CPU (scalars to the kernels, as in Python), a tensor the model holds outside its parameters
// and buffers is baked in on the GPU and stays there, the weights go to the run's device; the
// outputs are the model's. On the CPU everything is mapped as before.
//
// What the trace records, seen on the H200 (tools/zoo_diag/trace_constants.py --selftest):
// torch.tensor(2.0, device=x.device) is a CPU constant followed by aten::to(cuda), and `y * 0.5`
// a float64 CPU constant; only a captured GPU tensor is a GPU constant.
#include <gtest/gtest.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/cuda.h>
#include <torch/script.h>

#include <vector>

#include "testing/testing.h"
#include "zoobench/util/sha256.h"
#include "zoobench/zoo/model_files.h"

namespace zoobench {
namespace {

std::vector<at::Tensor> tensor_constants(const torch::jit::Module& module) {
  std::vector<at::Tensor> found;
  for_each_method_graph(module, [&](const std::shared_ptr<torch::jit::Graph>& graph) {
    for (torch::jit::Node* node : torch::jit::findAllNodes(*graph, c10::prim::Constant, true)) {
      if (auto constant = tensor_constant(node->output())) found.push_back(*constant);
    }
  });
  return found;
}

class TraceDevices : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
    path_ = dir_.file("eval.pt");
    testing::run_python("PATH = '" + path_ + R"PY('
import torch
class Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 8))
        self.offset = torch.tensor(2.0, device='cuda')  # neither parameter nor buffer: a GPU constant
    def forward(self, x):
        return torch.mm(x, self.w) * 0.5 + self.offset  # 0.5: a CPU constant
torch.manual_seed(0)
model = Scaled().cuda()
torch.jit.trace(model, torch.randn(3, 4, device='cuda')).save(PATH)
)PY");
    manifest_.name = "scaled";
    Artifact eval;
    eval.role = "eval";
    eval.path = path_;
    eval.sha256 = sha256_file(path_);
    eval.kind = "torchscript";
    eval.device = "cuda";
    manifest_.artifacts["eval"] = eval;
  }

  testing::ScratchDir dir_;
  std::string path_;
  Manifest manifest_;
};

TEST_F(TraceDevices, CpuConstantsOfACudaTraceStayOnTheCpu) {
  const c10::Device cuda(c10::kCUDA, 0);
  torch::jit::Module module = load_torchscript(manifest_, "eval", cuda);
  std::vector<at::Tensor> constants = tensor_constants(module);
  int on_cpu = 0, on_cuda = 0;
  for (const auto& c : constants) {
    if (c.dim() != 0) continue;
    if (c.is_cpu()) {
      ++on_cpu;
      EXPECT_EQ(c.item<float>(), 0.5f);
    } else {
      ++on_cuda;
      EXPECT_EQ(c.item<float>(), 2.0f);
    }
  }
  EXPECT_EQ(on_cpu, 1);
  EXPECT_EQ(on_cuda, 1);
  at::Tensor w = module.attr("w").toTensor();
  EXPECT_TRUE(w.is_cuda());
  at::Tensor x = at::randn({3, 4}, at::TensorOptions().device(cuda));
  at::NoGradGuard no_grad;
  at::Tensor out = module.forward({x}).toTensor();
  EXPECT_TRUE(at::allclose(out, at::mm(x, w) * 0.5 + 2.0, 1e-5, 1e-5));
}

TEST_F(TraceDevices, OnTheCpuEverythingIsMapped) {
  torch::jit::Module module = load_torchscript(manifest_, "eval", c10::Device(c10::kCPU));
  for (const auto& c : tensor_constants(module)) EXPECT_TRUE(c.is_cpu());
  EXPECT_TRUE(module.attr("w").toTensor().is_cpu());
}

}  // namespace
}  // namespace zoobench
