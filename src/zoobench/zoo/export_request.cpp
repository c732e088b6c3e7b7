// The exporter's side of export on demand: needs, arguments, its index.
#include "zoobench/zoo/export_request.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "zoobench/util/files.h"
#include "zoobench/util/text.h"
#include "zoobench/zoo/manifest.h"

namespace fs = std::filesystem;

namespace zoobench {

std::optional<std::string> missing_for(const std::string& manifest_path,
                                       const ExportRequest& request) {
  if (!fs::exists(manifest_path)) return "not in the zoo";
  Manifest manifest;
  try {
    manifest = read_manifest(manifest_path);
  } catch (const ModelLoadError&) {
    // A damaged entry is the model's run to report (model_fail_to_load, naming the file):
    // exporting over it would hide the damage, or fail and hide it behind the exporter's reason.
    return std::nullopt;
  }
  std::vector<std::string> missing;
  bool recipe = false;
  for (const auto& role : request.roles) {
    if (role == kRecipeRole) {
      // A model added from a TorchScript file can have no recipe: its row says so.
      recipe = !starts_with(manifest.source, "torchscript:");
      if (recipe && !manifest.has_recipe) missing.push_back("recipe (rebuild record)");
    } else if (!manifest.artifact(role) && !manifest.artifact_failures.count(role)) {
      missing.push_back(role);
    }
  }
  if (!missing.empty()) return "the zoo's entry has no " + join(missing, ", ");
  // A recipe builds the model, and its inputs were made, for one mode.
  if (recipe && manifest.recipe_training != request.training) {
    return std::string("the zoo's entry was built for ") +
           (manifest.recipe_training ? "training" : "inference") + ", the run " +
           (request.training ? "trains" : "infers");
  }
  // The TorchScript files are traced on a device; a run that loads none does not care which.
  const bool torchscript =
      std::any_of(request.roles.begin(), request.roles.end(),
                  [](const std::string& role) { return role == "eval" || role == "train"; });
  if (const Artifact* eval = manifest.artifact("eval");
      torchscript && eval && !eval->device.empty() && eval->device != request.device_type) {
    return "the zoo's entry was traced on " + eval->device + ", the run is on " +
           request.device_type;
  }
  return std::nullopt;
}

std::vector<std::string> exporter_arguments(const ExportRequest& request, const std::string& suite,
                                            const std::string& name) {
  std::vector<std::string> args = {
      "--zoo", request.zoo_dir, "--suites-dir", request.suites_dir, "--suite",
      suite,   "--only",        name,           "--device",         request.device_type};
  if (request.batch_size) {
    args.insert(args.end(), {"--batch-size", std::to_string(*request.batch_size)});
    if (request.accuracy_batch) args.push_back("--accuracy-batch");
  }
  if (!request.torchbench_dir.empty()) {
    args.insert(args.end(), {"--torchbench-dir", request.torchbench_dir});
  }
  if (!request.device_gate.empty()) args.insert(args.end(), {"--device-gate", request.device_gate});
  const auto& roles = request.roles;
  const auto has = [&roles](const char* role) {
    return std::find(roles.begin(), roles.end(), role) != roles.end();
  };
  if (request.training || has("train")) args.push_back("--training");
  if (!has("eval") && !has("train")) args.push_back("--no-torchscript");
  bool aoti = false;
  for (const auto& role : roles) {
    if (!starts_with(role, "aoti.")) continue;
    if (!aoti) args.insert(args.end(), {"--aoti", "--aoti-device", request.device_type});
    aoti = true;
    if (starts_with(role, "aoti.float16.")) args.push_back("--float16");
    if (starts_with(role, "aoti.bfloat16.")) args.push_back("--bfloat16");
  }
  return args;
}

std::optional<ExportRecord> export_record(const std::string& zoo_dir, const std::string& suite,
                                          const std::string& name) {
  try {
    const auto index =
        nlohmann::json::parse(
            read_text_file((fs::path(zoo_dir) / "index.json").string(), kSmallFileLimitBytes));
    for (const auto& item : index.value("models", nlohmann::json::array())) {
      if (item.value("suite", "") != suite || item.value("name", "") != name) continue;
      ExportRecord record;
      record.status = item.value("status", "");
      if (item.contains("reason") && item["reason"].is_string()) record.reason = item["reason"];
      return record;
    }
  } catch (const std::exception&) {
    // No index, or a damaged one: the caller falls back to the exporter's log.
  }
  return std::nullopt;
}

std::string zoo_for_batch_size(const std::string& zoo_dir, std::optional<int64_t> batch_size) {
  if (!batch_size) return zoo_dir;
  return (fs::path(zoo_dir) / ("batch-" + std::to_string(*batch_size))).string();
}

}  // namespace zoobench
