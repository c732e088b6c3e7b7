// A model's manifest (docs/formats.md): what the exporter produced and how to use it.
// Reading a manifest checks its structure; sha256 checks happen when an artifact is read
// (read_verified_artifact), so a corrupt file is a model_fail_to_load row, never a silent load.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace zoobench {

// Thrown for anything wrong with a model's files: the row becomes model_fail_to_load.
class ModelLoadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct TensorContract {
  std::string name;
  std::string dtype;              // "float32", "int32", ...
  std::vector<int64_t> sizes;     // empty: unconstrained
  std::vector<int64_t> strides;   // empty: contiguous
};

// What an AOTInductor training package (kind "aoti_training", role aoti_train.<dtype>.<device>)
// takes and gives: the parameters (by their first name), the buffers and the model's inputs, in
// these orders; the loss, then one gradient per parameter. It writes the buffers the forward
// updates (batch norm's statistics) in place; the optimizer's update is the harness's.
struct StepContract {
  std::vector<std::string> parameters;
  std::vector<std::string> buffers;
  int64_t inputs = 0;
  bool dropout = false;  // the step keeps dropout (its mask is the package's own)
};

struct Artifact {
  std::string role;               // "eval", "train", "aoti.float32.cuda", "aoti_train.float32.cuda"
  std::string path;               // absolute
  std::string sha256;
  std::string kind;               // "torchscript" | "aoti" | "aoti_training"
  std::string device;             // aoti: device it was compiled for; torchscript: traced_on
  std::string dtype;              // aoti: dtype it was compiled for
  std::vector<TensorContract> input_contract;
  std::optional<StepContract> step;  // kind aoti_training only
};

struct InputSpec {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::string init;
};

struct Manifest {
  std::string directory;          // folder holding manifest.json
  std::string name;
  std::string suite;
  std::string source;
  int64_t batch_size = 0;
  std::map<std::string, Artifact> artifacts;
  std::string inputs_path;        // absolute
  std::string inputs_sha256;
  std::vector<InputSpec> input_specs;
  std::vector<std::string> output_names;
  std::vector<int64_t> mutated_inputs;
  std::string loss = "mean_of_floating_outputs";  // or "first_output"
  double loss_scale = 1.0;
  bool dropout = false;
  bool deepcopy = true;
  // Patches the model needs whatever its suite assigns (a submodule repro written by `zoobench
  // bisect` carries its model's); applied besides the suite's.
  std::vector<std::string> patches;
  nlohmann::json versions;
  // Why the exporter could not make an artifact it was asked for ("aoti_failures": role ->
  // reason), so that a backend needing it can say what went wrong rather than "export it".
  std::map<std::string, std::string> artifact_failures;
  // The exporter's record of how it built the model (`rebuild`: source, name, build context,
  // seed), from which the torch.compile family builds the Python module again; and whether that
  // build was for training (its inputs then are training's: labels, a training image size).
  bool has_recipe = false;
  bool recipe_training = false;

  // The artifact for a role, or nullptr.
  const Artifact* artifact(const std::string& role) const;
};

// Parses `<dir>/manifest.json`. Throws ModelLoadError naming the file and the problem.
Manifest read_manifest(const std::string& manifest_path);

// The artifact's bytes, read once through one open descriptor, after checking that their
// sha256 is the manifest's; throws ModelLoadError otherwise (missing, not a regular file, a
// malformed digest, another digest). Load from these bytes, never from the path again: a file
// replaced between a check and a second open (a re-export during the run) would be loaded
// unverified under the verified model's name.
std::string read_verified_artifact(const std::string& path, const std::string& expected_sha256,
                                   const std::string& what);

// The checks of read_verified_artifact without keeping the bytes: for a file that another
// process loads (the torch.compile family's Python side checks the bytes it reads itself), to
// fail before starting it.
void verify_artifact(const std::string& path, const std::string& expected_sha256,
                     const std::string& what);

}  // namespace zoobench
