// Manifest parsing and artifact verification.
#include "zoobench/zoo/manifest.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>

#include "zoobench/util/characters.h"
#include "zoobench/util/files.h"
#include "zoobench/util/sha256.h"
#include "zoobench/util/text.h"

namespace zoobench {
namespace {

std::vector<TensorContract> parse_contract(const nlohmann::json& json) {
  std::vector<TensorContract> out;
  for (const auto& item : json) {
    TensorContract contract;
    contract.name = item.value("name", "");
    contract.dtype = item.value("dtype", "");
    contract.sizes = item.value("sizes", std::vector<int64_t>{});
    contract.strides = item.value("strides", std::vector<int64_t>{});
    out.push_back(std::move(contract));
  }
  return out;
}

// A JSON integer as int64_t, or nullopt for anything else: JSON reads 2^70 as a float, and
// nlohmann converts a float or an unsigned above 2^63-1 to int64_t without a word.
std::optional<int64_t> as_int64(const nlohmann::json& value) {
  constexpr auto kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (value.is_number_unsigned()) {
    if (value.get<uint64_t>() > kMax) return std::nullopt;
    return static_cast<int64_t>(value.get<uint64_t>());
  }
  if (value.is_number_integer()) return value.get<int64_t>();
  return std::nullopt;
}

// A training package's `step` (training_step.py's step_contract): the outputs must be the loss
// and a gradient per parameter in the parameters' order, and no name may repeat, or the harness
// would pair a gradient with the wrong parameter. `where`: "<manifest>: artifact <role>".
StepContract parse_step(const nlohmann::json& json, const std::string& where) {
  StepContract step;
  step.parameters = json.at("parameters").get<std::vector<std::string>>();
  step.buffers = json.value("buffers", std::vector<std::string>{});
  const auto inputs = as_int64(json.at("inputs"));
  if (!inputs) throw ModelLoadError(where + ": step.inputs is not an integer; re-export the model");
  step.inputs = *inputs;
  step.dropout = json.value("dropout", false);
  std::vector<std::string> expected = {"loss"};
  for (const auto& name : step.parameters) expected.push_back("grad:" + name);
  if (json.at("outputs").get<std::vector<std::string>>() != expected)
    throw ModelLoadError(where +
                         ": step.outputs must be \"loss\" then \"grad:<parameter>\" for "
                         "each of step.parameters, in their order; re-export the model");
  std::vector<std::string> names = step.parameters;
  names.insert(names.end(), step.buffers.begin(), step.buffers.end());
  std::sort(names.begin(), names.end());
  if (const auto twice = std::adjacent_find(names.begin(), names.end()); twice != names.end())
    throw ModelLoadError(where + ": step names '" + *twice + "' twice; re-export the model");
  if (step.parameters.empty() || step.inputs < 0)
    throw ModelLoadError(where + ": step has no parameters or a negative input count");
  return step;
}

// A training package and its step go together; the step's inputs are the manifest's inputs.
void check_step(const Artifact& artifact, const Manifest& manifest, const std::string& path) {
  const std::string where = path + ": artifact " + artifact.role;
  if ((artifact.kind == "aoti_training") != artifact.step.has_value())
    throw ModelLoadError(where + ": a step contract goes with kind aoti_training and only with it");
  if (artifact.step && !manifest.input_specs.empty() &&
      artifact.step->inputs != static_cast<int64_t>(manifest.input_specs.size()))
    throw ModelLoadError(where + ": step.inputs is " + std::to_string(artifact.step->inputs) +
                         " but inputs.spec lists " + std::to_string(manifest.input_specs.size()));
}

// Absent is 0 (not recorded); present, a positive integer that int64_t holds, since it goes
// into the results as the model's batch size.
int64_t read_batch_size(const nlohmann::json& json, const std::string& manifest_path) {
  if (!json.contains("batch_size")) return 0;
  const std::optional<int64_t> size = as_int64(json["batch_size"]);
  if (!size || *size < 1) {
    throw ModelLoadError(manifest_path + ": batch_size " + json["batch_size"].dump() +
                         " is out of range: expected a positive integer, 1 to " +
                         std::to_string(std::numeric_limits<int64_t>::max()) +
                         " (2^63-1); re-export the model");
  }
  return *size;
}

// Indices of inputs the model writes into. One that names no input would have the runner clone
// nothing and time a model that writes into its own inputs, so each must be an index of the
// inputs that inputs.spec lists (without a spec, only that it is not negative is known here).
std::vector<int64_t> read_mutated_inputs(const nlohmann::json& json,
                                         const std::string& manifest_path,
                                         const std::vector<InputSpec>& specs) {
  const auto listed = json.value("mutated_inputs", nlohmann::json::array());
  if (!listed.is_array()) {
    throw ModelLoadError(manifest_path + ": mutated_inputs " + listed.dump() +
                         " is not a list of input indices; re-export the model");
  }
  const auto count = static_cast<int64_t>(specs.size());
  std::vector<int64_t> indices;
  for (const nlohmann::json& value : listed) {
    const std::optional<int64_t> index = as_int64(value);
    if (!index || *index < 0 || (!specs.empty() && *index >= count)) {
      const std::string range = specs.empty() ? "an input index, 0 or more"
                                              : "an index of the " + std::to_string(count) +
                                                    " input(s) that inputs.spec lists, 0 to " +
                                                    std::to_string(count - 1);
      throw ModelLoadError(manifest_path + ": mutated_inputs index " + value.dump() +
                           " is out of range: expected " + range + "; re-export the model");
    }
    indices.push_back(*index);
  }
  return indices;
}

}  // namespace

const Artifact* Manifest::artifact(const std::string& role) const {
  auto it = artifacts.find(role);
  return it == artifacts.end() ? nullptr : &it->second;
}

namespace {

bool inside(const std::filesystem::path& path, const std::filesystem::path& folder) {
  const std::filesystem::path relative = path.lexically_relative(folder);
  return !relative.empty() && *relative.begin() != "..";
}

// An artifact's path, kept inside the model's folder. Manifests are files people exchange: a
// path out of the folder (absolute, `..`, a symbolic link) would have zoobench read any file
// and put a prefix of its hash into a result row.
std::string confined_path(const std::string& manifest_path, const std::string& directory,
                          const std::string& relative) {
  namespace fs = std::filesystem;
  const fs::path folder = fs::path(directory.empty() ? "." : directory).lexically_normal();
  const std::string where = manifest_path + ": the path '" + relative + "' ";
  if (fs::path(relative).is_absolute())
    throw ModelLoadError(where +
                         "is absolute; a manifest's paths are relative to its model folder");
  const fs::path joined = (folder / relative).lexically_normal();
  if (!inside(joined, folder)) throw ModelLoadError(where + "leaves the model folder");
  std::error_code error;
  if (fs::exists(joined, error)) {
    const fs::path real = fs::weakly_canonical(joined, error);
    if (error || !inside(real, fs::weakly_canonical(folder, error)))
      throw ModelLoadError(where + "leads out of the model folder (to " + real.string() +
                           ", through a symbolic link)");
  }
  return joined.string();
}

bool is_sha256(const std::string& digest) {
  return digest.size() == 64 &&
         std::all_of(digest.begin(), digest.end(),
                     [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

// The fields that become paths (name, suite) or multiply every gradient (loss_scale): refused
// with the field and the rule, as the suite yaml refuses its own.
void check_names_and_numbers(const Manifest& manifest, const std::string& manifest_path) {
  if (auto problem = name_problem(manifest.name))
    throw ModelLoadError(manifest_path + ": name '" + manifest.name +
                         "' cannot be a model's name: " + *problem);
  if (!manifest.suite.empty()) {
    if (auto problem = name_problem(manifest.suite))
      throw ModelLoadError(manifest_path + ": suite '" + manifest.suite +
                           "' cannot be a suite's name: " + *problem);
  }
  if (!(std::isfinite(manifest.loss_scale) && manifest.loss_scale > 0 &&
        manifest.loss_scale <= 1e6))
    throw ModelLoadError(manifest_path + ": training.loss_scale " +
                         std::to_string(manifest.loss_scale) +
                         " is out of range: a finite number greater than 0, at most 1e6");
}

// The manifest's facts beside its files: training's loss, dropout, copying, versions, patches,
// the packages the exporter could not make, and the recipe (nlohmann's exceptions for a field
// of the wrong type, as the caller reports them).
void read_model_facts(const nlohmann::json& json, Manifest& manifest) {
  if (json.contains("training")) {
    manifest.loss = json["training"].value("loss", manifest.loss);
    manifest.loss_scale = json["training"].value("loss_scale", 1.0);
  }
  manifest.dropout = json.value("dropout", false);
  manifest.deepcopy = json.value("deepcopy", true);
  manifest.versions = json.value("versions", nlohmann::json::object());
  manifest.patches = json.value("patches", std::vector<std::string>{});
  manifest.artifact_failures = json.value("aoti_failures", std::map<std::string, std::string>{});
  if (json.contains("rebuild") && json["rebuild"].is_object()) {
    manifest.has_recipe = true;
    const auto& context = json["rebuild"].value("context", nlohmann::json::object());
    manifest.recipe_training = context.is_object() && context.value("training", false);
  }
}

}  // namespace

Manifest read_manifest(const std::string& manifest_path) {
  // manifest.json itself may not be a link out of its model folder: what it names would be
  // confined to the folder, but the manifest (digests, inputs' spec) would be another's.
  const std::filesystem::path where(manifest_path);
  confined_path(manifest_path, where.parent_path().string(), where.filename().string());
  std::string text;
  try {
    text = read_text_file(manifest_path, kSmallFileLimitBytes);
  } catch (const std::exception& e) {
    throw ModelLoadError(std::string(e.what()) + "; re-export the model");
  }
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for 1e309
    throw ModelLoadError(manifest_path + " is not valid JSON (" + e.what() +
                         "); re-export the model");
  }
  Manifest manifest;
  manifest.directory = std::filesystem::path(manifest_path).parent_path().string();
  auto resolve = [&](const std::string& relative) {
    return confined_path(manifest_path, manifest.directory, relative);
  };
  try {
    std::string format = json.value("format", "");
    if (format != "zoobench-manifest/1") {
      throw ModelLoadError(manifest_path + " has format '" + format +
                           "', expected zoobench-manifest/1; re-export with tools/export_zoo.py");
    }
    manifest.name = json.at("name").get<std::string>();
    manifest.suite = json.value("suite", "");
    manifest.source = json.value("source", "");
    manifest.batch_size = read_batch_size(json, manifest_path);
    for (const auto& [role, item] : json.at("artifacts").items()) {
      Artifact artifact;
      artifact.role = role;
      artifact.path = resolve(item.at("path").get<std::string>());
      artifact.sha256 = item.at("sha256").get<std::string>();
      artifact.kind = item.value("kind", "torchscript");
      artifact.device = item.value("device", item.value("traced_on", ""));
      artifact.dtype = item.value("dtype", "");
      if (item.contains("input_contract"))
        artifact.input_contract = parse_contract(item["input_contract"]);
      if (item.contains("step"))
        artifact.step = parse_step(item["step"], manifest_path + ": artifact " + role);
      manifest.artifacts.emplace(role, std::move(artifact));
    }
    const auto& inputs = json.at("inputs");
    manifest.inputs_path = resolve(inputs.at("path").get<std::string>());
    manifest.inputs_sha256 = inputs.at("sha256").get<std::string>();
    for (const auto& item : inputs.value("spec", nlohmann::json::array())) {
      manifest.input_specs.push_back({item.value("name", ""), item.value("dtype", ""),
                                      item.value("shape", std::vector<int64_t>{}),
                                      item.value("init", "")});
    }
    if (json.contains("outputs")) {
      manifest.output_names = json["outputs"].value("names", std::vector<std::string>{});
    }
    manifest.mutated_inputs = read_mutated_inputs(json, manifest_path, manifest.input_specs);
    read_model_facts(json, manifest);
    for (const auto& [role, artifact] : manifest.artifacts)
      check_step(artifact, manifest, manifest_path);
  } catch (const nlohmann::json::exception& e) {
    throw ModelLoadError(manifest_path + " is missing or has a malformed field (" + e.what() +
                         "); re-export the model");
  }
  check_names_and_numbers(manifest, manifest_path);
  if (manifest.loss != "mean_of_floating_outputs" && manifest.loss != "first_output") {
    throw ModelLoadError(manifest_path + ": unknown training.loss '" + manifest.loss +
                         "' (expected mean_of_floating_outputs or first_output)");
  }
  return manifest;
}

std::string read_verified_artifact(const std::string& path, const std::string& expected_sha256,
                                   const std::string& what) {
  // Every way a path can fail (a link loop, a name too long, a folder it may not enter) is a
  // model that cannot load: the throwing std::filesystem calls let those escape as the eager
  // run's failure (eager_1st_run_fail).
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (status.type() == std::filesystem::file_type::not_found) {
    throw ModelLoadError(what + " " + path + " is missing; re-export the model");
  }
  if (error) {
    throw ModelLoadError("cannot read " + what + " " + path + ": " + error.message() +
                         "; re-export the model");
  }
  // A FIFO or a device (/dev/zero) would be read until the model's timeout. read_text_file
  // checks the descriptor it reads; this names the case before opening it.
  if (status.type() != std::filesystem::file_type::regular) {
    throw ModelLoadError(what + " " + path + " is not a regular file; re-export the model");
  }
  if (!is_sha256(expected_sha256)) {
    throw ModelLoadError("the manifest's sha256 of " + what + " " + path + " ('" +
                         expected_sha256.substr(0, 80) +
                         "') is not 64 hexadecimal digits; re-export the model");
  }
  std::string bytes;
  try {
    bytes = read_text_file(path, kArtifactLimitBytes);
  } catch (const std::exception& e) {
    throw ModelLoadError(std::string(e.what()) + "; re-export the model");
  }
  const std::string actual = sha256_hex(bytes.data(), bytes.size());
  if (actual != lower_case(expected_sha256)) {  // a digest in capitals is the same digest
    throw ModelLoadError(what + " " + path + " has sha256 " + actual.substr(0, 12) +
                         "..., the manifest says " + expected_sha256.substr(0, 12) +
                         "...: the file changed after export; not loading it. Re-export the model");
  }
  return bytes;
}

void verify_artifact(const std::string& path, const std::string& expected_sha256,
                     const std::string& what) {
  read_verified_artifact(path, expected_sha256, what);
}

}  // namespace zoobench
