// The patch registry: scoped registration through the dispatcher, reference counting, conflict
// detection and error messages, on a private table of test patches and on the built-in one.
#include "zoobench/patches/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "zoobench/util/errors.h"

namespace zoobench::patches {
namespace {

using ::testing::HasSubstr;

at::Tensor twice(const at::Tensor& x) { return x * 2; }
at::Tensor thrice(const at::Tensor& x) { return x * 3; }

bool op_declared(const char* name) {
  return c10::Dispatcher::singleton().findSchema({name, ""}).has_value();
}

at::Tensor call_unary(const char* name, const at::Tensor& x) {
  return c10::Dispatcher::singleton()
      .findSchemaOrThrow(name, "")
      .typed<at::Tensor(const at::Tensor&)>()
      .call(x);
}

Patch defines_scale_op() {
  Patch p;
  p.name = "scale_op";
  p.description = "declares zoobench_test::scale with a CPU kernel";
  p.defines = {"zoobench_test::scale"};
  p.overrides = {{"zoobench_test::scale", c10::DispatchKey::CPU}};
  p.apply = [] {
    Registrations r;
    r.push_back(std::make_unique<torch::Library>(torch::Library::FRAGMENT, "zoobench_test",
                                                 c10::nullopt, __FILE__, __LINE__));
    r.back()->def("scale(Tensor x) -> Tensor");
    r.push_back(std::make_unique<torch::Library>(torch::Library::IMPL, "zoobench_test",
                                                 c10::DispatchKey::CPU, __FILE__, __LINE__));
    r.back()->impl("scale", &twice);
    return r;
  };
  return p;
}

Patch overrides_scale_op(const std::string& name) {
  Patch p;
  p.name = name;
  p.description = "another CPU kernel for zoobench_test::scale";
  p.overrides = {{"zoobench_test::scale", c10::DispatchKey::CPU}};
  p.apply = [] {
    Registrations r;
    r.push_back(std::make_unique<torch::Library>(torch::Library::IMPL, "zoobench_test",
                                                 c10::DispatchKey::CPU, __FILE__, __LINE__));
    r.back()->impl("scale", &thrice);
    return r;
  };
  return p;
}

Patch same_op_other_key() {
  Patch p;
  p.name = "scale_autograd";
  p.description = "overrides the same operator for another dispatch key (no conflict)";
  p.overrides = {{"zoobench_test::scale", c10::DispatchKey::Autograd}};
  return p;
}

std::vector<Patch> test_table() {
  return {defines_scale_op(), overrides_scale_op("scale_thrice"), same_op_other_key()};
}

TEST(PatchRegistry, OperatorsExistOnlyWhileTheScopeLives) {
  PatchRegistry registry(test_table());
  EXPECT_FALSE(op_declared("zoobench_test::scale"));
  {
    PatchScope scope({"scale_op"}, registry);
    ASSERT_TRUE(op_declared("zoobench_test::scale"));
    EXPECT_TRUE(call_unary("zoobench_test::scale", at::ones({2})).equal(at::full({2}, 2.0)));
    EXPECT_EQ(registry.active(), std::vector<std::string>{"scale_op"});
  }
  EXPECT_FALSE(op_declared("zoobench_test::scale"));
  EXPECT_TRUE(registry.active().empty());
}

TEST(PatchRegistry, ApplyingTwiceIsANoOpAndTheLastUserRemovesIt) {
  PatchRegistry registry(test_table());
  {
    PatchScope outer({"scale_op", "scale_op"}, registry);  // listed twice: applied once
    EXPECT_EQ(outer.names(), std::vector<std::string>{"scale_op"});
    {
      PatchScope inner({"scale_op"}, registry);
      EXPECT_EQ(registry.active(), std::vector<std::string>{"scale_op"});
    }
    ASSERT_TRUE(op_declared("zoobench_test::scale"));  // the outer scope still uses it
    EXPECT_TRUE(call_unary("zoobench_test::scale", at::ones({1})).equal(at::full({1}, 2.0)));
  }
  EXPECT_FALSE(op_declared("zoobench_test::scale"));
}

TEST(PatchRegistry, ConflictingOverridesNameBothPatchesAndApplyNothing) {
  PatchRegistry registry(test_table());
  try {
    PatchScope scope({"scale_op", "scale_thrice"}, registry);
    FAIL() << "expected a conflict";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("'scale_op'"));
    EXPECT_THAT(e.what(), HasSubstr("'scale_thrice'"));
    EXPECT_THAT(e.what(), HasSubstr("zoobench_test::scale"));
    EXPECT_THAT(e.what(), HasSubstr("CPU"));
  }
  // The first patch of the failed scope was rolled back.
  EXPECT_FALSE(op_declared("zoobench_test::scale"));
  EXPECT_TRUE(registry.active().empty());
}

TEST(PatchRegistry, ConflictAcrossScopesIsAlsoAnError) {
  PatchRegistry registry(test_table());
  PatchScope first({"scale_op"}, registry);
  EXPECT_THROW(PatchScope({"scale_thrice"}, registry), std::runtime_error);
  EXPECT_EQ(registry.active(), std::vector<std::string>{"scale_op"});
  // Same operator, other dispatch key: allowed.
  PatchScope other({"scale_autograd"}, registry);
  EXPECT_EQ(registry.active(), (std::vector<std::string>{"scale_op", "scale_autograd"}));
}

TEST(PatchRegistry, UnknownNameIsAUsageErrorListingKnownPatches) {
  PatchRegistry registry(test_table());
  try {
    PatchScope scope({"scale_op", "no_such_patch"}, registry);
    FAIL() << "expected an error";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("'no_such_patch'"));
    EXPECT_THAT(e.what(), HasSubstr("scale_op, scale_thrice, scale_autograd"));
  }
  EXPECT_FALSE(op_declared("zoobench_test::scale"));
}

