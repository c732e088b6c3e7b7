// Suite configuration: yaml in the schema of upstream's benchmarks/dynamo/{torchbench,
// huggingface,timm_models}.yaml (skip lists with YAML anchors and nested lists, batch sizes,
// tolerance lists, maps inside `tolerance:`), the tolerances of the three upstream
// get_tolerance_and_cosine_flag rules as PyTorch 2.11 writes them, our overrides, errors with
// file:line, and the three model-list formats.
#include "zoobench/zoo/suite_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "testing/testing.h"
#include "zoobench/util/errors.h"

namespace zoobench {
namespace {

using testing::ScratchDir;

std::string write(const ScratchDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.file(name);
  std::ofstream(path) << text;
  return path;
}

// Shaped like upstream torchbench.yaml: an anchor on a null list (very_slow), an anchor on a
// list reused as an element of other lists (DETECTRON2_MODELS), `~` entries, maps inside
// `tolerance:` (freezing, iou_thresholds, accuracy_check_runs), keys zoobench does not use.
const char* kTorchbenchYaml = R"YAML(
batch_size:
  training:
    demucs: 4
    densenet121: 4
  inference:
    timm_efficientdet: 32

dont_change_batch_size:
  - demucs

tolerance:
  higher:
    - alexnet
  even_higher:
    - yolov3
  higher_fp16:
    - drq
  higher_bf16:
    - doctr_reco_predictor
  higher_bf16_xpu:
    - squeezenet1_1
  freezing:
    even_higher:
      - mobilenet_v2
  cosine:
    - cosine_model
  use_iou_for_bool_masks:
    - sam
    - vision_maskrcnn
  iou_thresholds:
    sam: 0.95
  accuracy_check_runs:
    sam: 5

require_larger_multiplier_for_smaller_tensor:
  - yolov3

very_slow: &VERY_SLOW_MODELS

slow:
  - *VERY_SLOW_MODELS
  - demucs

non_deterministic:
  - mobilenet_v3_large

disable_cudagraph:
  - tts_angular

canary_models:
  - torchrec_dlrm

detectron2_models: &DETECTRON2_MODELS
  - detectron2_fasterrcnn_r_50_c4
  - detectron2_maskrcnn_r_50_fpn

only_training:
  - *DETECTRON2_MODELS
  - tts_angular

skip:
  all:
    - ~
    - hf_clip
    - [nested_a, [nested_b]]
  device:
    cpu:
      - sam_fast
    cuda: []
    xpu:
      - *DETECTRON2_MODELS
  test:
    training:
      - *DETECTRON2_MODELS
      - maml
  control_flow:
    - fastNLP_Bert
  multiprocess:
    - simple_gpt

accuracy:
  skip:
    large_models:
      - llama_v2_7b_16h
    eager_not_deterministic:
      - pytorch_unet
  max_batch_size:
    pytorch_unet: 2

zoobench:
  tolerance_overrides:
    deit_base_distilled_patch16_224:
      tolerance: 0.02
      reason: max abs just over, mean well inside
    only_training_override:
      tolerance: 0.5
      mode: training
      reason: training only
  loss_scale:
    mobilevit_s: 0.001
  patches:
    vision_maskrcnn: [torchvision_roi_align]
  training_patches:
    vision_maskrcnn: [packed_dropout]
)YAML";

struct Expected {
  double tolerance;
  bool cosine;
};

void expect_tolerance(const SuiteConfig& config, const std::string& model, Mode mode,
                      Precision precision, const std::string& device, Expected expected) {
  ToleranceDecision d = config.tolerance(model, mode, precision, device, /*cosine_flag=*/false);
  EXPECT_DOUBLE_EQ(d.tolerance, expected.tolerance)
      << config.suite() << " " << model << " " << mode_name(mode) << " "
      << precision_name(precision) << " " << device << " (source " << d.source << ")";
  EXPECT_EQ(d.cosine, expected.cosine) << config.suite() << " " << model << " " << mode_name(mode)
                                       << " " << precision_name(precision) << " " << device;
}

class TorchbenchYaml : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = SuiteConfig::load(write(dir_, "torchbench.yaml", kTorchbenchYaml), "torchbench");
  }
  ScratchDir dir_;
  SuiteConfig config_;
};

TEST_F(TorchbenchYaml, SkipListsIncludingAnchorsAndNestedLists) {
  const auto cpu = "cpu", cuda = "cuda";
  EXPECT_TRUE(config_.skip_reason("hf_clip", cuda, Mode::kInference, false).has_value());
  EXPECT_TRUE(config_.skip_reason("nested_a", cpu, Mode::kInference, false).has_value());
  EXPECT_TRUE(config_.skip_reason("nested_b", cpu, Mode::kInference, false).has_value());
  EXPECT_NE(config_.skip_reason("hf_clip", cpu, Mode::kInference, false)->find("skip.all"),
            std::string::npos);

  EXPECT_TRUE(config_.skip_reason("sam_fast", cpu, Mode::kInference, false).has_value());
  EXPECT_FALSE(config_.skip_reason("sam_fast", cuda, Mode::kInference, false).has_value());
  EXPECT_TRUE(config_.skip_reason("detectron2_maskrcnn_r_50_fpn", "xpu", Mode::kInference, false)
                  .has_value());

  // skip.test.training through an anchor, and only_training (upstream: these models have no
  // eval mode to check) through the same anchor.
  EXPECT_TRUE(config_.skip_reason("maml", cpu, Mode::kTraining, false).has_value());
  EXPECT_FALSE(config_.skip_reason("maml", cpu, Mode::kInference, false).has_value());
  EXPECT_TRUE(config_.skip_reason("detectron2_fasterrcnn_r_50_c4", cuda, Mode::kTraining, false)
                  .has_value());
  EXPECT_TRUE(config_.skip_reason("tts_angular", cuda, Mode::kInference, false).has_value());
  EXPECT_FALSE(config_.skip_reason("tts_angular", cuda, Mode::kTraining, false).has_value());

  // accuracy.skip.large_models only for accuracy runs.
  EXPECT_TRUE(config_.skip_reason("llama_v2_7b_16h", cuda, Mode::kInference, /*accuracy=*/true)
                  .has_value());
  EXPECT_FALSE(config_.skip_reason("llama_v2_7b_16h", cuda, Mode::kInference, /*accuracy=*/false)
                   .has_value());

  EXPECT_FALSE(config_.skip_reason("resnet18", cuda, Mode::kTraining, true).has_value());
  EXPECT_FALSE(config_.skip_reason("~", cpu, Mode::kInference, false).has_value());
}

