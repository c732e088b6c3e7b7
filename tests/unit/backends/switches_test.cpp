// The optimization switches of aot_inductor and the torch.compile family (static: no Python, no
// device): which each backend declares, in which mode and on which device they act, the
// torch.compile options a disabled Inductor switch becomes, and the refusal of unknown names.
#include "zoobench/backends/switches.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "zoobench/backends/backend.h"
#include "zoobench/backends/inductor_switches.h"
#include "zoobench/util/errors.h"

namespace zoobench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::IsSupersetOf;
using ::testing::Not;

std::vector<std::string> names(const std::vector<OptimizationSwitch>& switches) {
  std::vector<std::string> out;
  for (const auto& s : switches) out.push_back(s.name);
  return out;
}

std::vector<std::string> switch_names(const std::string& backend) {
  return names(make_backend(backend)->switches());
}

const OptimizationSwitch& find_switch(const std::vector<OptimizationSwitch>& switches,
                                      const std::string& name) {
  for (const auto& s : switches) {
    if (s.name == name) return s;
  }
  throw std::runtime_error("no switch " + name);
}

TorchCompileSpec spec(const std::string& dynamo_backend, const std::string& mode = "") {
  return {dynamo_backend, mode, dynamo_backend + (mode.empty() ? "" : ":" + mode)};
}

nlohmann::json options(const TorchCompileSpec& s, const std::string& user,
                       const std::vector<std::string>& disabled) {
  const std::string text = torch_compile_options_json(s, user, disabled);
  return text.empty() ? nlohmann::json() : nlohmann::json::parse(text);
}

// aot_inductor's switches are the run-time steps zoobench adds around the package; the
// package's own Inductor options are fixed at export, and the listing says how to change them.
TEST(BackendSwitches, AotInductorDeclaresItsRunTimeSteps) {
  auto backend = make_backend("aot_inductor");
  const auto switches = backend->switches();
  EXPECT_THAT(names(switches), ElementsAre("cudagraphs", "narrowing_memo"));
  EXPECT_EQ(find_switch(switches, "cudagraphs").applies, "cuda");
  EXPECT_EQ(find_switch(switches, "narrowing_memo").applies, "all");
  EXPECT_THAT(backend->fixed_steps(), HasSubstr("tools/export_zoo.py --aoti --aoti-options"));
  EXPECT_THAT(names(applicable_switches(*backend, Mode::kInference, "cpu")),
              ElementsAre("narrowing_memo"));
}

