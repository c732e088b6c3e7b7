// What a run loads, decided before anything runs (runner/model_plan.h): a run whose backends are
// all of the torch.compile family takes the Python module as its eager reference and loads the
// model's recipe alone, so nothing is traced to TorchScript; a TorchScript backend in the run,
// or --eager-reference torchscript, brings eval.pt (and train.pt in training) back. None of
// this needs torch.compile to run here: the plan is made from the backends' declarations.
#include "zoobench/runner/model_plan.h"

#include "testing/testing.h"

#include <gmock/gmock.h>
#include <fstream>
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
  EXPECT_EQ(eager_reference_backend(eager_reference(child)), "eager");
  EXPECT_EQ(eager_reference_backend(eager_reference(run_of({"inductor"}))), "python_eager");
}

// Upstream's accuracy rules, resolved per model (common.py, torchbench.py): torchbench models
// train in eval mode for the check unless only_training, where eager is the Python module (a
// TorchScript reference's train.pt is a trace in train mode, which eval() cannot change);
// pytorch_unet's eager runs are not compared in training only; NaN is equal to NaN unless the
// run asked for --float32.
TEST(ModelPlan, UpstreamsAccuracyRulesAreResolvedPerModel) {
  testing::ScratchDir dir;
  std::ofstream(dir.file("torchbench.yaml"))
      << "only_training: [tts_angular]\n"
         "accuracy:\n  skip:\n    eager_not_deterministic: [pytorch_unet]\n";
  const SuiteConfig torchbench = SuiteConfig::load(dir.file("torchbench.yaml"), "torchbench");
  auto plan_of = [&](const std::string& model, const RunOptions& run, const SuiteConfig& config) {
    Manifest manifest;
    manifest.name = model;
    return plan_model(ZooEntry{config.suite(), model, ""}, manifest, run, config, "cuda");
  };
  const RunOptions training = run_of({"inductor"}, Mode::kTraining);
  EXPECT_TRUE(plan_of("BERT_pytorch", training, torchbench).training_in_eval_mode);
  EXPECT_FALSE(plan_of("tts_angular", training, torchbench).training_in_eval_mode);
  EXPECT_FALSE(plan_of("resnet18", training, SuiteConfig("timm_models")).training_in_eval_mode);
  EXPECT_FALSE(plan_of("BERT_pytorch", run_of({"inductor", "jit"}, Mode::kTraining), torchbench)
                   .training_in_eval_mode);
  EXPECT_FALSE(plan_of("BERT_pytorch", run_of({"inductor"}), torchbench).training_in_eval_mode);

  EXPECT_TRUE(plan_of("pytorch_unet", training, torchbench).eager_not_deterministic);
  EXPECT_FALSE(plan_of("pytorch_unet", run_of({"inductor"}), torchbench).eager_not_deterministic);

  EXPECT_TRUE(plan_of("BERT_pytorch", training, torchbench).equal_nan);
  RunOptions float32 = training;
  float32.equal_nan = false;  // --float32
  EXPECT_FALSE(plan_of("BERT_pytorch", float32, torchbench).equal_nan);
}

// Upstream's setup_determinism enforces torch's deterministic algorithms for every model but
// those of a list in its code; the shipped suites carry that list, and the plan says which.
TEST(ModelPlan, DeterministicAlgorithmsAreEnforcedButForUpstreamsExceptions) {
  const SuiteConfig torchbench =
      SuiteConfig::load(testing::repo_root() + "/suites/torchbench.yaml", "torchbench");
  const SuiteConfig huggingface = SuiteConfig::load(
      testing::repo_root() + "/suites/huggingface.yaml", "huggingface");
  auto plan_of = [&](const std::string& model, const SuiteConfig& config) {
    Manifest manifest;
    manifest.name = model;
    return plan_model(ZooEntry{config.suite(), model, ""}, manifest,
                      run_of({"inductor"}, Mode::kTraining), config, "cuda");
  };
  for (const char* model : {"alexnet", "pytorch_unet", "Super_SloMo", "vgg16",
                            "detectron2_maskrcnn_r_50_fpn", "Background_Matting"}) {
    const ModelPlan plan = plan_of(model, torchbench);
    EXPECT_FALSE(plan.deterministic_algorithms) << model;
    EXPECT_THAT(describe(plan), ::testing::HasSubstr("not asked for")) << model;
  }
  EXPECT_FALSE(plan_of("Wav2Vec2ForCTC", huggingface).deterministic_algorithms);
  EXPECT_TRUE(plan_of("BERT_pytorch", torchbench).deterministic_algorithms);
  EXPECT_TRUE(plan_of("BertForMaskedLM", huggingface).deterministic_algorithms);
  EXPECT_THAT(describe(plan_of("BERT_pytorch", torchbench)),
              ::testing::HasSubstr("deterministic algorithms enforced"));
}