// What the exporter takes (exporter_view): the yaml's shape, every list flattened (anchors,
// nested lists and `~` resolved as the harness resolves them), nothing of the harness's own.
TEST_F(TorchbenchYaml, TheExportersViewIsTheHarnesssReading) {
  const nlohmann::json view = config_.exporter_view();
  EXPECT_EQ(view["batch_size"]["training"]["demucs"], 4);
  EXPECT_FALSE(view["batch_size"]["inference"].contains("demucs"));
  EXPECT_EQ(view["batch_size"]["inference"]["timm_efficientdet"], 32);
  EXPECT_EQ(view["dont_change_batch_size"], nlohmann::json({"demucs"}));
  EXPECT_EQ(view["skip"]["all"], nlohmann::json({"hf_clip", "nested_a", "nested_b"}));
  EXPECT_EQ(view["skip"]["device"]["xpu"],
            nlohmann::json({"detectron2_fasterrcnn_r_50_c4", "detectron2_maskrcnn_r_50_fpn"}));
  EXPECT_EQ(view["only_training"], nlohmann::json({"detectron2_fasterrcnn_r_50_c4",
                                                   "detectron2_maskrcnn_r_50_fpn", "tts_angular"}));
  EXPECT_EQ(view["accuracy"]["max_batch_size"]["pytorch_unet"], 2);
  EXPECT_EQ(view["canary_models"], nlohmann::json({"torchrec_dlrm"}));
  EXPECT_TRUE(view["zoobench"]["image_size"].is_null());
  EXPECT_FALSE(view.contains("tolerance"));
}

TEST_F(TorchbenchYaml, CanaryNonDeterministic) {
  EXPECT_TRUE(config_.is_canary("torchrec_dlrm"));
  EXPECT_FALSE(config_.is_canary("resnet18"));
  EXPECT_TRUE(config_.is_non_deterministic("mobilenet_v3_large"));
  EXPECT_FALSE(config_.is_non_deterministic("resnet18"));
  // accuracy.skip.eager_not_deterministic is another rule, and upstream's applies it in training
  // only (torchbench.py's skip_accuracy_check_as_eager_non_deterministic).
  EXPECT_FALSE(config_.is_non_deterministic("pytorch_unet"));
  EXPECT_TRUE(config_.eager_not_deterministic("pytorch_unet", Mode::kTraining));
  EXPECT_FALSE(config_.eager_not_deterministic("pytorch_unet", Mode::kInference));
  EXPECT_FALSE(config_.eager_not_deterministic("resnet18", Mode::kTraining));
}

// Upstream's accuracy settings per model: accuracy.max_batch_size caps the accuracy batch, and
// torchbench models train in eval mode for the check unless only_training (common.py's
// use_eval_mode, torchbench.py's model.train() for only_training); timm_models and huggingface
// train in train mode.
TEST_F(TorchbenchYaml, AccuracyBatchCapAndEvalModeTraining) {
  EXPECT_EQ(config_.accuracy_max_batch_size("pytorch_unet"), 2);
  EXPECT_FALSE(config_.accuracy_max_batch_size("resnet18").has_value());
  EXPECT_TRUE(config_.trains_in_eval_mode_for_accuracy("resnet18"));
  EXPECT_FALSE(config_.trains_in_eval_mode_for_accuracy("tts_angular"));
  EXPECT_FALSE(config_.trains_in_eval_mode_for_accuracy("detectron2_maskrcnn_r_50_fpn"));
  EXPECT_FALSE(SuiteConfig("timm_models").trains_in_eval_mode_for_accuracy("resnet18"));
  EXPECT_FALSE(SuiteConfig("huggingface").trains_in_eval_mode_for_accuracy("BertForMaskedLM"));
  EXPECT_TRUE(config_.disables_cudagraphs("tts_angular"));
  EXPECT_FALSE(config_.disables_cudagraphs("resnet18"));
}

