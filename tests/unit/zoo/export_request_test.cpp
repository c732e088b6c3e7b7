// What `zoobench run` asks of the exporter: whether a zoo entry serves a run (the roles it needs,
// the device it was traced on, an AOTInductor package recorded as impossible), the exporter's
// command line (no package unless a role asks for one), the exporter's index, and the batch
// size's own zoo folder.
#include "zoobench/zoo/export_request.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "testing/testing.h"

namespace zoobench {
namespace {

using testing::ScratchDir;

// A manifest with `artifacts` (role -> traced_on or device), and optionally a recorded failure.
std::string write_entry(const ScratchDir& dir, const std::string& artifacts,
                        const std::string& failures = "{}", const std::string& rebuild = "") {
  const std::string path = dir.file("zoo/torchbench/m/manifest.json");
  std::filesystem::create_directories(dir.file("zoo/torchbench/m"));
  std::ofstream(path) << R"({"format": "zoobench-manifest/1", "name": "m", "suite": "torchbench",
    "source": "torchvision:resnet18", "batch_size": 4, "artifacts": )"
                      << artifacts
                      << R"(, "inputs": {"path": "inputs.pt", "sha256": "dd", "spec": []},
    "aoti_failures": )"
                      << failures << (rebuild.empty() ? "" : ", \"rebuild\": " + rebuild) << "}";
  return path;
}