// Inductor's switches follow the mode: the steps every mode takes, plus the ones a mode turns
// on (max_autotune and its tuning, triton.cudagraphs: on in upstream's `inductor`, off in
// torch.compile's default mode); other dynamo backends take no options.
TEST(BackendSwitches, InductorSwitchesFollowTheMode) {
  const std::vector<std::string> every_mode = {"pattern_matcher",
                                               "joint_graph_constant_folding",
                                               "constant_and_index_propagation",
                                               "layout_optimization",
                                               "fusion",
                                               "loop_ordering_after_fusion",
                                               "split_reductions",
                                               "inplace_buffers",
                                               "allow_buffer_reuse",
                                               "cpp_vectorization",
                                               "shape_padding",
                                               "comprehensive_padding",
                                               "triton.persistent_reductions"};
  EXPECT_EQ(switch_names("inductor:default"), every_mode);
  auto with_graphs = every_mode;
  with_graphs.push_back("triton.cudagraphs");
  EXPECT_EQ(switch_names("inductor"), with_graphs);
  EXPECT_EQ(switch_names("compile:inductor"), with_graphs);
  EXPECT_THAT(switch_names("inductor:reduce-overhead"), IsSupersetOf(every_mode));
  EXPECT_THAT(switch_names("inductor:reduce-overhead"), IsSupersetOf({"triton.cudagraphs"}));
  EXPECT_THAT(switch_names("inductor:reduce-overhead"), Not(IsSupersetOf({"max_autotune"})));
  EXPECT_THAT(switch_names("inductor:max-autotune"),
              IsSupersetOf({"max_autotune", "epilogue_fusion", "coordinate_descent_tuning",
                            "triton.cudagraphs"}));
  EXPECT_THAT(switch_names("inductor:max-autotune-no-cudagraphs"),
              IsSupersetOf({"max_autotune", "epilogue_fusion", "coordinate_descent_tuning"}));
  EXPECT_THAT(switch_names("inductor:max-autotune-no-cudagraphs"),
              Not(IsSupersetOf({"triton.cudagraphs"})));
  EXPECT_THAT(switch_names("aot_eager"), IsEmpty());
  EXPECT_THAT(switch_names("python_eager"), IsEmpty());
  EXPECT_THAT(make_backend("aot_eager")->fixed_steps(),
              HasSubstr("takes no torch.compile options"));
  EXPECT_THAT(make_backend("inductor")->fixed_steps(), HasSubstr("--compile-options"));

  const auto max_autotune = make_backend("inductor:max-autotune")->switches();
  for (const auto& s : max_autotune) {
    SCOPED_TRACE(s.name);
    EXPECT_FALSE(s.description.empty());
    EXPECT_THAT((std::vector<std::string>{"inference", "training", "all", "cuda", "cpu"}),
                ::testing::Contains(s.applies));
    EXPECT_THAT(s.description, HasSubstr("[off: {"));  // the option it becomes, as JSON
  }
  EXPECT_EQ(find_switch(max_autotune, "epilogue_fusion").requires_switch, "max_autotune");
  EXPECT_EQ(find_switch(max_autotune, "triton.cudagraphs").applies, "cuda");
  EXPECT_EQ(find_switch(max_autotune, "cpp_vectorization").applies, "cpu");
  EXPECT_EQ(find_switch(max_autotune, "fusion").applies, "all");
}

// A device's switches: the CPU's kernels are C++ (vectorized or not), CUDA's are Triton.
TEST(BackendSwitches, InductorSwitchesActOnTheirDevice) {
  auto backend = make_backend("inductor:reduce-overhead");
  const auto cpu = names(applicable_switches(*backend, Mode::kTraining, "cpu"));
  const auto cuda = names(applicable_switches(*backend, Mode::kTraining, "cuda"));
  EXPECT_THAT(cpu, IsSupersetOf({"pattern_matcher", "fusion", "cpp_vectorization"}));
  EXPECT_THAT(cpu, Not(IsSupersetOf({"triton.cudagraphs"})));
  EXPECT_THAT(cpu, Not(IsSupersetOf({"shape_padding"})));
  EXPECT_THAT(cuda,
              IsSupersetOf({"pattern_matcher", "fusion", "triton.cudagraphs", "shape_padding"}));
  EXPECT_THAT(cuda, Not(IsSupersetOf({"cpp_vectorization"})));
}