// Upstream torchbench.py (PyTorch 2.11):
//   tolerance = 1e-4
//   fp16/amp: higher_fp16 -> 1e-2; even_higher -> 8e-2; else 1e-3   (returns)
//   bf16:     higher_bf16 -> 1e-2                                     (returns)
//   training on cuda: 1e-3; cosine list -> cosine; higher -> 1e-3; even_higher -> 8e-2
TEST_F(TorchbenchYaml, UpstreamTorchbenchTolerances) {
  const auto F32 = Precision::kFloat32, F16 = Precision::kFloat16, BF16 = Precision::kBFloat16,
             AMP = Precision::kAmp;
  const auto INF = Mode::kInference, TRAIN = Mode::kTraining;
  // A model on no list.
  expect_tolerance(config_, "resnet18", INF, F32, "cpu", {1e-4, false});
  expect_tolerance(config_, "resnet18", INF, F32, "cuda", {1e-4, false});
  expect_tolerance(config_, "resnet18", TRAIN, F32, "cpu", {1e-4, false});
  expect_tolerance(config_, "resnet18", TRAIN, F32, "cuda", {1e-3, false});
  expect_tolerance(config_, "resnet18", INF, F16, "cuda", {1e-3, false});
  expect_tolerance(config_, "resnet18", TRAIN, AMP, "cuda", {1e-3, false});
  expect_tolerance(config_, "resnet18", INF, BF16, "cuda", {1e-4, false});
  expect_tolerance(config_, "resnet18", TRAIN, BF16, "cuda", {1e-3, false});
  // higher: same 1e-3 as any cuda training.
  expect_tolerance(config_, "alexnet", TRAIN, F32, "cuda", {1e-3, false});
  expect_tolerance(config_, "alexnet", TRAIN, F32, "cpu", {1e-4, false});
  // even_higher: cuda training, and fp16/amp on any device and mode.
  expect_tolerance(config_, "yolov3", TRAIN, F32, "cuda", {8e-2, false});
  expect_tolerance(config_, "yolov3", TRAIN, F32, "cpu", {1e-4, false});
  expect_tolerance(config_, "yolov3", INF, F32, "cuda", {1e-4, false});
  expect_tolerance(config_, "yolov3", INF, F16, "cuda", {8e-2, false});
  expect_tolerance(config_, "yolov3", TRAIN, AMP, "cpu", {8e-2, false});
  expect_tolerance(config_, "yolov3", INF, BF16, "cuda", {1e-4, false});
  // cosine: only for cuda training; the tolerance stays 1e-3.
  expect_tolerance(config_, "cosine_model", TRAIN, F32, "cuda", {1e-3, true});
  expect_tolerance(config_, "cosine_model", TRAIN, F32, "cpu", {1e-4, false});
  expect_tolerance(config_, "cosine_model", TRAIN, F16, "cuda", {1e-3, false});
  // higher_fp16 / higher_bf16 apply to their own dtype only.
  expect_tolerance(config_, "drq", INF, F16, "cpu", {1e-2, false});
  expect_tolerance(config_, "drq", TRAIN, AMP, "cuda", {1e-2, false});
  expect_tolerance(config_, "drq", INF, BF16, "cuda", {1e-4, false});
  expect_tolerance(config_, "drq", INF, F32, "cuda", {1e-4, false});
  expect_tolerance(config_, "doctr_reco_predictor", INF, BF16, "cpu", {1e-2, false});
  expect_tolerance(config_, "doctr_reco_predictor", TRAIN, BF16, "cuda", {1e-2, false});
  expect_tolerance(config_, "doctr_reco_predictor", INF, F16, "cuda", {1e-3, false});
  // higher_bf16_xpu is for xpu only.
  expect_tolerance(config_, "squeezenet1_1", INF, BF16, "cuda", {1e-4, false});
}

TEST_F(TorchbenchYaml, CosineFlagFromTheCommandLineIsKept) {
  EXPECT_TRUE(
      config_.tolerance("resnet18", Mode::kInference, Precision::kFloat32, "cpu", true).cosine);
  EXPECT_TRUE(config_.tolerance("drq", Mode::kInference, Precision::kFloat16, "cuda", true).cosine);
}

TEST_F(TorchbenchYaml, ComparisonFlagsFromTheLists) {
  ToleranceDecision yolo =
      config_.tolerance("yolov3", Mode::kInference, Precision::kFloat32, "cuda", false);
  EXPECT_TRUE(yolo.larger_multiplier_for_smaller_tensor);
  EXPECT_FALSE(yolo.use_iou_for_bool);
  ToleranceDecision maskrcnn =
      config_.tolerance("vision_maskrcnn", Mode::kInference, Precision::kFloat32, "cuda", false);
  EXPECT_TRUE(maskrcnn.use_iou_for_bool);
  EXPECT_DOUBLE_EQ(maskrcnn.iou_threshold, 0.99);  // upstream's default
  ToleranceDecision sam =
      config_.tolerance("sam", Mode::kInference, Precision::kFloat32, "cuda", false);
  EXPECT_TRUE(sam.use_iou_for_bool);
  EXPECT_DOUBLE_EQ(sam.iou_threshold, 0.95);  // tolerance.iou_thresholds
  EXPECT_FALSE(config_.tolerance("resnet18", Mode::kInference, Precision::kFloat32, "cuda", false)
                   .larger_multiplier_for_smaller_tensor);
  // tolerance.accuracy_check_runs: sam's verdict is a vote over 5 compiled runs, others' one run.
  EXPECT_EQ(config_.accuracy_check_runs("sam"), 5);
  EXPECT_EQ(config_.accuracy_check_runs("resnet18"), 1);
}

TEST_F(TorchbenchYaml, ZoobenchOverridesCarryTheirReason) {
  for (Mode mode : {Mode::kInference, Mode::kTraining}) {
    ToleranceDecision d = config_.tolerance("deit_base_distilled_patch16_224", mode,
                                            Precision::kFloat32, "cuda", false);
    EXPECT_DOUBLE_EQ(d.tolerance, 0.02);
    EXPECT_EQ(d.source, "zoobench:override (max abs just over, mean well inside)");
  }
  ToleranceDecision training = config_.tolerance("only_training_override", Mode::kTraining,
                                                 Precision::kFloat32, "cpu", false);
  EXPECT_DOUBLE_EQ(training.tolerance, 0.5);
  ToleranceDecision inference = config_.tolerance("only_training_override", Mode::kInference,
                                                  Precision::kFloat32, "cpu", false);
  EXPECT_DOUBLE_EQ(inference.tolerance, 1e-4);
  EXPECT_EQ(inference.source.find("zoobench"), std::string::npos) << inference.source;
}

TEST_F(TorchbenchYaml, LossScaleAndPatches) {
  EXPECT_DOUBLE_EQ(config_.loss_scale("mobilevit_s"), 0.001);
  EXPECT_DOUBLE_EQ(config_.loss_scale("resnet18"), 1.0);
  EXPECT_EQ(config_.patches_for("vision_maskrcnn", Mode::kInference),
            (std::vector<std::string>{"torchvision_roi_align"}));
  EXPECT_EQ(config_.patches_for("vision_maskrcnn", Mode::kTraining),
            (std::vector<std::string>{"torchvision_roi_align", "packed_dropout"}));
  EXPECT_TRUE(config_.patches_for("resnet18", Mode::kTraining).empty());
}

