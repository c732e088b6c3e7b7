// The screen that keeps host-synchronizing graphs out of CUDA graph capture: it must find
// such operators wherever forward reaches them (branches, submodule methods, helper methods),
// and must not flag what only looks like one (numbers tracing makes from tensor sizes), or
// traced models would lose their capture.
#include <gtest/gtest.h>
#include <torch/csrc/jit/ir/irparser.h>

#include <algorithm>
#include <filesystem>

#include "testing/testing.h"
#include "unit/backends/small_zoo.h"
#include "zoobench/patches/registry.h"
#include "zoobench/backends/host_sync_ops.h"

namespace zoobench {
namespace {

using Ops = std::vector<std::string>;

torch::jit::Module scripted(const std::string& source) {
  torch::jit::Module module("m");
  module.define(source);
  return module;
}

TEST(HostSyncOps, FindsDataDependentOpsInsideBranches) {
  auto module = scripted(R"(
def forward(self, x, flag: bool):
    if flag:
        return x.nonzero()
    return x
)");
  EXPECT_EQ(host_synchronizing_ops(module), (Ops{"aten::nonzero"}));
}

TEST(HostSyncOps, FindsANumberReadFromAnInputTensor) {
  auto module = scripted(R"(
def forward(self, x):
    if float(x.sum()) > 0.0:
        return x * 2.0
    return x
)");
  EXPECT_EQ(host_synchronizing_ops(module), (Ops{"aten::Float"}));
}

TEST(HostSyncOps, FollowsSubmoduleAndHelperMethods) {
  torch::jit::Module child("child");
  child.define(R"(
def forward(self, x):
    return self.pick(x)

def pick(self, x):
    return torch.masked_select(x, x > 0)
)");
  torch::jit::Module parent("parent");
  parent.register_module("child", child);
  parent.define(R"(
def forward(self, x):
    return self.child.forward(x) + x.sum().item()
)");
  Ops found = host_synchronizing_ops(parent);
  std::sort(found.begin(), found.end());
  EXPECT_EQ(found, (Ops{"aten::item", "aten::masked_select"}));
}

TEST(HostSyncOps, NumbersMadeFromSizesAreNotASync) {
  // What torch.jit.trace records for `x.view(x.size(0) * 2, -1)`: sizes become host tensors
  // (prim::NumToTensor), arithmetic on them stays on the host, aten::Int reads them back.
  auto graph = std::make_shared<torch::jit::Graph>();
  torch::jit::parseIR(R"IR(
graph(%x : Tensor):
  %zero : int = prim::Constant[value=0]()
  %two : int = prim::Constant[value=2]()
  %minus_one : int = prim::Constant[value=-1]()
  %n : int = aten::size(%x, %zero)
  %n_tensor : Tensor = prim::NumToTensor(%n)
  %doubled : Tensor = aten::mul(%n_tensor, %two)
  %rows : int = aten::Int(%doubled)
  %shape : int[] = prim::ListConstruct(%rows, %minus_one)
  %y : Tensor = aten::view(%x, %shape)
  return (%y)
)IR",
                      graph.get());
  EXPECT_EQ(host_synchronizing_ops(graph), Ops{});

  // The same conversion of a value computed from the input is a sync.
  auto reads_input = std::make_shared<torch::jit::Graph>();
  torch::jit::parseIR(R"IR(
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %total : Tensor = aten::sum(%x, %none)
  %count : int = aten::Int(%total)
  return (%count)
)IR",
                      reads_input.get());
  EXPECT_EQ(host_synchronizing_ops(reads_input), (Ops{"aten::Int"}));
}

// The small zoo's models, as the exporter scripted them: only host_sync reads values back
// (host_copy copies to the host, but reads no value: only a capture finds that out).
TEST(HostSyncOps, SmallZooOnlyHostSyncIsFlagged) {
  const std::string zoo = testing::small_zoo_dir({});
  ASSERT_FALSE(zoo.empty()) << "the small zoo could not be exported (see above)";
  for (const std::string name : {"conv_bn_relu", "mlp", "encoder_layer", "host_sync", "host_copy"}) {
    const auto folder = std::filesystem::path(testing::small_model_manifest(zoo, name)).parent_path();
    auto module = torch::jit::load((folder / "eval.pt").string());
    Ops found = host_synchronizing_ops(module);
    if (name == "host_sync") {
      EXPECT_EQ(found, (Ops{"aten::Float"})) << name;
    } else {
      EXPECT_EQ(found, Ops{}) << name;
    }
  }
}

// Real models, made by the real libraries: torchvision's scripted Mask R-CNN (vision_maskrcnn's
// model; its failed capture crashed the jit backend on the H200) is flagged; traced models,
// whose graphs are full of sizes turned into numbers, are not.
TEST(HostSyncOps, ScriptedMaskRcnnIsFlaggedTracedModelsAreNot) {
  testing::ScratchDir dir;
  testing::run_python("DIR = '" + dir.path() + "'\n" + R"PY(
import torch, torchvision
from torch import nn
detector = torchvision.models.detection.maskrcnn_resnet50_fpn(
    weights=None, weights_backbone=None, min_size=64, max_size=64).eval()
torch.jit.script(detector).save(DIR + '/maskrcnn.pt')
torch.jit.trace(torchvision.models.resnet18().eval(), torch.rand(1, 3, 32, 32)).save(DIR + '/resnet18.pt')

class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, dropout=0.0)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2)

    def forward(self, x):
        hidden = self.encoder(x)
        return hidden.reshape(x.size(0) * x.size(1), -1)

with torch.no_grad():
    torch.jit.trace(Encoder().eval(), torch.rand(5, 2, 16), check_trace=False).save(DIR + '/encoder.pt')
)PY");
  for (const char* traced : {"resnet18.pt", "encoder.pt"}) {
    EXPECT_EQ(host_synchronizing_ops(torch::jit::load(dir.file(traced))), Ops{}) << traced;
  }
  patches::PatchScope scope({"torchvision_ops"});
  Ops found = host_synchronizing_ops(torch::jit::load(dir.file("maskrcnn.pt")));
  for (const char* op : {"torchvision::nms", "aten::item", "aten::where"}) {
    EXPECT_NE(std::find(found.begin(), found.end(), op), found.end()) << op << " not in " << ::testing::PrintToString(found);
  }
  // The row shows the first few: the data-dependent operators come before the conversions.
  ASSERT_FALSE(found.empty());
  EXPECT_NE(found.front(), "aten::item") << ::testing::PrintToString(found);
}

}  // namespace
}  // namespace zoobench