std::string read_text_of(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

ExportRequest request_for(std::vector<std::string> roles, const std::string& device = "cuda") {
  ExportRequest request;
  request.device_type = device;
  request.roles = std::move(roles);
  request.zoo_dir = "zoo";
  request.suites_dir = "suites";
  return request;
}

TEST(ExportRequest, AnEntryServesARunOnlyWithEveryRoleItNeedsTracedOnItsDevice) {
  ScratchDir dir;
  EXPECT_EQ(missing_for(dir.file("zoo/torchbench/m/manifest.json"), request_for({"eval"})),
            "not in the zoo");
  const std::string eval_only = write_entry(
      dir,
      R"({"eval": {"path": "eval.pt", "sha256": "aa", "kind": "torchscript", "traced_on": "cuda"}})");
  EXPECT_EQ(missing_for(eval_only, request_for({"eval"})), std::nullopt);
  EXPECT_EQ(missing_for(eval_only, request_for({"eval", "train"})), "the zoo's entry has no train");
  EXPECT_EQ(missing_for(eval_only, request_for({"eval"}, "cpu")),
            "the zoo's entry was traced on cuda, the run is on cpu");

  // A package the exporter could not make is there as far as the run goes: its row says why.
  const std::string failed_package = write_entry(
      dir,
      R"({"eval": {"path": "eval.pt", "sha256": "aa", "kind": "torchscript", "traced_on": "cuda"}})",
      R"({"aoti.float32.cuda": "GuardOnDataDependentSymNode"})");
  EXPECT_EQ(missing_for(failed_package, request_for({"eval", "aoti.float32.cuda"})), std::nullopt);
  EXPECT_EQ(missing_for(failed_package, request_for({"eval", "aoti.float16.cuda"})),
            "the zoo's entry has no aoti.float16.cuda");

  std::ofstream(failed_package) << "{ not json";
  // A damaged entry is left for the model's run to report, not exported over.
  EXPECT_EQ(missing_for(failed_package, request_for({"eval"})), std::nullopt);
}

TEST(ExportRequest, TheExporterIsAskedForWhatTheRolesNeedAndNothingMore) {
  auto has = [](const std::vector<std::string>& args, const std::string& flag) {
    return std::find(args.begin(), args.end(), flag) != args.end();
  };
  auto after = [](const std::vector<std::string>& args, const std::string& flag) {
    auto it = std::find(args.begin(), args.end(), flag);
    return it == args.end() || it + 1 == args.end() ? std::string() : *(it + 1);
  };
  const auto inference = exporter_arguments(request_for({"eval"}), "torchbench", "alexnet");
  EXPECT_EQ(after(inference, "--only"), "alexnet");
  EXPECT_EQ(after(inference, "--suite"), "torchbench");
  EXPECT_EQ(after(inference, "--device"), "cuda");
  EXPECT_EQ(after(inference, "--zoo"), "zoo");
  EXPECT_FALSE(has(inference, "--training"));
  EXPECT_FALSE(has(inference, "--aoti"));
  EXPECT_FALSE(has(inference, "--batch-size"));
  EXPECT_FALSE(has(inference, "--torchbench-dir"));

  ExportRequest packaged = request_for({"eval", "aoti.bfloat16.cuda"});
  packaged.batch_size = 8;
  packaged.torchbench_dir = "/tb";
  const auto args = exporter_arguments(packaged, "timm_models", "nfnet_l0");
  EXPECT_TRUE(has(args, "--aoti"));
  EXPECT_EQ(after(args, "--aoti-device"), "cuda");
  EXPECT_TRUE(has(args, "--bfloat16"));
  EXPECT_FALSE(has(args, "--float16"));
  EXPECT_EQ(after(args, "--batch-size"), "8");
  EXPECT_EQ(after(args, "--torchbench-dir"), "/tb");

  EXPECT_TRUE(
      has(exporter_arguments(request_for({"eval", "train"}), "torchbench", "m"), "--training"));
}

// The torch.compile family with the Python module as its reference loads the recipe alone: an
// entry serves such a run when it has the recipe, built for the run's mode (inputs differ
// between training and inference), whatever TorchScript it holds or lacks; the exporter is then
// asked to trace nothing.
TEST(ExportRequest, ARecipeServesARunOfItsModeAndAsksForNoTorchScript) {
  ScratchDir dir;
  const std::string recipe_only = write_entry(
      dir, "{}", "{}", R"({"source": "torchvision_models", "name": "resnet18", "seed": 1337,
                           "context": {"batch_size": 4, "training": false}})");
  EXPECT_EQ(missing_for(recipe_only, request_for({kRecipeRole})), std::nullopt);
  ExportRequest training = request_for({kRecipeRole});
  training.training = true;
  EXPECT_EQ(missing_for(recipe_only, training),
            "the zoo's entry was built for inference, the run trains");
  EXPECT_EQ(missing_for(recipe_only, request_for({"eval", kRecipeRole})),
            "the zoo's entry has no eval");

  // An entry from before recipes, or a user's TorchScript file: no recipe.
  const std::string traced = write_entry(
      dir,
      R"({"eval": {"path": "eval.pt", "sha256": "aa", "kind": "torchscript", "traced_on": "cpu"}})");
  EXPECT_EQ(missing_for(traced, request_for({kRecipeRole})),
            "the zoo's entry has no recipe (rebuild record)");
  // A user's TorchScript file can never have one: exporting again would not help, its row says so.
  const std::string user_file = dir.file("zoo/torchbench/m/manifest.json");
  {
    std::string text = read_text_of(user_file);
    text.replace(text.find("torchvision:resnet18"), 20, "torchscript:/m.pt");
    std::ofstream(user_file) << text;
  }
  EXPECT_EQ(missing_for(user_file, request_for({kRecipeRole})), std::nullopt);

  auto has = [](const std::vector<std::string>& args, const std::string& flag) {
    return std::find(args.begin(), args.end(), flag) != args.end();
  };
  const auto recipe_args = exporter_arguments(training, "torchbench", "m");
  EXPECT_TRUE(has(recipe_args, "--no-torchscript"));
  EXPECT_TRUE(has(recipe_args, "--training"));
  EXPECT_FALSE(has(exporter_arguments(request_for({"eval", kRecipeRole}), "torchbench", "m"),
                   "--no-torchscript"));
}

TEST(ExportRequest, TheIndexGivesTheExportersReasonAndABatchSizeHasItsOwnFolder) {
  ScratchDir dir;
  std::filesystem::create_directories(dir.file("zoo"));
  EXPECT_EQ(export_record(dir.file("zoo"), "torchbench", "m"), std::nullopt);
  std::ofstream(dir.file("zoo/index.json")) << R"({"models": [
    {"suite": "torchbench", "name": "m", "status": "failed", "reason": "building the model: boom"},
    {"suite": "huggingface", "name": "m", "status": "exported", "reason": null}]})";
  auto record = export_record(dir.file("zoo"), "torchbench", "m");
  ASSERT_TRUE(record);
  EXPECT_EQ(record->status, "failed");
  EXPECT_EQ(record->reason, "building the model: boom");
  EXPECT_EQ(export_record(dir.file("zoo"), "huggingface", "m")->status, "exported");
  EXPECT_EQ(export_record(dir.file("zoo"), "timm_models", "m"), std::nullopt);

  EXPECT_EQ(zoo_for_batch_size("zoo", std::nullopt), "zoo");
  EXPECT_EQ(zoo_for_batch_size("zoo", 8), "zoo/batch-8");
}

}  // namespace
}  // namespace zoobench