// Upstream huggingface.py (PyTorch 2.11): training higher_training -> 2e-2 else 1e-2;
// inference on cpu and higher_inference_cpu -> 5e-3, higher_inference -> 4e-3, else 1e-3.
TEST(SuiteTolerances, UpstreamHuggingfaceRule) {
  ScratchDir dir;
  SuiteConfig config = SuiteConfig::load(write(dir, "huggingface.yaml", R"YAML(
tolerance:
  higher_training:
    - MT5ForConditionalGeneration
  higher_max_autotune_training: []
  higher_inference:
    - GPT2ForSequenceClassification
    - RobertaForQuestionAnswering
  higher_inference_cpu:
    - GPT2ForSequenceClassification
    - MobileBertForQuestionAnswering
)YAML"),
                                         "huggingface");
  const auto F32 = Precision::kFloat32, BF16 = Precision::kBFloat16;
  const auto INF = Mode::kInference, TRAIN = Mode::kTraining;
  expect_tolerance(config, "BertForMaskedLM", TRAIN, F32, "cuda", {1e-2, false});
  expect_tolerance(config, "BertForMaskedLM", TRAIN, F32, "cpu", {1e-2, false});
  expect_tolerance(config, "BertForMaskedLM", TRAIN, BF16, "cuda", {1e-2, false});
  expect_tolerance(config, "MT5ForConditionalGeneration", TRAIN, F32, "cuda", {2e-2, false});
  expect_tolerance(config, "MT5ForConditionalGeneration", INF, F32, "cuda", {1e-3, false});
  expect_tolerance(config, "BertForMaskedLM", INF, F32, "cuda", {1e-3, false});
  expect_tolerance(config, "BertForMaskedLM", INF, BF16, "cpu", {1e-3, false});
  expect_tolerance(config, "GPT2ForSequenceClassification", INF, F32, "cpu", {5e-3, false});
  expect_tolerance(config, "GPT2ForSequenceClassification", INF, F32, "cuda", {4e-3, false});
  expect_tolerance(config, "GPT2ForSequenceClassification", TRAIN, F32, "cpu", {1e-2, false});
  expect_tolerance(config, "RobertaForQuestionAnswering", INF, F32, "cpu", {4e-3, false});
  expect_tolerance(config, "MobileBertForQuestionAnswering", INF, F32, "cpu", {5e-3, false});
  expect_tolerance(config, "MobileBertForQuestionAnswering", INF, F32, "cuda", {1e-3, false});
}

// Upstream timm_models.py (PyTorch 2.11): 1e-3; in training highest_training -> 16e-2,
// even_higher -> 8e-2, higher_training or (amp and higher_amp) -> 4e-2, else 1e-2.
TEST(SuiteTolerances, UpstreamTimmRule) {
  ScratchDir dir;
  SuiteConfig config = SuiteConfig::load(write(dir, "timm_models.yaml", R"YAML(
skip:
  all:
    - ~
  device:
    cpu:
      - ~
batch_size:
  divisors:
    beit_base_patch16_224: 2
tolerance:
  higher_training:
    - inception_v3
    - mobilenetv3_large_100
    - both_lists
  higher_fp16_xpu:
    - botnet26t_256
  higher_amp:
    - amp_model
  even_higher:
    - deit_base_distilled_patch16_224
    - both_lists
  even_higher_max_autotune: []
  highest_training:
    - beit_base_patch16_224
  freezing:
    - adv_inception_v3
  cosine: []
scaled_compute_loss:
  - mobilevit_s
require_larger_multiplier_for_smaller_tensor:
  - inception_v3
accuracy:
  skip:
    eager_not_deterministic: []
)YAML"),
                                         "timm_models");
  const auto F32 = Precision::kFloat32, F16 = Precision::kFloat16, AMP = Precision::kAmp;
  const auto INF = Mode::kInference, TRAIN = Mode::kTraining;
  expect_tolerance(config, "resnet50", INF, F32, "cuda", {1e-3, false});
  expect_tolerance(config, "resnet50", INF, F16, "cpu", {1e-3, false});
  expect_tolerance(config, "beit_base_patch16_224", INF, F32, "cuda", {1e-3, false});
  expect_tolerance(config, "resnet50", TRAIN, F32, "cuda", {1e-2, false});
  expect_tolerance(config, "resnet50", TRAIN, F32, "cpu", {1e-2, false});
  expect_tolerance(config, "beit_base_patch16_224", TRAIN, F32, "cuda", {16e-2, false});
  expect_tolerance(config, "deit_base_distilled_patch16_224", TRAIN, F32, "cuda", {8e-2, false});
  expect_tolerance(config, "inception_v3", TRAIN, F32, "cuda", {4e-2, false});
  expect_tolerance(config, "both_lists", TRAIN, F32, "cuda", {8e-2, false});  // even_higher first
  expect_tolerance(config, "amp_model", TRAIN, AMP, "cuda", {4e-2, false});
  expect_tolerance(config, "amp_model", TRAIN, F32, "cuda", {1e-2, false});
  expect_tolerance(config, "botnet26t_256", TRAIN, F16, "cuda",
                   {1e-2, false});  // xpu only upstream
  EXPECT_TRUE(config.tolerance("inception_v3", INF, F32, "cuda", false)
                  .larger_multiplier_for_smaller_tensor);
  EXPECT_FALSE(config.skip_reason("resnet50", "cpu", INF, true).has_value());
}

// A suite without a rule of its own (custom, demo) uses torchbench's; `zoobench.tolerance_rule`
// picks another.
TEST(SuiteTolerances, RuleBySuiteName) {
  expect_tolerance(SuiteConfig("demo"), "x", Mode::kTraining, Precision::kFloat32, "cuda",
                   {1e-3, false});
  expect_tolerance(SuiteConfig("timm_models"), "x", Mode::kTraining, Precision::kFloat32, "cpu",
                   {1e-2, false});
  expect_tolerance(SuiteConfig("huggingface"), "x", Mode::kInference, Precision::kFloat32, "cpu",
                   {1e-3, false});
  ScratchDir dir;
  SuiteConfig config = SuiteConfig::load(
      write(dir, "ascend.yaml", "zoobench:\n  tolerance_rule: timm_models\n"), "ascend");
  expect_tolerance(config, "x", Mode::kTraining, Precision::kFloat32, "cpu", {1e-2, false});
}