// A disabled switch becomes its torch.compile option, merged with --compile-options; the
// switch wins for its own key; names that are no switch of the backend are left out.
TEST(BackendSwitches, DisabledInductorSwitchesBecomeCompileOptions) {
  EXPECT_EQ(torch_compile_options_json(spec("inductor"), "", {}), "");
  EXPECT_EQ(options(spec("inductor"), "", {"pattern_matcher", "fusion", "patch:packed_dropout"}),
            (nlohmann::json{{"pattern_matcher", false}, {"max_fusion_size", 1}}));
  EXPECT_EQ(options(spec("inductor"), R"({"freezing": true, "pattern_matcher": true})",
                    {"pattern_matcher"}),
            (nlohmann::json{{"freezing", true}, {"pattern_matcher", false}}));
  EXPECT_EQ(options(spec("inductor"), R"({"freezing": true})", {}),
            (nlohmann::json{{"freezing", true}}));
  EXPECT_EQ(options(spec("inductor"), "", {"cpp_vectorization", "triton.persistent_reductions"}),
            (nlohmann::json{{"cpp.simdlen", 1}, {"triton.persistent_reductions", false}}));
  // triton.cudagraphs is a switch only where the mode turns it on.
  EXPECT_EQ(torch_compile_options_json(spec("inductor", "default"), "", {"triton.cudagraphs"}), "");
  EXPECT_EQ(options(spec("inductor"), "", {"triton.cudagraphs"}),
            (nlohmann::json{{"triton.cudagraphs", false}}));
  EXPECT_EQ(options(spec("inductor", "reduce-overhead"), "", {"triton.cudagraphs"}),
            (nlohmann::json{{"triton.cudagraphs", false}}));
  EXPECT_EQ(options(spec("inductor", "max-autotune"), "",
                    {"max_autotune", "epilogue_fusion", "coordinate_descent_tuning"}),
            (nlohmann::json{{"max_autotune", false},
                            {"epilogue_fusion", false},
                            {"coordinate_descent_tuning", false}}));
  // Other dynamo backends: the user's options as given, no switch.
  EXPECT_EQ(torch_compile_options_json(spec("aot_eager"), "", {"pattern_matcher"}), "");
  EXPECT_EQ(options(spec("aot_eager"), R"({"a": 1})", {"pattern_matcher"}),
            (nlohmann::json{{"a", 1}}));
}

// CUDA graphs as upstream's harness runs Inductor: on for `inductor` on CUDA, never on the CPU
// or for torch.compile's default mode, off in every mode without them (--disable-cudagraphs,
// the suite's disable_cudagraph list).
TEST(BackendSwitches, InductorRunsInsideCudaGraphsAsUpstream) {
  EXPECT_EQ(torch_compile_cudagraphs(spec("inductor"), true, true), true);
  EXPECT_EQ(torch_compile_cudagraphs(spec("inductor"), false, true), std::nullopt);
  EXPECT_EQ(torch_compile_cudagraphs(spec("inductor", "default"), true, true), std::nullopt);
  EXPECT_EQ(torch_compile_cudagraphs(spec("inductor", "reduce-overhead"), true, true),
            std::nullopt);
  EXPECT_EQ(torch_compile_cudagraphs(spec("inductor"), true, false), false);
  EXPECT_EQ(torch_compile_cudagraphs(spec("inductor", "reduce-overhead"), true, false), false);
  EXPECT_EQ(torch_compile_cudagraphs(spec("aot_eager"), true, true), std::nullopt);
}

// --disable-switches names are checked against the backends' own switches, and a name that is
// not one is refused with the ones that are.
TEST(BackendSwitches, UnknownNamesAreRefusedWithTheKnownOnes) {
  EXPECT_NO_THROW(check_switch_names({"pattern_matcher", "fusion"}, {"inductor"}));
  EXPECT_NO_THROW(check_switch_names({"triton.cudagraphs"}, {"inductor:reduce-overhead"}));
  EXPECT_NO_THROW(check_switch_names({"cudagraphs", "narrowing_memo"}, {"aot_inductor"}));
  EXPECT_NO_THROW(check_switch_names({"freeze", "fusion"}, {"jit", "inductor"}));
  try {
    check_switch_names({"freeze"}, {"inductor"});
    FAIL() << "jit's freeze was accepted for inductor";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("'freeze' is not a switch of inductor"));
    EXPECT_THAT(e.what(), HasSubstr("pattern_matcher"));
    EXPECT_THAT(e.what(), HasSubstr("layout_optimization"));
  }
  try {
    check_switch_names({"triton.cudagraphs"}, {"inductor:default"});
    FAIL() << "triton.cudagraphs was accepted for the default mode, which does not capture";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("'triton.cudagraphs' is not a switch of inductor:default"));
  }
  try {
    check_switch_names({"pattern_matcher"}, {"aot_inductor"});
    FAIL() << "an Inductor option was accepted for aot_inductor";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("known: cudagraphs, narrowing_memo"));
  }
  EXPECT_THROW(check_switch_names({"pattern_matcher"}, {"aot_eager"}), UsageError);
}

}  // namespace
}  // namespace zoobench
