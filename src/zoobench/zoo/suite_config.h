// A suite's configuration: `suites/<suite>.yaml` in the schema of upstream's
// benchmarks/dynamo/torchbench.yaml (batch sizes, skip lists, tolerance lists, ...), plus our
// keys under `zoobench:` (patches per model, per-model tolerance overrides with a reason,
// backend switches turned off per model with a reason, loss scaling, IoU for boolean outputs). Name-keyed lists live here, not in code.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "zoobench/zoo/manifest.h"
#include "zoobench/zoo/run_config.h"

namespace zoobench {

// cuDNN's switches as a model's own code sets them when upstream's harness loads it (module
// statements or its class's constructor, run after upstream's setup_determinism, so they win);
// unset: the harness's setting stands.
struct CudnnSwitches {
  std::optional<bool> deterministic, benchmark;
  bool any() const { return deterministic.has_value() || benchmark.has_value(); }
};

// How a model's outputs are compared: what `same` is called with, and why.
struct ToleranceDecision {
  double tolerance = 1e-4;
  bool cosine = false;
  bool larger_multiplier_for_smaller_tensor = false;
  bool force_max_multiplier = false;
  bool use_iou_for_bool = false;
  double iou_threshold = 0.99;
  // Where the tolerance came from: "default", "suite:higher_fp16", "zoobench:override (<reason>)".
  std::string source = "default";
};

class SuiteConfig {
 public:
  // An empty configuration (no yaml): upstream defaults for `suite`.
  explicit SuiteConfig(std::string suite = "custom");

  // Parses a yaml file. Throws UsageError "<file>:<line>:<col>: <problem>" on bad yaml, on a key
  // it does not know (naming the closest known one), on a value outside its allowed values, and
  // on aliases that expand past the walk's limits (suite_config.cpp).
  static SuiteConfig load(const std::string& yaml_path, const std::string& suite);

  const std::string& suite() const { return suite_; }

  // Why the model would be skipped on this device type ("cpu"/"cuda") and mode, or nullopt.
  std::optional<std::string> skip_reason(const std::string& model, const std::string& device_type,
                                         Mode mode, bool accuracy) const;
  bool is_canary(const std::string& model) const { return canary_.count(model) > 0; }
  // Upstream's non_deterministic: eager runs may differ, and upstream counts pass,
  // eager_two_runs_differ and fail_accuracy as pass (common.py's record_status).
  bool is_non_deterministic(const std::string& model) const;
  // Upstream's accuracy.skip.eager_not_deterministic, which applies to training only: the two
  // eager runs are not compared, and the verdict is pass_due_to_skip once the compiled run ran.
  bool eager_not_deterministic(const std::string& model, Mode mode) const;
  // Upstream's accuracy.max_batch_size: accuracy is checked at no more than this batch size.
  std::optional<int64_t> accuracy_max_batch_size(const std::string& model) const;
  // Whether upstream's training accuracy check runs the model in eval mode (use_eval_mode: every
  // suite but timm_models and huggingface, except only_training models).
  bool trains_in_eval_mode_for_accuracy(const std::string& model) const;
  // Whether accuracy checks ask torch for deterministic algorithms (upstream's
  // setup_determinism does for every model but those of a list in its code, which zoobench keeps
  // as zoobench.deterministic_algorithms_off).
  bool asks_for_deterministic_algorithms(const std::string& model) const {
    return deterministic_algorithms_off_.count(model) == 0;
  }
  // zoobench.cudnn_set_by_model: what the model's TorchBench code sets (none: nothing).
  CudnnSwitches cudnn_set_by_model(const std::string& model) const {
    auto it = cudnn_set_by_model_.find(model);
    return it == cudnn_set_by_model_.end() ? CudnnSwitches{} : it->second;
  }
  bool is_flaky(const std::string& model) const { return flaky_.count(model) > 0; }
  // zoobench.start_first: the model's place among those a run starts before the others (its
  // longest, longest first); none: it keeps the selection's order.
  std::optional<std::size_t> start_rank(const std::string& model) const;
  // zoobench.memory_heavy: models of which two do not fit one device's memory at once; a run
  // does not start one on a device while another runs there.
  bool is_memory_heavy(const std::string& model) const { return memory_heavy_.count(model) > 0; }
  // Upstream's disable_cudagraph: models whose compiled runs stay out of CUDA graphs.
  bool disables_cudagraphs(const std::string& model) const {
    return disable_cudagraph_.count(model) > 0;
  }

  // Upstream's get_tolerance_and_cosine_flag for this suite (torchbench, huggingface,
  // timm_models rules; others use torchbench's), then our per-model override.
  ToleranceDecision tolerance(const std::string& model, Mode mode, Precision precision,
                              const std::string& device_type, bool cosine_flag) const;

