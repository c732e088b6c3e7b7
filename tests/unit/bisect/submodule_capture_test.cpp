// Recording what a model's children receive and return (bisect/submodule_capture.h), on small
// TorchScript modules built here: the order of first calls, a child called twice, arguments
// that are not tensors, and values that later in-place writes must not change.
#include <gtest/gtest.h>
#include <torch/script.h>

#include <stdexcept>

#include "zoobench/bisect/submodule_capture.h"

namespace zoobench {
namespace {

torch::jit::Module scripted(const std::string& name, const std::string& source) {
  torch::jit::Module module(name);
  module.define(source);
  return module;
}

torch::jit::Module parent_of_two() {
  torch::jit::Module parent("Parent");
  parent.register_module("add", scripted("AddOne", "def forward(self, x):\n    return x + 1\n"));
  parent.register_module("scale", scripted("Scale", "def forward(self, x, k: int):\n    return x * k\n"));
  // `add` twice, then `scale` with a number; the result is written into afterwards. (A module
  // defined from C++ calls its children's forward by name, as scripted ones compile to.)
  parent.define(R"(
def forward(self, x):
    y = self.add.forward(x)
    y = self.add.forward(y)
    z = self.scale.forward(y, 3)
    z.add_(100.0)
    return z
)");
  return parent;
}

TEST(SubmoduleCapture, RecordsEachChildsFirstCallInCallOrder) {
  torch::jit::Module parent = parent_of_two();
  const at::Tensor x = at::arange(4, at::kFloat);
  const std::vector<ChildCall> calls = capture_child_calls(parent, "", {x});
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].name, "add");
  EXPECT_EQ(calls[0].type, "AddOne");
  EXPECT_EQ(calls[0].calls, 2);
  ASSERT_EQ(calls[0].inputs.size(), 1u);
  EXPECT_TRUE(at::equal(calls[0].inputs[0].toTensor(), x));       // the first call's input
  EXPECT_TRUE(at::equal(calls[0].output.toTensor(), x + 1));      // and its output
  EXPECT_EQ(calls[1].name, "scale");
  ASSERT_EQ(calls[1].inputs.size(), 2u);
  EXPECT_TRUE(calls[1].inputs[1].isInt());                        // a number, not a tensor
  // Copied when returned: the parent's in-place add afterwards does not reach the record.
  EXPECT_TRUE(at::equal(calls[1].output.toTensor(), (x + 2) * 3));
}

TEST(SubmoduleCapture, CapturingTwiceRecordsAgainWithoutMoreTaps) {
  torch::jit::Module parent = parent_of_two();
  const at::Tensor x = at::ones({2});
  capture_child_calls(parent, "", {x});
  const auto again = capture_child_calls(parent, "", {x * 2});
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].calls, 2);  // not 4: the taps were not added a second time
  EXPECT_TRUE(at::equal(again[0].output.toTensor(), x * 2 + 1));
  // The model still computes what it did.
  EXPECT_TRUE(at::equal(parent.forward({x}).toTensor(), (x + 2) * 3 + 100));
}

// A traced encoder calls its layers through a ModuleList (self.layer -> "0" -> forward): the
// container has no forward, so its items are the children the search checks.
TEST(SubmoduleCapture, ItemsOfAContainerAreChildrenWithTheirPaths) {
  torch::jit::Module layers("Container");
  layers.register_module("first", scripted("AddOne", "def forward(self, x):\n    return x + 1\n"));
  layers.register_module("second", scripted("Scale", "def forward(self, x, k: int):\n    return x * k\n"));
  torch::jit::Module parent("Encoder");
  parent.register_module("layer", layers);
  parent.define(R"(
def forward(self, x):
    return self.layer.second.forward(self.layer.first.forward(x), 2)
)");
  const at::Tensor x = at::arange(3, at::kFloat);
  const std::vector<ChildCall> calls = capture_child_calls(parent, "", {x});
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].name, "layer.first");
  EXPECT_EQ(calls[0].type, "AddOne");
  EXPECT_EQ(calls[1].name, "layer.second");
  EXPECT_EQ(calls[1].type, "Scale");
  EXPECT_TRUE(at::equal(calls[1].inputs[0].toTensor(), x + 1));
  EXPECT_TRUE(at::equal(calls[1].output.toTensor(), (x + 1) * 2));
  EXPECT_TRUE(at::equal(submodule_at(parent, "layer.first").forward({x}).toTensor(), x + 1));
}

TEST(SubmoduleCapture, PathsNameSubmodulesOrSayWhichPartIsMissing) {
  torch::jit::Module parent = parent_of_two();
  EXPECT_EQ(submodule_at(parent, "add").type()->name()->name(), "AddOne");
  EXPECT_EQ(submodule_at(parent, "")._ivalue(), parent._ivalue());
  try {
    submodule_at(parent, "add.inner");
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "the model has no submodule 'add.inner'");
  }
  EXPECT_TRUE(capture_child_calls(parent, "add", {at::ones({2})}).empty());  // a leaf
}

}  // namespace
}  // namespace zoobench