// Every error in a yaml names file:line.
void expect_usage_error_at(const std::string& path, int line) {
  try {
    SuiteConfig::load(path, "torchbench");
    ADD_FAILURE() << "loading " << path << " did not throw";
  } catch (const UsageError& e) {
    const std::string where = path + ":" + std::to_string(line) + ":";
    EXPECT_EQ(std::string(e.what()).rfind(where, 0), 0u)
        << e.what() << " (expected it to start with " << where << ")";
  }
}

TEST(SuiteConfigErrors, BadYamlNamesFileAndLine) {
  ScratchDir dir;
  expect_usage_error_at(write(dir, "unclosed.yaml", "skip:\n  all: [a, b\n  device: {}\n"), 3);
  expect_usage_error_at(write(dir, "tabs.yaml", "skip:\n  all:\n    - a\n\t- b\n"), 4);
  expect_usage_error_at(write(dir, "batch.yaml", "batch_size:\n  training:\n    demucs: four\n"),
                        3);
  expect_usage_error_at(
      write(dir, "override.yaml",
            "zoobench:\n  tolerance_overrides:\n    deit:\n      tolerance: 0.02\n"),
      4);
  expect_usage_error_at(
      write(
          dir, "override_number.yaml",
          "zoobench:\n  tolerance_overrides:\n    deit:\n      tolerance: high\n      reason: x\n"),
      4);
}

TEST(SuiteConfigErrors, MissingFileAndNonMappingTopLevel) {
  ScratchDir dir;
  EXPECT_THROW(SuiteConfig::load(dir.file("nope.yaml"), "torchbench"), UsageError);
  EXPECT_THROW(SuiteConfig::load(write(dir, "list.yaml", "- a\n- b\n"), "torchbench"), UsageError);
  // An empty file is an empty configuration.
  SuiteConfig empty = SuiteConfig::load(write(dir, "empty.yaml", ""), "torchbench");
  EXPECT_FALSE(empty.skip_reason("anything", "cpu", Mode::kInference, true).has_value());
}

// The message of the UsageError that loading `path` throws; fails the test when none is thrown.
std::string usage_error(const std::string& path) {
  try {
    SuiteConfig::load(path, "torchbench");
  } catch (const UsageError& e) {
    return e.what();
  }
  ADD_FAILURE() << "loading " << path << " did not throw UsageError";
  return "";
}

void expect_message_has(const std::string& message, const std::vector<std::string>& parts) {
  for (const auto& part : parts) {
    EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
  }
}

// `yaml`, written to a file and loaded, is refused with a message that starts with file:line
// and holds every one of `parts`.
void expect_refused_at(const std::string& yaml, int line, const std::vector<std::string>& parts) {
  SCOPED_TRACE(yaml);
  ScratchDir dir;
  const std::string path = write(dir, "refused.yaml", yaml);
  const std::string message = usage_error(path);
  EXPECT_EQ(message.rfind(path + ":" + std::to_string(line) + ":", 0), 0u) << message;
  expect_message_has(message, parts);
}

// A misspelt key at any level the reader knows was ignored without a word (`skipp:` skipped
// nothing); it is an error naming file:line, the key and the closest known key.
TEST(SuiteConfigErrors, UnknownKeysNameTheClosestKnownKey) {
  struct Typo {
    const char* yaml;
    int line;
    const char* key;
    const char* hint;
  };
  const std::vector<Typo> typos = {
      {"skipp:\n  all: [a]\n", 1, "'skipp' at the top level", "did you mean 'skip'?"},
      {"skip:\n  all: [a]\n  devise:\n    cpu: [b]\n", 3, "'devise' in `skip`",
       "did you mean 'device'?"},
      {"skip:\n  device:\n    cudaa: [b]\n", 3, "'cudaa' in `skip.device`", "did you mean 'cuda'?"},
      {"skip:\n  test:\n    trainig: [b]\n", 3, "'trainig' in `skip.test`",
       "did you mean 'training'?"},
      {"tolerance:\n  highr: [alexnet]\n", 2, "'highr' in `tolerance`", "did you mean 'higher'?"},
      {"tolerance:\n  freezing:\n    even_highr: [a]\n", 3, "'even_highr' in `tolerance.freezing`",
       "did you mean 'even_higher'?"},
      {"accuracy:\n  skip:\n    large_model: [a]\n", 3, "'large_model' in `accuracy.skip`",
       "did you mean 'large_models'?"},
      {"batch_size:\n  trainning:\n    demucs: 4\n", 2, "'trainning' in `batch_size`",
       "did you mean 'training'?"},
      {"zoobench:\n  tolerance_overides: {}\n", 2, "'tolerance_overides' in `zoobench`",
       "did you mean 'tolerance_overrides'?"},
      {"zoobench:\n  tolerance_overrides:\n    deit:\n      tolerance: 0.02\n      reson: x\n", 5,
       "'reson' in `zoobench.tolerance_overrides.deit`", "did you mean 'reason'?"},
      // Nothing close: every key known there is listed.
      {"frobnicate: 1\n", 1, "'frobnicate' at the top level", "known here: batch_size,"},
  };
  for (const auto& typo : typos)
    expect_refused_at(typo.yaml, typo.line, {std::string("unknown key ") + typo.key, typo.hint});
}

// A key given twice in one mapping: yaml-cpp read the first, the exporter's PyYAML the last, so
// the two followed different lines. Refused with the file, line, key and the first line; the
// same key in two different mappings is not a duplicate.
TEST(SuiteConfigErrors, DuplicateKeysAreRefusedWithFileLineAndKey) {
  struct Duplicate {
    const char* yaml;
    int line;
    const char* said;
  };
  const std::vector<Duplicate> duplicates = {
      {"skip:\n  all: [a]\nskip:\n  all: [b]\n", 3, "duplicate key 'skip' (first on line 1)"},
      {"batch_size:\n  training:\n    demucs: 4\n    demucs: 8\n", 4,
       "duplicate key 'demucs' (first on line 3)"},
      {"zoobench:\n  loss_scale: {bert: 0.5, bert: 2}\n", 2, "duplicate key 'bert'"},
  };
  for (const auto& duplicate : duplicates)
    expect_refused_at(duplicate.yaml, duplicate.line, {duplicate.said, "keep one"});
  ScratchDir dir;
  EXPECT_NO_THROW(
      SuiteConfig::load(write(dir, "apart.yaml",
                              "skip:\n  test:\n    training: [a]\n    inference: [a]\n"
                              "batch_size:\n  training:\n    a: 2\n  inference:\n    a: 2\n"),
                        "apart"));
}

