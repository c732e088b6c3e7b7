// What a run loads, decided before anything runs (runner/model_plan.h): a run whose backends are
// all of the torch.compile family takes the Python module as its eager reference and loads the
// model's recipe alone, so nothing is traced to TorchScript; a TorchScript backend in the run,
// or --eager-reference torchscript, brings eval.pt (and train.pt in training) back. None of
// this needs torch.compile to run here: the plan is made from the backends' declarations.
#include "zoobench/runner/model_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace zoobench {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

RunOptions run_of(std::vector<std::string> backends, Mode mode = Mode::kInference,
                  std::string reference = "auto") {
  RunOptions options;
  options.backends = std::move(backends);
  options.backend = options.backends.front();
  options.mode = mode;
  options.eager_reference = std::move(reference);
  options.devices = {"cuda"};
  return options;
}

TEST(ModelPlan, ATorchCompileOnlyRunLoadsTheRecipeAloneAndItsReferenceIsPython) {
  for (const auto& backends : std::vector<std::vector<std::string>>{
           {"inductor"}, {"inductor", "inductor:reduce-overhead", "aot_eager"}, {"python_eager"}}) {
    for (Mode mode : {Mode::kInference, Mode::kTraining}) {
      const RunOptions run = run_of(backends, mode);
      EXPECT_EQ(eager_reference(run), "python");
      const ExportRequest request = export_request(run, "suites");
      EXPECT_THAT(request.roles, ElementsAre(kRecipeRole)) << backends.front();
      EXPECT_EQ(request.training, mode == Mode::kTraining);
      EXPECT_THAT(exporter_arguments(request, "torchbench", "m"),
                  ::testing::Contains("--no-torchscript"));
    }
  }
}

TEST(ModelPlan, ATorchScriptBackendOrReferenceBringsEvalPtBack) {
  const RunOptions mixed = run_of({"inductor", "jit"});
  EXPECT_EQ(eager_reference(mixed), "torchscript");
  EXPECT_THAT(export_request(mixed, "suites").roles, UnorderedElementsAre("eval", kRecipeRole));

  const RunOptions forced = run_of({"inductor"}, Mode::kTraining, "torchscript");
  EXPECT_EQ(eager_reference(forced), "torchscript");
  EXPECT_THAT(export_request(forced, "suites").roles,
              UnorderedElementsAre("eval", "train", kRecipeRole));
  EXPECT_THAT(exporter_arguments(export_request(forced, "suites"), "torchbench", "m"),
              ::testing::Not(::testing::Contains("--no-torchscript")));

  // The Python module as jit's reference: jit still loads eval.pt.
  EXPECT_THAT(export_request(run_of({"jit"}, Mode::kInference, "python"), "suites").roles,
              UnorderedElementsAre(kRecipeRole, "eval"));
}

TEST(ModelPlan, EachBackendOfAMixedRunKeepsTheRunsReference) {
  // A child runs one backend of its parent's run: the parent's reference travels with it.
  RunOptions child = run_of({"inductor"});
  child.eager_reference = resolve_eager_reference({"inductor", "jit"});
  EXPECT_EQ(eager_reference(child), "torchscript");
  EXPECT_EQ(reference_backend_for(eager_reference(child)), "eager");
  EXPECT_EQ(reference_backend_for(eager_reference(run_of({"inductor"}))), "python_eager");
}

}  // namespace
}  // namespace zoobench
