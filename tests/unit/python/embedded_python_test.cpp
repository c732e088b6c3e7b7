// The embedded Python (src/zoobench/python/): it starts in this process from the plugin, tensors
// cross without copies in both directions, nested values keep their structure, JSON goes both
// ways, and a Python exception becomes a PythonError with the exception's line first and the
// traceback after it.
#include "zoobench/python/embedded_python.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>

namespace zoobench::python {
namespace {

// The helpers module is found through PYTHONPATH, read when the interpreter starts (the first
// call in this process).
Object box(const nlohmann::json& settings = {{"name", "box"}}) {
  ::setenv("PYTHONPATH", ZOOBENCH_REPO_ROOT "/tests/unit/python", 1);
  if (auto why = unavailable_reason()) ADD_FAILURE() << "no embedded Python: " << *why;
  return make_object("bridge_helpers", "make_box", settings);
}

TEST(EmbeddedPython, StartsAndImportsTheLinkedTorch) {
  box();
  nlohmann::json facts = call_json("bridge_helpers", "torch_version");
  // The interpreter's torch is the LibTorch this test links: same version string prefix.
  const std::string version = facts.at("torch").get<std::string>();
  EXPECT_EQ(version.rfind(
                std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR), 0),
            0u)
      << version;
}

TEST(EmbeddedPython, TensorsAreSharedNotCopied) {
  Object object = box();
  at::Tensor t = at::arange(6, at::kFloat).reshape({2, 3});
  const void* data = t.data_ptr();
  c10::IValue out = object.call("add_one_in_place", {t});
  // Python wrote into the same storage, and gave back the same tensor.
  EXPECT_TRUE(at::equal(t, at::arange(6, at::kFloat).reshape({2, 3}) + 1));
  ASSERT_TRUE(out.isTensor());
  EXPECT_EQ(out.toTensor().data_ptr(), data);
  EXPECT_EQ(out.toTensor().strides(), t.strides());
}

TEST(EmbeddedPython, NestedValuesKeepTheirStructure) {
  Object object = box();
  c10::impl::GenericList list(c10::AnyType::get());
  list.push_back(at::ones({2}));
  list.push_back(at::zeros({1}));
  c10::IValue tuple =
      c10::ivalue::Tuple::create({c10::IValue(at::full({3}, 2.0)), c10::IValue(list)});
  c10::IValue out =
      object.call("echo", {tuple, c10::IValue(int64_t{7}), c10::IValue(2.5), c10::IValue("text")});
  ASSERT_TRUE(out.isTuple());
  const auto& values = out.toTupleRef().elements();
  ASSERT_EQ(values.size(), 4u);
  const auto& inner = values[0].toTupleRef().elements();
  EXPECT_TRUE(at::equal(inner[0].toTensor(), at::full({3}, 2.0)));
  ASSERT_TRUE(inner[1].isList());
  EXPECT_EQ(inner[1].toListRef().size(), 2u);
  EXPECT_TRUE(at::equal(inner[1].toListRef()[1].toTensor(), at::zeros({1})));
  EXPECT_EQ(values[1].toInt(), 7);
  EXPECT_DOUBLE_EQ(values[2].toDouble(), 2.5);
  EXPECT_EQ(values[3].toStringRef(), "text");
}

TEST(EmbeddedPython, JsonBothWaysAndObjectsKeepState) {
  Object object = box({{"name", "kept"}, {"sizes", {1, 2, 3}}});
  object.call("add_one_in_place", {at::zeros({1})});
  nlohmann::json described = object.call_json("describe", "anything");
  EXPECT_EQ(described.at("type"), "str");
  EXPECT_EQ(described.at("settings").at("name"), "kept");
  EXPECT_EQ(described.at("settings").at("sizes"), nlohmann::json({1, 2, 3}));
  EXPECT_EQ(described.at("calls"), 1);
}

TEST(EmbeddedPython, ExceptionsCarryTypeMessageAndTraceback) {
  Object object = box();
  try {
    object.call_json("fail", "the reason");
    FAIL() << "no exception";
  } catch (const PythonError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.type(), "ValueError");
    EXPECT_EQ(what.substr(0, what.find('\n')), "ValueError: the reason");
    EXPECT_NE(what.find("raise_deep"), std::string::npos) << "no traceback in:\n" << what;
  }
  // The interpreter is still usable after an exception.
  EXPECT_EQ(object.call_json("describe", 1).at("type"), "int");
}

TEST(EmbeddedPython, AMissingModuleIsAnError) {
  box();
  EXPECT_THROW(make_object("no_such_module_here", "make", nullptr), PythonError);
}

}  // namespace
}  // namespace zoobench::python