// Ten lists of ten aliases of the list before: 10^9 names once flattened, from twelve lines. The
// walk stops at its limit of nodes visited (1,000,000) instead of hanging `zoobench list`; an
// alias inside its own anchor (a cycle) stops at the nesting limit instead of the stack's end.
TEST(SuiteConfigErrors, AliasBombsAreRefusedNotExpanded) {
  ScratchDir dir;
  std::string bomb =
      "skip:\n  all:\n    - &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int level = 1; level < 10; ++level) {
    const std::string alias = "*l" + std::to_string(level - 1);
    bomb += "    - &l" + std::to_string(level) + " [" + alias;
    for (int i = 1; i < 10; ++i) bomb += ", " + alias;
    bomb += "]\n";
  }
  const std::string bomb_path = write(dir, "bomb.yaml", bomb);
  const auto start = std::chrono::steady_clock::now();
  expect_message_has(usage_error(bomb_path), {bomb_path + ":", "more than 1000000 entries"});
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10.0);

  const std::string cycle_path = write(dir, "cycle.yaml", "skip:\n  all: &a [x, *a]\n");
  expect_message_has(usage_error(cycle_path), {cycle_path + ":", "nested more than 64 deep"});
}

// An override's tolerance, mode and the suite's tolerance rule were taken as written: -1 or NaN
// made every comparison fail or pass, `mode: trainnig` silently meant inference, an unknown rule
// silently meant torchbench's.
TEST(SuiteConfigErrors, OverrideValuesOutsideTheirRangeNameTheAllowedValues) {
  struct Bad {
    const char* yaml;
    int line;
    std::vector<std::string> parts;
  };
  const std::string override_of = "zoobench:\n  tolerance_overrides:\n    deit:\n      reason: x\n";
  const std::vector<Bad> bad = {
      {"      tolerance: -1\n", 5, {"'deit' is -1", "greater than 0 and at most 1"}},
      {"      tolerance: .nan\n", 5, {"'deit' is .nan", "greater than 0 and at most 1"}},
      {"      tolerance: 0\n", 5, {"'deit' is 0", "greater than 0 and at most 1"}},
      {"      tolerance: 2\n", 5, {"'deit' is 2", "greater than 0 and at most 1"}},
      {"      tolerance: 0.02\n      mode: trainnig\n",
       6,
       {"mode 'trainnig'", "expected training or inference", "did you mean 'training'?"}},
  };
  for (const auto& b : bad) {
    SCOPED_TRACE(b.yaml);
    ScratchDir dir;
    const std::string path = write(dir, "override.yaml", override_of + b.yaml);
    const std::string message = usage_error(path);
    EXPECT_EQ(message.rfind(path + ":" + std::to_string(b.line) + ":", 0), 0u) << message;
    expect_message_has(message, b.parts);
  }
  ScratchDir dir;
  const std::string path = write(dir, "rule.yaml", "zoobench:\n  tolerance_rule: timm\n");
  const std::string message = usage_error(path);
  EXPECT_EQ(message.rfind(path + ":2:", 0), 0u) << message;
  expect_message_has(message, {"tolerance_rule 'timm'", "torchbench, huggingface, timm_models",
                               "did you mean 'timm_models'?"});
}

// Per-model numbers were taken as written: accuracy_check_runs 0 or -1 silently meant 1, an IoU
// threshold above 1 failed every mask (0 passed every one), a loss_scale of 0, -1 or NaN trained
// nothing, the wrong way or into NaN. Each is an error naming file:line, the key, the model, the
// value and the allowed range.
TEST(SuiteConfigErrors, PerModelNumbersOutsideTheirRangeNameKeyValueAndRange) {
  struct Bad {
    std::string yaml;
    std::vector<std::string> parts;
  };
  const std::string runs = "tolerance:\n  accuracy_check_runs:\n    sam: ";
  const std::string runs_range = "expected a whole number from 1 to 100";
  const std::string iou = "tolerance:\n  iou_thresholds:\n    sam: ";
  const std::string iou_range = "expected a number greater than 0 and at most 1";
  const std::string scale = "zoobench:\n  loss_scale:\n    mobilevit_s: ";
  const std::string scale_range = "expected a finite number greater than 0";
  const std::vector<Bad> bad = {
      {runs + "0\n", {"tolerance.accuracy_check_runs for 'sam' is 0", runs_range}},
      {runs + "-1\n", {"for 'sam' is -1", runs_range}},
      {runs + "101\n", {"for 'sam' is 101", runs_range}},
      {runs + "1.5\n", {"for 'sam' is 1.5", runs_range}},
      {runs + "1180591620717411303424\n", {"for 'sam' is 1180591620717411303424", runs_range}},
      {runs + "many\n", {"for 'sam' is many", runs_range}},
      {runs + "[3]\n", {"for 'sam' is not a number", runs_range}},
      {iou + "0\n", {"tolerance.iou_thresholds for 'sam' is 0", iou_range}},
      {iou + "-0.5\n", {"for 'sam' is -0.5", iou_range}},
      {iou + "1.01\n", {"for 'sam' is 1.01", iou_range}},
      {iou + ".nan\n", {"for 'sam' is .nan", iou_range}},
      {iou + "high\n", {"for 'sam' is high", iou_range}},
      {scale + "0\n", {"zoobench.loss_scale for 'mobilevit_s' is 0", scale_range}},
      {scale + "-0.001\n", {"for 'mobilevit_s' is -0.001", scale_range}},
      {scale + ".nan\n", {"for 'mobilevit_s' is .nan", scale_range}},
      {scale + ".inf\n", {"for 'mobilevit_s' is .inf", scale_range}},
      {scale + "1e400\n", {"for 'mobilevit_s' is 1e400", scale_range}},
  };
  for (const auto& b : bad) {
    SCOPED_TRACE(b.yaml);
    ScratchDir dir;
    const std::string path = write(dir, "numbers.yaml", b.yaml);
    const std::string message = usage_error(path);
    EXPECT_EQ(message.rfind(path + ":3:", 0), 0u) << message;
    expect_message_has(message, b.parts);
  }

  // The ends of each range are allowed.
  ScratchDir dir;
  const SuiteConfig edges =
      SuiteConfig::load(write(dir, "edges.yaml",
                              "tolerance:\n  accuracy_check_runs:\n    a: 1\n    b: 100\n"
                              "  iou_thresholds:\n    a: 1\n    b: 0.001\n"
                              "zoobench:\n  loss_scale:\n    a: 1e-6\n    b: 1000\n"),
                        "torchbench");
  EXPECT_EQ(edges.accuracy_check_runs("a"), 1);
  EXPECT_EQ(edges.accuracy_check_runs("b"), 100);
  EXPECT_DOUBLE_EQ(
      edges.tolerance("a", Mode::kInference, Precision::kFloat32, "cpu", false).iou_threshold, 1.0);
  EXPECT_DOUBLE_EQ(
      edges.tolerance("b", Mode::kInference, Precision::kFloat32, "cpu", false).iou_threshold,
      0.001);
  EXPECT_DOUBLE_EQ(edges.loss_scale("a"), 1e-6);
  EXPECT_DOUBLE_EQ(edges.loss_scale("b"), 1000);
}