// TorchBench's vision and timm classes switch cuDNN to benchmark mode, non-deterministic, when
// upstream builds them (after its determinism setup): the plan carries the model's switches and
// says so; a model whose code sets none keeps the harness's.
TEST(ModelPlan, TheModelsOwnCudnnSwitchesAreInItsPlan) {
  const SuiteConfig torchbench =
      SuiteConfig::load(testing::repo_root() + "/suites/torchbench.yaml", "torchbench");
  auto plan_of = [&](const std::string& model) {
    Manifest manifest;
    manifest.name = model;
    return plan_model(ZooEntry{"torchbench", model, ""}, manifest,
                      run_of({"inductor"}, Mode::kTraining), torchbench, "cuda");
  };
  const ModelPlan alexnet = plan_of("alexnet");
  EXPECT_EQ(alexnet.cudnn_by_model.deterministic, std::optional<bool>(false));
  EXPECT_EQ(alexnet.cudnn_by_model.benchmark, std::optional<bool>(true));
  EXPECT_THAT(describe(alexnet),
              ::testing::HasSubstr("cuDNN deterministic off, benchmark on as the model's "
                                   "TorchBench code sets them"));
  EXPECT_EQ(plan_of("Super_SloMo").cudnn_by_model.deterministic, std::optional<bool>(true));
  const ModelPlan dcgan = plan_of("dcgan");
  EXPECT_FALSE(dcgan.cudnn_by_model.any());
  EXPECT_THAT(describe(dcgan), ::testing::Not(::testing::HasSubstr("cuDNN")));
}

// --optimizer upstream (the default): upstream's init_optimizer, read from common.py, for the
// torch.compile family on CUDA; SGD for zoobench's own backends and off CUDA; the flag's choice
// wins. Training graph breaks depend on it (SGD's step is outside dynamo, Adam's is compiled).
TEST(ModelPlan, TheTrainingOptimizerIsUpstreamsChoice) {
  const SuiteConfig suite("torchbench");
  auto optimizer_of = [&](const std::string& model, RunOptions run,
                          const std::string& device = "cuda") {
    run.accuracy = true;
    Manifest manifest;
    manifest.name = model;
    return plan_model(ZooEntry{"torchbench", model, ""}, manifest, run, suite, device).optimizer.kind;
  };
  const RunOptions inductor = run_of({"inductor"}, Mode::kTraining);
  EXPECT_EQ(optimizer_of("hf_Bert", inductor), "adam");
  EXPECT_EQ(optimizer_of("BERT_pytorch", inductor), "sgd");             // BENCHMARK_USE_SGD
  EXPECT_EQ(optimizer_of("MobileBertForMaskedLM", inductor), "none");   // CI_SKIP_OPTIMIZER
  EXPECT_EQ(optimizer_of("vit_base_patch14_dinov2.lvd142m", inductor), "sgd");
  EXPECT_EQ(optimizer_of("vit_base_patch14_dinov2.lvd142m", run_of({"aot_eager"}, Mode::kTraining)),
            "adam");  // CUDA_INDUCTOR_ACCURACY_USE_SGD is inductor's only
  EXPECT_EQ(optimizer_of("resnet50", inductor), "adam");
  RunOptions ci = inductor;
  ci.ci = true;
  EXPECT_EQ(optimizer_of("resnet50", ci), "sgd");  // CI_USE_SGD, with --ci
  EXPECT_EQ(optimizer_of("hf_Bert", inductor, "cpu"), "sgd");
  EXPECT_EQ(optimizer_of("hf_Bert", run_of({"jit"}, Mode::kTraining)), "sgd");
  RunOptions asked = inductor;
  asked.optimizer.kind = "sgd";
  EXPECT_EQ(optimizer_of("hf_Bert", asked), "sgd");
  asked.optimizer.kind = "adam";
  EXPECT_EQ(optimizer_of("BERT_pytorch", asked), "adam");
}

}  // namespace
}  // namespace zoobench