TEST(PatchRegistry, DuplicateNamesInATableAreRejected) {
  EXPECT_THROW(PatchRegistry({defines_scale_op(), defines_scale_op()}), std::logic_error);
}

TEST(BuiltinPatches, ListNamesDescriptionsAndOverrides) {
  const auto& patches = list_patches();
  std::vector<std::string> names;
  for (const auto& p : patches) {
    names.push_back(p.name);
    EXPECT_FALSE(p.description.empty()) << p.name;
    EXPECT_EQ(p.description.find('\n'), std::string::npos) << p.name;
    EXPECT_TRUE(static_cast<bool>(p.apply)) << p.name;
  }
  EXPECT_THAT(names,
              ::testing::ElementsAre("torchvision_ops", "packed_dropout", "fault_injection",
                                     "test_scale_planted", "test_offset_pair_a",
                                     "test_offset_pair_b"));
  const std::string tv = describe_overrides(patches[0]);
  EXPECT_THAT(tv, HasSubstr("torchvision::nms[CPU"));
  EXPECT_THAT(tv, HasSubstr("torchvision::roi_align[CPU"));
  EXPECT_THAT(tv, HasSubstr("Autograd]"));
  EXPECT_THAT(describe_overrides(patches[1]), HasSubstr("zoobench::dropout_packed[CPU"));
  EXPECT_TRUE(patches[1].training_only);
  EXPECT_TRUE(static_cast<bool>(patches[1].rewrite));
}

TEST(BuiltinPatches, TorchvisionOpsAreRegisteredOnlyWhileApplied) {
  // Nothing in the library registers torchvision:: operators at static initialisation.
  EXPECT_FALSE(op_declared("torchvision::nms"));
  EXPECT_FALSE(op_declared("torchvision::roi_align"));
  EXPECT_TRUE(active_patch_names().empty());
  {
    PatchScope scope({"torchvision_ops", "packed_dropout"});
    EXPECT_TRUE(op_declared("torchvision::nms"));
    EXPECT_TRUE(op_declared("torchvision::roi_align"));
    EXPECT_TRUE(op_declared("torchvision::_roi_align_backward"));
    EXPECT_TRUE(op_declared("zoobench::dropout_packed"));
    EXPECT_EQ(active_patch_names(),
              (std::vector<std::string>{"torchvision_ops", "packed_dropout"}));
  }
  EXPECT_FALSE(op_declared("torchvision::nms"));
  EXPECT_FALSE(op_declared("zoobench::dropout_packed"));
  EXPECT_TRUE(active_patch_names().empty());
  // And they come back when applied again.
  PatchScope again({"torchvision_ops"});
  EXPECT_TRUE(op_declared("torchvision::nms"));
}

TEST(BuiltinPatches, NoPatchesMeansNothingApplied) {
  PatchScope none({});
  EXPECT_TRUE(none.names().empty());
  EXPECT_TRUE(active_patch_names().empty());
  EXPECT_FALSE(op_declared("torchvision::nms"));
}

}  // namespace
}  // namespace zoobench::patches