  // Upstream's tolerance.accuracy_check_runs: how many compiled runs the accuracy verdict takes
  // a majority vote over (flaky models); 1 unless the yaml names the model.
  int accuracy_check_runs(const std::string& model) const;
  std::vector<std::string> patches_for(const std::string& model, Mode mode) const;
  // A loaded model's: those the suite assigns to its name, then those its manifest names (a
  // submodule repro carries its model's), each once.
  std::vector<std::string> patches_for(const Manifest& manifest, Mode mode) const;
  // Extra factor on the training loss (upstream timm scales mobilevit_s's loss by 1/1000).
  double loss_scale(const std::string& model) const;
  // Every model -> patch names assignment (both modes), for `zoobench patches`.
  std::map<std::string, std::vector<std::string>> patch_assignments() const;

  // A backend's optimization switches the suite turns off for one model, with the reason
  // (zoobench.switches_off: `MODEL: {BACKEND: [switch, ...], reason: ...}`): a pass known to
  // break that model, kept off so its row measures the backend that works. A backend
  // `inductor:MODE` takes the `inductor` entry when it has none of its own. Empty when none.
  struct SwitchesOff {
    std::vector<std::string> switches;
    std::string reason;
  };
  SwitchesOff switches_off(const std::string& model, const std::string& backend) const;

  // What the exporter takes from the yaml, as zoobench read it (suite_exporter_view.cpp): the
  // keys of upstream's schema and ours that the exporter uses, in that schema's shape, with every
  // list of names flattened. zoobench is the one reader of a suite yaml; the exporter asks it
  // (`zoobench suite-config`) instead of reading the file again.
  nlohmann::json exporter_view() const;

 private:
  friend struct SuiteYamlReader;  // suite_config.cpp: load's steps, one part of the yaml each
  std::string suite_;
  std::string rule_;  // which upstream tolerance rule applies: torchbench | huggingface | timm_models
  // Read for the exporter (exporter_view): batch sizes, which models keep their own, ...
  std::map<std::string, int64_t> batch_training_, batch_inference_, batch_divisors_;
  std::set<std::string> dont_change_batch_, scaled_compute_loss_;
  std::set<std::string> extra_models_, run_despite_checkout_skip_;
  std::optional<int64_t> image_size_;
  std::map<std::string, int64_t> accuracy_max_batch_;  // accuracy.max_batch_size
  std::set<std::string> skip_all_, skip_training_, skip_inference_, only_training_, only_inference_;
  std::map<std::string, std::set<std::string>> skip_device_;
  std::set<std::string> accuracy_skip_large_, accuracy_skip_eager_nondeterministic_;
  std::set<std::string> canary_, non_deterministic_, flaky_, disable_cudagraph_;
  std::set<std::string> deterministic_algorithms_off_;  // zoobench.deterministic_algorithms_off
  std::map<std::string, CudnnSwitches> cudnn_set_by_model_;  // zoobench.cudnn_set_by_model
  std::vector<std::string> start_first_;                     // zoobench.start_first, in order
  std::set<std::string> memory_heavy_;                       // zoobench.memory_heavy
  std::map<std::string, std::set<std::string>> tolerance_lists_;  // "higher" -> models
  std::set<std::string> larger_multiplier_, iou_for_bool_;
  std::map<std::string, double> iou_thresholds_;  // tolerance.iou_thresholds (default 0.99)
  std::map<std::string, int> accuracy_check_runs_;  // tolerance.accuracy_check_runs
  struct Override {
    double tolerance = 0;
    std::optional<bool> cosine;
    std::optional<Mode> mode;  // applies to one mode only when set
    std::string reason;
  };
  std::map<std::string, Override> overrides_;
  std::map<std::string, std::vector<std::string>> patches_;          // both modes
  std::map<std::string, std::vector<std::string>> training_patches_;  // training only
  std::map<std::string, double> loss_scale_;
  struct ModelSwitchesOff {
    std::map<std::string, std::vector<std::string>> by_backend;
    std::string reason;
  };
  std::map<std::string, ModelSwitchesOff> switches_off_;  // zoobench.switches_off
  std::map<std::string, std::string> skip_reasons_;  // zoobench.skip_reasons
};

// A suite's model list (`<suite>_models_list.txt`), in any upstream format: `name`,
// `name bs` (timm) or `name,bs` (huggingface). Blank lines and `#` comments are ignored.
struct ModelListEntry {
  std::string name;
  std::optional<int64_t> batch_size;
};
std::vector<ModelListEntry> read_model_list(const std::string& path);

// A suite's files in `suites_dir`, each empty where absent: `<suite>_models_list.txt` (a suite
// named `*_models` may name it `<suite>_list.txt`, as upstream's timm_models_list.txt) and
// `<suite>.yaml`.
struct SuiteFiles {
  std::string list;
  std::string yaml;
};
SuiteFiles find_suite_files(const std::string& suites_dir, const std::string& suite);

// A suite as the exporter takes it (`zoobench suite-config`, format zoobench-suite/1): the
// suite, its files, the list's models with their batch sizes, and the yaml's exporter_view.
// Throws UsageError for a suite with neither file, or a file that does not read.
nlohmann::json read_suite_for_exporter(const std::string& suites_dir, const std::string& suite);

}  // namespace zoobench