// zoobench.switches_off: per model, per backend, with a reason; inductor:MODE falls back to the
// inductor entry, and a backend or model without an entry gets nothing.
TEST(SuiteSwitchesOff, PerModelAndBackendWithTheirReason) {
  ScratchDir dir;
  SuiteConfig config = SuiteConfig::load(
      write(dir, "s.yaml",
            "zoobench:\n  switches_off:\n    longformer:\n      jit: [freeze]\n"
            "      inductor: [pattern_matcher, fusion]\n      inductor:max-autotune: [fusion]\n"
            "      reason: freeze miscompiles it\n"),
      "s");
  auto jit = config.switches_off("longformer", "jit");
  EXPECT_EQ(jit.switches, (std::vector<std::string>{"freeze"}));
  EXPECT_EQ(jit.reason, "freeze miscompiles it");
  EXPECT_EQ(config.switches_off("longformer", "inductor:reduce-overhead").switches,
            (std::vector<std::string>{"fusion", "pattern_matcher"}));
  EXPECT_EQ(config.switches_off("longformer", "inductor:max-autotune").switches,
            (std::vector<std::string>{"fusion"}));
  EXPECT_TRUE(config.switches_off("longformer", "cudagraphs").switches.empty());
  EXPECT_TRUE(config.switches_off("bert", "jit").switches.empty());
  EXPECT_TRUE(config.switches_off("bert", "jit").reason.empty());
}

TEST(SuiteSwitchesOff, AReasonAndABackendAreRequired) {
  ScratchDir dir;
  expect_usage_error_at(write(dir, "no_reason.yaml",
                              "zoobench:\n  switches_off:\n    longformer:\n      jit: [freeze]\n"),
                        4);
  expect_usage_error_at(write(dir, "no_backend.yaml",
                              "zoobench:\n  switches_off:\n    longformer:\n      reason: x\n"),
                        4);
  expect_usage_error_at(
      write(dir, "list.yaml", "zoobench:\n  switches_off:\n    longformer: [freeze]\n"), 3);
}

// The cuDNN switches a model's TorchBench code sets: either or both, each a boolean.
TEST(SuiteCudnnSetByModel, EitherSwitchPerModelAndNothingForOthers) {
  ScratchDir dir;
  SuiteConfig config = SuiteConfig::load(
      write(dir, "s.yaml",
            "zoobench:\n  cudnn_set_by_model:\n"
            "    resnet50: {deterministic: false, benchmark: true}\n"
            "    Super_SloMo: {deterministic: true}\n"),
      "s");
  const CudnnSwitches resnet = config.cudnn_set_by_model("resnet50");
  ASSERT_TRUE(resnet.deterministic && resnet.benchmark);
  EXPECT_FALSE(*resnet.deterministic);
  EXPECT_TRUE(*resnet.benchmark);
  const CudnnSwitches slomo = config.cudnn_set_by_model("Super_SloMo");
  EXPECT_TRUE(slomo.deterministic.value_or(false));
  EXPECT_FALSE(slomo.benchmark.has_value());
  EXPECT_FALSE(config.cudnn_set_by_model("dcgan").any());
}

TEST(SuiteCudnnSetByModel, UnknownSwitchesNonBooleansAndEmptyEntriesAreRefused) {
  ScratchDir dir;
  expect_usage_error_at(write(dir, "unknown.yaml",
                              "zoobench:\n  cudnn_set_by_model:\n    a: {benchmrk: true}\n"),
                        3);
  expect_usage_error_at(write(dir, "value.yaml",
                              "zoobench:\n  cudnn_set_by_model:\n    a: {benchmark: maybe}\n"),
                        3);
  expect_usage_error_at(
      write(dir, "empty.yaml", "zoobench:\n  cudnn_set_by_model:\n    a: {}\n"), 3);
  expect_usage_error_at(
      write(dir, "list.yaml", "zoobench:\n  cudnn_set_by_model:\n    a: [benchmark]\n"), 3);
}

TEST(SuiteStartFirst, RanksFollowTheListAndMemoryHeavyIsASet) {
  ScratchDir dir;
  SuiteConfig config = SuiteConfig::load(
      write(dir, "s.yaml",
            "zoobench:\n  start_first: [big, bigger, medium]\n  memory_heavy: [big, bigger]\n"),
      "s");
  EXPECT_EQ(config.start_rank("big"), std::optional<std::size_t>(0));
  EXPECT_EQ(config.start_rank("bigger"), std::optional<std::size_t>(1));
  EXPECT_EQ(config.start_rank("medium"), std::optional<std::size_t>(2));
  EXPECT_FALSE(config.start_rank("small").has_value());
  EXPECT_TRUE(config.is_memory_heavy("bigger"));
  EXPECT_FALSE(config.is_memory_heavy("medium"));
}

