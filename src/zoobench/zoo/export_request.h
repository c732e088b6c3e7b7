// What `zoobench run` asks of the exporter (tools/export_zoo.py) for a model the zoo lacks: the
// artifacts the run's backends load, whether a zoo entry already has them, the exporter's
// command line, and what the exporter's index (zoo/index.json) says of a model it tried.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace zoobench {

// The role of the model's recipe (the manifest's `rebuild` record and its inputs, nothing
// traced): what the torch.compile family loads when the eager reference is the Python module.
inline constexpr const char* kRecipeRole = "recipe";

struct ExportRequest {
  std::string device_type = "cpu";    // what the TorchScript files are traced on (traced_on)
  // artifact roles: eval, train, aoti.<dtype>.<device>, recipe (kRecipeRole). Without eval and
  // train the exporter traces nothing (--no-torchscript).
  std::vector<std::string> roles;
  bool training = false;  // the run trains: the model is built, and its inputs made, for training
  std::optional<int64_t> batch_size;  // --batch-size; else the list's (the exporter decides)
  // batch_size is upstream's accuracy batch size, which the suite's accuracy.max_batch_size
  // caps per model (the exporter's --accuracy-batch)
  bool accuracy_batch = false;
  std::string zoo_dir;                // the folder the entry goes to (the batch size's, if any)
  std::string suites_dir;
  std::string torchbench_dir;  // "" : none
  std::string device_gate;     // the exporter holds it shared (util/device_gate.h); "" none
};

// Why the zoo entry at `manifest_path` does not serve `request` ("no manifest", "no train
// artifact", "traced on cpu, the run is on cuda", "built for inference, the run trains"), or
// nullopt when it does. An AOTInductor package the exporter recorded as impossible counts as
// there, and so does the recipe of a model added from a TorchScript file (it can have none):
// the row then says why. So does a manifest that does not read: the model's run reports it
// rather than an export hiding it.
std::optional<std::string> missing_for(const std::string& manifest_path,
                                       const ExportRequest& request);

// The exporter's arguments (after the script's path) that export `name` of `suite` with what
// `request` needs, and nothing more (no package unless a role asks for one).
std::vector<std::string> exporter_arguments(const ExportRequest& request, const std::string& suite,
                                            const std::string& name);

// The exporter's record of a model in `<zoo_dir>/index.json`: status (exported, failed) and
// reason; nullopt when the index has none (or cannot be read).
struct ExportRecord {
  std::string status;
  std::string reason;
};
std::optional<ExportRecord> export_record(const std::string& zoo_dir, const std::string& suite,
                                          const std::string& name);

// The zoo folder of a run: `zoo_dir`, or its `batch-<N>` subfolder for --batch-size N (a zoo
// keeps one entry per model and batch size; the subfolder is a zoo of its own, index included).
std::string zoo_for_batch_size(const std::string& zoo_dir, std::optional<int64_t> batch_size);

}  // namespace zoobench