TEST(SuiteStartFirst, AMapNestedListsAndRepeatsAreRefused) {
  ScratchDir dir;
  expect_usage_error_at(write(dir, "map.yaml", "zoobench:\n  start_first: {a: 1}\n"), 2);
  expect_usage_error_at(write(dir, "nested.yaml", "zoobench:\n  start_first: [a, [b]]\n"), 2);
  expect_usage_error_at(write(dir, "twice.yaml", "zoobench:\n  start_first: [a, b, a]\n"), 2);
}

// The suites shipped in the repository load and agree with their own lists.
TEST(ShippedSuites, LoadAndListTheirModels) {
  // Upstream's file names: timm's list is timm_models_list.txt.
  for (const auto& [suite, list] : std::vector<std::pair<std::string, std::string>>{
           {"demo", "demo_models_list.txt"},
           {"torchbench", "torchbench_models_list.txt"},
           {"huggingface", "huggingface_models_list.txt"},
           {"timm_models", "timm_models_list.txt"}}) {
    SCOPED_TRACE(suite);
    const std::string dir = testing::repo_root() + "/suites/";
    EXPECT_NO_THROW(SuiteConfig::load(dir + suite + ".yaml", suite));
    std::vector<ModelListEntry> models = read_model_list(dir + list);
    EXPECT_FALSE(models.empty());
  }
}

// The shipped torchbench.yaml says in words why a model it skips everywhere cannot run.
TEST(ShippedSuites, SkippedModelsSayWhy) {
  SuiteConfig torchbench = SuiteConfig::load(testing::repo_root() + "/suites/torchbench.yaml", "torchbench");
  auto why = torchbench.skip_reason("drq", "cuda", Mode::kInference, false);
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->rfind("skip.all in torchbench.yaml: impossible offline", 0), 0u) << *why;
  EXPECT_FALSE(torchbench.skip_reason("resnet50", "cuda", Mode::kInference, false).has_value());
}

TEST(ReadModelList, TheThreeUpstreamFormats) {
  ScratchDir dir;
  // torchbench: names only.
  auto torchbench = read_model_list(
      write(dir, "tb.txt", "# comment\nresnet18\n\n  alexnet  \nBERT_pytorch # why\n"));
  ASSERT_EQ(torchbench.size(), 3u);
  EXPECT_EQ(torchbench[0].name, "resnet18");
  EXPECT_FALSE(torchbench[0].batch_size.has_value());
  EXPECT_EQ(torchbench[1].name, "alexnet");
  EXPECT_EQ(torchbench[2].name, "BERT_pytorch");
  // timm: `name bs`.
  auto timm =
      read_model_list(write(dir, "timm.txt", "adv_inception_v3 128\nbeit_base_patch16_224 64\n"));
  ASSERT_EQ(timm.size(), 2u);
  EXPECT_EQ(timm[0].name, "adv_inception_v3");
  EXPECT_EQ(timm[0].batch_size, 128);
  EXPECT_EQ(timm[1].batch_size, 64);
  // huggingface: `name,bs`.
  auto hf = read_model_list(write(dir, "hf.txt", "AlbertForMaskedLM,8\r\nBertForMaskedLM,16\n"));
  ASSERT_EQ(hf.size(), 2u);
  EXPECT_EQ(hf[0].name, "AlbertForMaskedLM");
  EXPECT_EQ(hf[0].batch_size, 8);
  EXPECT_EQ(hf[1].name, "BertForMaskedLM");
  EXPECT_EQ(hf[1].batch_size, 16);
}

TEST(ReadModelList, BadBatchSizeNamesFileAndLine) {
  ScratchDir dir;
  const std::string path = write(dir, "bad.txt", "resnet18 4\nalexnet,many\n");
  try {
    read_model_list(path);
    FAIL() << "a bad batch size was accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path + ":2:", 0), 0u) << e.what();
  }
  EXPECT_THROW(read_model_list(dir.file("missing.txt")), UsageError);
}

// A list naming a model twice, or with a junk batch size ("8x" once read as 8, "0", "-3"), or a
// third field, was accepted and failed every model; a FIFO or /dev/zero as the list hung the run
// or read gigabytes. Each is refused with the file and line (or what the path is).
TEST(ReadModelList, DuplicatesJunkAndNonRegularFilesAreRefused) {
  ScratchDir dir;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"resnet18 8\nalexnet\nresnet18 4\n", ":3: 'resnet18' is listed already on line 1"},
      {"resnet18 8x\n", ":1: batch size '8x' is not a whole number"},
      {"resnet18 0\n", ":1: batch size '0'"},
      {"resnet18,-3\n", ":1: batch size '-3'"},
      {"resnet18 99999999999999999999\n", ":1: batch size"},
      {"resnet18 8 fast\n", ":1: 'resnet18 8 fast' has more than a name and a batch size"},
  };
  for (const auto& [text, message] : cases) {
    const std::string path = write(dir, "list.txt", text);
    try {
      read_model_list(path);
      ADD_FAILURE() << text << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr(path + message)) << text;
    }
  }
  const std::string fifo = dir.file("fifo.txt");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THROW(read_model_list(fifo), UsageError);  // returns at once: nothing opens it to read
  EXPECT_THROW(read_model_list("/dev/zero"), UsageError);
  EXPECT_THROW(read_model_list(dir.path()), UsageError);
}

// A list's name becomes zoo/<suite>/<name>/ and results/logs/<name>.log: a path out of them
// (the exporter once deleted `<entry>.partial` for a `../` line) is refused with file and line.
TEST(ReadModelList, NamesThatWouldBePathsAreRefused) {
  ScratchDir dir;
  for (const std::string bad : {"../outside", "a/b", "..", "bell\a"}) {
    const std::string path = write(dir, "names.txt", "resnet18\n" + bad + " 4\n");
    try {
      read_model_list(path);
      FAIL() << bad << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr(path + ":2:")) << bad;
      EXPECT_THAT(e.what(), ::testing::HasSubstr("cannot be a model's name")) << bad;
    }
  }
}

}  // namespace
}  // namespace zoobench
