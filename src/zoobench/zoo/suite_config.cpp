// yaml parsing and upstream's per-suite tolerance rules.
#include "zoobench/zoo/suite_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "zoobench/util/errors.h"
#include "zoobench/util/files.h"
#include "zoobench/util/text.h"
#include "zoobench/zoo/yaml_duplicate_keys.h"

namespace zoobench {
namespace {

// yaml-cpp parses an alias (`*name`) into a second reference to the anchored node, so parsing
// stays linear in the file; walking is not: a list of ten aliases of a list of ten aliases ...
// (the "billion laughs") is a dozen lines whose flattening visits 10^9 names, and an alias
// inside its own anchor (`a: &a [x, *a]`) is a cycle. Both limits are per file.
//
// Nodes visited: upstream's largest suite yaml (torchbench.yaml) holds a few hundred names and
// ours fewer, so a real file stays more than 1000x below a million; a million visits take about
// 50 ms (150 ms unoptimized), so a file over the limit is refused at once instead of hanging
// `zoobench list`.
constexpr std::size_t kMaxNodesVisited = 1'000'000;
// Lists inside lists: upstream nests two deep (`- *DETECTRON2_MODELS` inside `skip.all`); 64
// is far beyond any real file and keeps the recursion shallow, and a cycle reaches it at once.
constexpr int kMaxListNesting = 64;

std::string where(const std::string& path, const YAML::Mark& mark) {
  return path + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

// "; did you mean 'skip'?" for the known name closest to `name`, or "" when none is close.
std::string did_you_mean(const std::string& name, const std::vector<std::string>& known) {
  auto close = closest_names(name, known, 1);
  return close.empty() ? "" : "; did you mean '" + close.front() + "'?";
}

// The closest known key, or every known key when none is close.
std::string unknown_key_hint(const std::string& key, const std::vector<std::string>& known) {
  const std::string hint = did_you_mean(key, known);
  return hint.empty() ? " (known here: " + join(known, ", ") + ")" : hint;
}

// One suite yaml being read: names its file in every error, and bounds the walk over its
// nodes (the limits above).
class SuiteYaml {
 public:
  explicit SuiteYaml(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void refuse(const YAML::Node& at, const std::string& problem) const {
    throw UsageError(where(path_, at.Mark()) + ": " + problem);
  }

  // Upstream lists may nest (they are flattened) and may be null.
  std::set<std::string> names(const YAML::Node& node) {
    std::set<std::string> out;
    collect_names(node, out, 0);
    return out;
  }

  std::map<std::string, int64_t> sizes(const YAML::Node& node) {
    std::map<std::string, int64_t> out;
    if (!node || !node.IsMap()) return out;
    for (const auto& item : node) {
      count_visit(item.second);
      out[item.first.as<std::string>()] = item.second.as<int64_t>();
    }
    return out;
  }

  std::map<std::string, std::vector<std::string>> patch_map(const YAML::Node& node) {
    std::map<std::string, std::vector<std::string>> out;
    if (!node || !node.IsMap()) return out;
    for (const auto& item : node) {
      std::set<std::string> listed = names(item.second);
      out[item.first.as<std::string>()] = std::vector<std::string>(listed.begin(), listed.end());
    }
    return out;
  }

  // A key of `node` (the mapping at `section`, "" for the top level) that is not in `known` is
  // a typo that would otherwise be ignored without a word.
  void expect_known_keys(const YAML::Node& node, const std::string& section,
                         const std::vector<std::string>& known) const {
    if (!node || !node.IsMap()) return;
    for (const auto& item : node) {
      const std::string key = item.first.as<std::string>();
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      refuse(item.first, "unknown key '" + key + "' " +
                             (section.empty() ? "at the top level" : "in `" + section + "`") +
                             unknown_key_hint(key, known));
    }
  }

 private:
  void collect_names(const YAML::Node& node, std::set<std::string>& out, int depth) {
    if (!node || node.IsNull()) return;
    count_visit(node);
    if (depth > kMaxListNesting) {
      refuse(node, "lists nested more than " + std::to_string(kMaxListNesting) +
                       " deep (an alias inside its own anchor?); refusing to expand them");
    }
    if (node.IsScalar()) {
      out.insert(node.as<std::string>());
    } else if (node.IsSequence()) {
      for (const auto& item : node) collect_names(item, out, depth + 1);
    } else if (node.IsMap()) {
      // A map used as a set (`model: reason`): the keys are the names.
      for (const auto& item : node) {
        count_visit(item.first);
        out.insert(item.first.as<std::string>());
      }
    }
  }

  void count_visit(const YAML::Node& node) {
    if (++visited_ <= kMaxNodesVisited) return;
    refuse(node, "its aliases expand to more than " + std::to_string(kMaxNodesVisited) +
                     " entries (nested anchors and aliases, a \"billion laughs\"?); refusing to "
                     "expand them");
  }

  std::string path_;
  std::size_t visited_ = 0;
};

// Every key the reader knows, by the mapping that holds it: upstream's (PyTorch 2.11's
// torchbench.yaml, huggingface.yaml and timm_models.yaml, including the keys zoobench does not
// use, so that an upstream file loads as it is) and ours under `zoobench:`. Mappings keyed by
// model name (batch_size.training, tolerance.iou_thresholds, zoobench.patches, ...) are not
// checked: any name is a model.
struct KnownKeys {
  std::string section;  // dotted path from the top; "" is the top level
  std::vector<std::string> keys;
};

// skip.device and skip.freezing are keyed by torch device type; upstream adds cpu_aarch64.
// clang-format off
const std::vector<std::string> kDeviceTypes = {
    "cpu", "cpu_aarch64", "cuda", "hip", "xpu", "mps", "hpu", "npu", "mtia", "xla"};
// clang-format on

// Names of tolerance lists, by the upstream file that uses them (and `highest`, the older
// timm_models.yaml's); tolerance.freezing holds the same lists (torchbench) or is one (timm).
// clang-format off
const std::vector<std::string> kToleranceKeys = {
    "higher", "even_higher", "higher_fp16", "higher_bf16", "higher_bf16_xpu", "freezing",
    "cosine", "use_iou_for_bool_masks", "iou_thresholds", "accuracy_check_runs",
    "force_max_multiplier",
    "higher_training", "higher_max_autotune_training", "higher_inference", "higher_inference_cpu",
    "higher_fp16_xpu", "higher_amp", "even_higher_max_autotune", "highest_training", "highest"};
// clang-format on

// clang-format off
const std::vector<KnownKeys>& known_keys() {
  static const std::vector<KnownKeys> table = {
      {"", {"batch_size", "dont_change_batch_size", "tolerance",
            "require_larger_multiplier_for_smaller_tensor", "very_slow", "slow",
            "non_deterministic", "disable_cudagraph", "dtype", "canary_models",
            "detectron2_models", "only_training", "only_inference", "only_fp32",
            "trt_not_yet_working", "skip", "accuracy", "scaled_compute_loss",
            "emulate_precision_casts", "zoobench"}},
      {"batch_size", {"training", "inference", "divisors"}},
      {"skip", {"all", "device", "test", "control_flow", "export_not_supported", "multiprocess",
                "freezing"}},
      {"skip.device", kDeviceTypes},
      {"skip.test", {"training", "inference"}},
      {"skip.freezing", kDeviceTypes},
      {"tolerance", kToleranceKeys},
      {"tolerance.freezing", kToleranceKeys},
      {"accuracy", {"skip", "max_batch_size"}},
      {"accuracy.skip", {"large_models", "eager_not_deterministic"}},
      {"dtype", {"force_amp_for_fp16_bf16_models", "force_fp16_for_bf16_models",
                 "amp_dtype_bfloat16"}},
      // The exporter takes extra_models, image_size, skip_reasons, run_despite_checkout_skip
      // (exporter_view).
      {"zoobench", {"tolerance_rule", "patches", "training_patches", "flaky", "use_iou_for_bool",
                    "tolerance_overrides", "skip_reasons", "loss_scale", "extra_models",
                    "image_size", "run_despite_checkout_skip", "switches_off",
                    "deterministic_algorithms_off", "cudnn_set_by_model", "start_first",
                    "memory_heavy"}},
  };
  return table;
}
// clang-format on

// The mapping at a path of keys ("skip", "device"), or an undefined node. By recursion, not
// `node = node[key]`: assigning a yaml-cpp node writes into the tree instead of rebinding.
YAML::Node at_path(const YAML::Node& node, const std::vector<std::string>& keys, std::size_t next) {
  if (next == keys.size()) return node;
  if (!node || !node.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  return at_path(node[keys[next]], keys, next + 1);
}

void check_known_keys(const SuiteYaml& yaml, const YAML::Node& root) {
  for (const auto& [section, keys] : known_keys()) {
    const std::vector<std::string> path =
        section.empty() ? std::vector<std::string>{} : split(section, '.');
    yaml.expect_known_keys(at_path(root, path, 0), section, keys);
  }
}

const std::vector<std::string> kOverrideKeys = {"tolerance", "cosine", "mode", "reason"};
const std::vector<std::string> kToleranceRules = {"torchbench", "huggingface", "timm_models"};
const std::vector<std::string> kModeNames = {"training", "inference"};

// Upstream's tolerance.accuracy_check_runs: each run is a whole compiled run of the model,
// voted over by majority, so the count multiplies the model's time: a vote needs a handful, 100
// is far beyond any real need. 0 or less used to mean 1 without a word.
constexpr int64_t kMaxAccuracyCheckRuns = 100;

// The value of `node` (an entry `model: value` of the map `key`) as a whole number from `lowest`
// to `highest`; anything else (-1, 1.5, 2^70, `many`) is refused naming the key, the model, the
// value and the range.
int64_t whole_number_in(const SuiteYaml& yaml, const YAML::Node& node, const std::string& key,
                        const std::string& model, int64_t lowest, int64_t highest) {
  int64_t value = 0;
  if (!node.IsScalar() || !YAML::convert<int64_t>::decode(node, value) || value < lowest ||
      value > highest) {
    yaml.refuse(node, key + " for '" + model + "' is " +
                          (node.IsScalar() ? node.as<std::string>() : std::string("not a number")) +
                          ": expected a whole number from " + std::to_string(lowest) + " to " +
                          std::to_string(highest));
  }
  return value;
}

// The value of `node` as a number that `in_range` accepts; anything else (NaN, infinity, a word,
// a number outside the range) is refused naming the key, the model, the value and `range`.
// A share, such as an IoU or allclose's tolerance: above 0 and at most 1.
bool is_share(double value) { return value > 0 && value <= 1; }
constexpr const char* kShareRange = "a number greater than 0 and at most 1";

template <typename InRange>
double number_in(const SuiteYaml& yaml, const YAML::Node& node, const std::string& key,
                 const std::string& model, InRange in_range, const std::string& range) {
  double value = 0;
  if (!node.IsScalar() || !YAML::convert<double>::decode(node, value) || !in_range(value)) {
    yaml.refuse(node, key + " for '" + model + "' is " +
                          (node.IsScalar() ? node.as<std::string>() : std::string("not a number")) +
                          ": expected " + range);
  }
  return value;
}

// An override's tolerance is allclose's atol and rtol (accuracy/compare.h): above 1 an output
// off by 100% passes, so the check no longer checks (upstream's largest step is 0.16); 0 or
// less, NaN or infinity is a typo.
double override_tolerance(const SuiteYaml& yaml, const YAML::Node& body, const std::string& model) {
  if (!body["tolerance"])
    yaml.refuse(body, "tolerance override for '" + model + "' needs a `tolerance:`");
  return number_in(yaml, body["tolerance"], "tolerance override", model, is_share, kShareRange);
}

std::optional<Mode> override_mode(const SuiteYaml& yaml, const YAML::Node& body,
                                  const std::string& model) {
  if (!body["mode"]) return std::nullopt;
  const std::string mode = body["mode"].as<std::string>();
  if (mode == "training") return Mode::kTraining;
  if (mode == "inference") return Mode::kInference;
  yaml.refuse(body["mode"], "tolerance override for '" + model + "' has mode '" + mode +
                                "': expected training or inference (absent: both)" +
                                did_you_mean(mode, kModeNames));
}

std::string tolerance_rule(const SuiteYaml& yaml, const YAML::Node& node) {
  const std::string rule = node.as<std::string>();
  if (std::find(kToleranceRules.begin(), kToleranceRules.end(), rule) == kToleranceRules.end()) {
    yaml.refuse(node, "unknown zoobench.tolerance_rule '" + rule + "': expected one of " +
                          join(kToleranceRules, ", ") + did_you_mean(rule, kToleranceRules));
  }
  return rule;
}

bool listed_in(const std::map<std::string, std::set<std::string>>& lists, const char* list,
               const std::string& model) {
  auto it = lists.find(list);
  return it != lists.end() && it->second.count(model) > 0;
}

}  // namespace

SuiteConfig::SuiteConfig(std::string suite) : suite_(std::move(suite)) {
  rule_ = suite_ == "huggingface" || suite_ == "timm_models" ? suite_ : "torchbench";
}

// SuiteConfig::load's steps, each the reader of one part of the yaml.
struct SuiteYamlReader {
  SuiteConfig& config;
  SuiteYaml& yaml;

  void upstream_lists(const YAML::Node& root) {
    if (auto batch = root["batch_size"]) {
      config.batch_training_ = yaml.sizes(batch["training"]);
      config.batch_inference_ = yaml.sizes(batch["inference"]);
      config.batch_divisors_ = yaml.sizes(batch["divisors"]);
    }
    config.dont_change_batch_ = yaml.names(root["dont_change_batch_size"]);
    config.scaled_compute_loss_ = yaml.names(root["scaled_compute_loss"]);
    if (auto skip = root["skip"]) {
      config.skip_all_ = yaml.names(skip["all"]);
      if (auto device = skip["device"]; device && device.IsMap()) {
        for (const auto& item : device)
          config.skip_device_[item.first.as<std::string>()] = yaml.names(item.second);
      }
      if (auto test = skip["test"]) {
        config.skip_training_ = yaml.names(test["training"]);
        config.skip_inference_ = yaml.names(test["inference"]);
      }
    }
    config.only_training_ = yaml.names(root["only_training"]);
    config.only_inference_ = yaml.names(root["only_inference"]);
    if (auto accuracy = root["accuracy"]; accuracy && accuracy["skip"]) {
      config.accuracy_skip_large_ = yaml.names(accuracy["skip"]["large_models"]);
      config.accuracy_skip_eager_nondeterministic_ =
          yaml.names(accuracy["skip"]["eager_not_deterministic"]);
    }
    if (auto accuracy = root["accuracy"]; accuracy && accuracy["max_batch_size"])
      config.accuracy_max_batch_ = yaml.sizes(accuracy["max_batch_size"]);
    config.canary_ = yaml.names(root["canary_models"]);
    config.non_deterministic_ = yaml.names(root["non_deterministic"]);
    config.disable_cudagraph_ = yaml.names(root["disable_cudagraph"]);
    config.larger_multiplier_ = yaml.names(root["require_larger_multiplier_for_smaller_tensor"]);
  }

  void tolerance(const YAML::Node& tolerance) {
    if (!tolerance || !tolerance.IsMap()) return;
    for (const auto& item : tolerance) {
      config.tolerance_lists_[item.first.as<std::string>()] = yaml.names(item.second);
    }
    // upstream's tolerance.accuracy_check_runs: {model: N} compiled runs, majority vote
    if (auto runs = tolerance["accuracy_check_runs"]; runs && runs.IsMap()) {
      for (const auto& item : runs) {
        const std::string model = item.first.as<std::string>();
        config.accuracy_check_runs_[model] = static_cast<int>(whole_number_in(
            yaml, item.second, "tolerance.accuracy_check_runs", model, 1, kMaxAccuracyCheckRuns));
      }
    }
    // An IoU is in [0, 1]: a threshold above 1 fails every mask, 0 or less passes every one.
    if (auto thresholds = tolerance["iou_thresholds"]; thresholds && thresholds.IsMap()) {
      for (const auto& item : thresholds) {
        const std::string model = item.first.as<std::string>();
        config.iou_thresholds_[model] = number_in(yaml, item.second, "tolerance.iou_thresholds",
                                                  model, is_share, kShareRange);
      }
    }
  }

  void tolerance_overrides(const YAML::Node& overrides) {
    if (!overrides || !overrides.IsMap()) return;
    for (const auto& item : overrides) {
      const std::string model = item.first.as<std::string>();
      const auto& body = item.second;
      yaml.expect_known_keys(body, "zoobench.tolerance_overrides." + model, kOverrideKeys);
      SuiteConfig::Override o;
      o.tolerance = override_tolerance(yaml, body, model);
      if (body["cosine"]) o.cosine = body["cosine"].as<bool>();
      o.mode = override_mode(yaml, body, model);
      o.reason = body["reason"] ? body["reason"].as<std::string>() : "";
      if (o.reason.empty()) {
        yaml.refuse(body, "tolerance override for '" + model +
                              "' needs a `reason:` (it is shown in results)");
      }
      config.overrides_[model] = o;
    }
  }

  // {model: {backend: [switch, ...], reason: text}}; the switch names are checked against the
  // backend when a run uses them (the backends live above this library).
  void switches_off(const YAML::Node& off) {
    if (!off || !off.IsMap()) return;
    for (const auto& item : off) {
      const std::string model = item.first.as<std::string>();
      const auto& body = item.second;
      if (!body.IsMap()) {
        yaml.refuse(body, "zoobench.switches_off." + model +
                              " must be a mapping: {BACKEND: [switch, ...], reason: ...}");
      }
      SuiteConfig::ModelSwitchesOff entry;
      for (const auto& field : body) {
        const std::string key = field.first.as<std::string>();
        if (key == "reason") {
          entry.reason = field.second.as<std::string>();
        } else {
          std::set<std::string> listed = yaml.names(field.second);
          entry.by_backend[key] = std::vector<std::string>(listed.begin(), listed.end());
        }
      }
      if (entry.reason.empty()) {
        yaml.refuse(body, "switches turned off for '" + model +
                              "' need a `reason:` (the run's log and bisect's report show it)");
      }
      if (entry.by_backend.empty()) {
        yaml.refuse(body, "zoobench.switches_off." + model +
                              " names no backend: {BACKEND: [switch, ...], reason: ...}");
      }
      config.switches_off_[model] = std::move(entry);
    }
  }

  // {model: {deterministic: BOOL, benchmark: BOOL}}, either switch optional, at least one.
  void cudnn_set_by_model(const YAML::Node& node) {
    if (!node || node.IsNull()) return;
    const std::string form = "{model: {deterministic: true|false, benchmark: true|false}}";
    if (!node.IsMap()) yaml.refuse(node, "zoobench.cudnn_set_by_model is " + form);
    for (const auto& item : node) {
      const std::string model = item.first.as<std::string>();
      const std::string key = "zoobench.cudnn_set_by_model." + model;
      if (!item.second.IsMap()) yaml.refuse(item.second, key + " is not " + form);
      CudnnSwitches switches;
      for (const auto& entry : item.second) {
        const std::string name = entry.first.as<std::string>();
        std::optional<bool>* slot = name == "deterministic" ? &switches.deterministic
                                    : name == "benchmark"   ? &switches.benchmark
                                                            : nullptr;
        bool value = false;
        if (!slot)
          yaml.refuse(entry.first,
                      key + ": unknown switch '" + name + "' (deterministic, benchmark)");
        if (!YAML::convert<bool>::decode(entry.second, value))
          yaml.refuse(entry.second, key + "." + name + " is true or false");
        *slot = value;
      }
      if (!switches.any()) yaml.refuse(item.second, key + " sets no switch");
      config.cudnn_set_by_model_[model] = switches;
    }
  }

  // A plain list of model names, each once: its order is the order jobs start in.
  void start_first(const YAML::Node& node) {
    if (!node || node.IsNull()) return;
    if (!node.IsSequence()) yaml.refuse(node, "zoobench.start_first is a list of model names");
    std::set<std::string> seen;
    for (const auto& item : node) {
      if (!item.IsScalar()) yaml.refuse(item, "zoobench.start_first lists model names only");
      const std::string model = item.as<std::string>();
      if (!seen.insert(model).second)
        yaml.refuse(item, "zoobench.start_first names '" + model + "' twice");
      config.start_first_.push_back(model);
    }
  }

  void zoobench_keys(const YAML::Node& ours) {
    if (!ours) return;
    if (ours["tolerance_rule"]) config.rule_ = tolerance_rule(yaml, ours["tolerance_rule"]);
    config.patches_ = yaml.patch_map(ours["patches"]);
    config.training_patches_ = yaml.patch_map(ours["training_patches"]);
    config.flaky_ = yaml.names(ours["flaky"]);
    config.deterministic_algorithms_off_ = yaml.names(ours["deterministic_algorithms_off"]);
    cudnn_set_by_model(ours["cudnn_set_by_model"]);
    start_first(ours["start_first"]);
    config.memory_heavy_ = yaml.names(ours["memory_heavy"]);
    for (const auto& name : yaml.names(ours["use_iou_for_bool"])) config.iou_for_bool_.insert(name);
    tolerance_overrides(ours["tolerance_overrides"]);
    switches_off(ours["switches_off"]);
    config.extra_models_ = yaml.names(ours["extra_models"]);
    config.run_despite_checkout_skip_ = yaml.names(ours["run_despite_checkout_skip"]);
    if (auto size = ours["image_size"]; size && !size.IsNull())
      config.image_size_ = whole_number_in(yaml, size, "zoobench.image_size", "the suite", 1, 8192);
    // Why a model of a skip list is skipped, in words: {model: reason}.
    if (auto reasons = ours["skip_reasons"]; reasons && reasons.IsMap()) {
      for (const auto& item : reasons) {
        config.skip_reasons_[item.first.as<std::string>()] = item.second.as<std::string>();
      }
    }
    // The training loss is multiplied by it: 0 or a negative scale trains nothing or the wrong
    // way, NaN or infinity makes every gradient NaN.
    if (auto scales = ours["loss_scale"]; scales && scales.IsMap()) {
      for (const auto& item : scales) {
        const std::string model = item.first.as<std::string>();
        config.loss_scale_[model] = number_in(
            yaml, item.second, "zoobench.loss_scale", model,
            [](double v) { return std::isfinite(v) && v > 0; }, "a finite number greater than 0");
      }
    }
  }
};

SuiteConfig SuiteConfig::load(const std::string& yaml_path, const std::string& suite) {
  SuiteConfig config(suite);
  YAML::Node root;
  std::string text;
  try {
    text = read_text_file(yaml_path, kSmallFileLimitBytes);
  } catch (const std::exception& e) {
    throw UsageError(e.what());
  }
  try {
    refuse_duplicate_yaml_keys(text, yaml_path);
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw UsageError(where(yaml_path, e.mark) + ": " + e.msg);
  }
  if (!root || root.IsNull()) return config;
  if (!root.IsMap()) throw UsageError(yaml_path + ": expected a mapping at the top level");
  SuiteYaml yaml(yaml_path);
  try {
    check_known_keys(yaml, root);
    SuiteYamlReader reader{config, yaml};
    reader.upstream_lists(root);
    reader.tolerance(root["tolerance"]);
    reader.zoobench_keys(root["zoobench"]);
  } catch (const YAML::Exception& e) {
    throw UsageError(where(yaml_path, e.mark) + ": " + e.msg);
  }
  return config;
}

std::optional<std::string> SuiteConfig::skip_reason(const std::string& model, const std::string& device_type,
                                                    Mode mode, bool accuracy) const {
  if (skip_all_.count(model)) {
    auto why = skip_reasons_.find(model);
    return "skip.all in " + suite_ + ".yaml" + (why == skip_reasons_.end() ? "" : ": " + why->second);
  }
  auto device = skip_device_.find(device_type);
  if (device != skip_device_.end() && device->second.count(model)) {
    return "skip.device." + device_type + " in " + suite_ + ".yaml";
  }
  if (mode == Mode::kTraining && skip_training_.count(model)) return "skip.test.training in " + suite_ + ".yaml";
  if (mode == Mode::kInference && skip_inference_.count(model)) return "skip.test.inference in " + suite_ + ".yaml";
  if (mode == Mode::kInference && only_training_.count(model)) return "only_training in " + suite_ + ".yaml";
  if (mode == Mode::kTraining && only_inference_.count(model)) return "only_inference in " + suite_ + ".yaml";
  if (accuracy && accuracy_skip_large_.count(model)) return "accuracy.skip.large_models in " + suite_ + ".yaml";
  return std::nullopt;
}

bool SuiteConfig::is_non_deterministic(const std::string& model) const {
  return non_deterministic_.count(model) > 0;
}

std::optional<std::size_t> SuiteConfig::start_rank(const std::string& model) const {
  auto it = std::find(start_first_.begin(), start_first_.end(), model);
  if (it == start_first_.end()) return std::nullopt;
  return static_cast<std::size_t>(it - start_first_.begin());
}

bool SuiteConfig::eager_not_deterministic(const std::string& model, Mode mode) const {
  // torchbench.py's skip_accuracy_check_as_eager_non_deterministic: the list in training only.
  return mode == Mode::kTraining && accuracy_skip_eager_nondeterministic_.count(model) > 0;
}

std::optional<int64_t> SuiteConfig::accuracy_max_batch_size(const std::string& model) const {
  auto it = accuracy_max_batch_.find(model);
  if (it == accuracy_max_batch_.end()) return std::nullopt;
  return it->second;
}

bool SuiteConfig::trains_in_eval_mode_for_accuracy(const std::string& model) const {
  // common.py sets use_eval_mode for accuracy runs of every suite but timm_models and
  // huggingface ("remove sources of randomness"); torchbench.py keeps only_training models in
  // train mode.
  return rule_ != "timm_models" && rule_ != "huggingface" && only_training_.count(model) == 0;
}

int SuiteConfig::accuracy_check_runs(const std::string& model) const {
  auto it = accuracy_check_runs_.find(model);
  return it == accuracy_check_runs_.end() ? 1 : std::max(1, it->second);
}

ToleranceDecision SuiteConfig::tolerance(const std::string& model, Mode mode, Precision precision,
                                         const std::string& device_type, bool cosine_flag) const {
  ToleranceDecision d;
  d.cosine = cosine_flag;
  d.larger_multiplier_for_smaller_tensor = larger_multiplier_.count(model) > 0;
  d.use_iou_for_bool = iou_for_bool_.count(model) > 0 || listed_in(tolerance_lists_, "use_iou_for_bool_masks", model);
  auto listed = [&](const char* list) {
    auto it = tolerance_lists_.find(list);
    return it != tolerance_lists_.end() && it->second.count(model) > 0;
  };
  d.force_max_multiplier = listed("force_max_multiplier");
  if (auto it = iou_thresholds_.find(model); it != iou_thresholds_.end()) d.iou_threshold = it->second;
  const bool training = mode == Mode::kTraining;
  auto set = [&](double tol, std::string source) {
    d.tolerance = tol;
    d.source = std::move(source);
  };
  if (rule_ == "huggingface") {
    if (training) {
      if (listed("higher_training")) set(2e-2, "suite:higher_training");
      else set(1e-2, "suite:training");
    } else if (device_type == "cpu" && listed("higher_inference_cpu")) {
      set(5e-3, "suite:higher_inference_cpu");
    } else if (listed("higher_inference")) {
      set(4e-3, "suite:higher_inference");
    } else {
      set(1e-3, "suite:inference");
    }
  } else if (rule_ == "timm_models") {
    set(1e-3, "suite:default");
    if (training) {
      // Upstream timm_models.yaml's keys (older copies of it spell them without "_training").
      if (listed("highest_training") || listed("highest")) set(16e-2, "suite:highest_training");
      else if (listed("even_higher")) set(8e-2, "suite:even_higher");
      else if (listed("higher_training") || listed("higher")) set(4e-2, "suite:higher_training");
      else if (precision == Precision::kAmp && listed("higher_amp")) set(4e-2, "suite:higher_amp");
      else set(1e-2, "suite:training");
    }
  } else {
    // torchbench (and suites without a rule of their own).
    bool done = false;
    if (precision == Precision::kFloat16 || precision == Precision::kAmp) {
      if (listed("higher_fp16")) set(1e-2, "suite:higher_fp16");
      else if (listed("even_higher")) set(8e-2, "suite:even_higher");
      else set(1e-3, "fp16/amp");
      done = true;
    } else if (precision == Precision::kBFloat16 && listed("higher_bf16")) {
      set(1e-2, "suite:higher_bf16");
      done = true;
    }
    if (!done && training && device_type == "cuda") {
      set(1e-3, "training on cuda");
      if (listed("cosine")) {
        d.cosine = true;
        d.source = "suite:cosine";
      } else if (listed("higher")) {
        set(1e-3, "suite:higher");
      } else if (listed("even_higher")) {
        set(8e-2, "suite:even_higher");
      }
    }
  }
  auto override_it = overrides_.find(model);
  if (override_it != overrides_.end() && (!override_it->second.mode || *override_it->second.mode == mode)) {
    const Override& o = override_it->second;
    d.tolerance = o.tolerance;
    if (o.cosine) d.cosine = *o.cosine;
    d.source = "zoobench:override (" + o.reason + ")";
  }
  return d;
}

std::vector<std::string> SuiteConfig::patches_for(const std::string& model, Mode mode) const {
  std::vector<std::string> out;
  if (auto it = patches_.find(model); it != patches_.end()) out = it->second;
  if (mode == Mode::kTraining) {
    if (auto it = training_patches_.find(model); it != training_patches_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
    }
  }
  return out;
}

std::vector<std::string> SuiteConfig::patches_for(const Manifest& manifest, Mode mode) const {
  std::vector<std::string> out = patches_for(manifest.name, mode);
  for (const auto& name : manifest.patches) {
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  return out;
}

SuiteConfig::SwitchesOff SuiteConfig::switches_off(const std::string& model,
                                                  const std::string& backend) const {
  auto it = switches_off_.find(model);
  if (it == switches_off_.end()) return {};
  const auto& by_backend = it->second.by_backend;
  auto listed = by_backend.find(backend);
  if (listed == by_backend.end()) listed = by_backend.find(backend.substr(0, backend.find(':')));
  if (listed == by_backend.end()) return {};
  return {listed->second, it->second.reason};
}

std::map<std::string, std::vector<std::string>> SuiteConfig::patch_assignments() const {
  auto all = patches_;
  for (const auto& [model, names] : training_patches_) {
    auto& list = all[model];
    list.insert(list.end(), names.begin(), names.end());
  }
  return all;
}

double SuiteConfig::loss_scale(const std::string& model) const {
  auto it = loss_scale_.find(model);
  return it == loss_scale_.end() ? 1.0 : it->second;
}

namespace {

// A list line's batch size: digits only ("8x" and "-3" are typos, not 8 and -3), 1 to 2^20.
int64_t parse_list_batch_size(const std::string& text, const std::string& where) {
  const bool digits = !text.empty() && text.size() <= 7 &&
                      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  const int64_t value = digits ? std::stoll(text) : 0;
  if (value < 1 || value > (int64_t{1} << 20)) {
    throw UsageError(where + ": batch size '" + text +
                     "' is not a whole number from 1 to 1048576 (expected `name`, `name bs` or "
                     "`name,bs`)");
  }
  return value;
}

// The fields of a list line, comments dropped ("" none), commas and tabs as spaces.
std::vector<std::string> list_fields(const std::string& line) {
  std::string text = trim(line.substr(0, line.find('#')));
  for (char& c : text) {
    if (c == ',' || c == '\t' || c == '\r') c = ' ';
  }
  auto parts = split(text, ' ');
  parts.erase(std::remove_if(parts.begin(), parts.end(), [](const std::string& p) { return p.empty(); }),
              parts.end());
  return parts;
}

}  // namespace

std::vector<ModelListEntry> read_model_list(const std::string& path) {
  std::string contents;
  try {  // a regular file of a sane size: a FIFO would block the run, /dev/zero never end
    contents = read_text_file(path, kSmallFileLimitBytes);
  } catch (const std::exception& e) {
    throw UsageError(std::string("cannot read model list: ") + e.what());
  }
  std::vector<ModelListEntry> entries;
  std::map<std::string, int> first_line;
  std::istringstream in(contents);
  std::string line;
  for (int line_number = 1; std::getline(in, line); ++line_number) {
    const auto parts = list_fields(line);
    if (parts.empty()) continue;
    const std::string where = path + ":" + std::to_string(line_number);
    if (parts.size() > 2) {
      throw UsageError(where + ": '" + trim(line) +
                       "' has more than a name and a batch size (expected `name`, `name bs` or "
                       "`name,bs`)");
    }
    ModelListEntry entry{parts[0], std::nullopt};
    if (auto problem = name_problem(entry.name))
      throw UsageError(where + ": '" + entry.name + "' cannot be a model's name: " + *problem);
    if (parts.size() == 2) entry.batch_size = parse_list_batch_size(parts[1], where);
    auto [seen, added] = first_line.emplace(entry.name, line_number);
    if (!added) {
      throw UsageError(where + ": '" + entry.name + "' is listed already on line " +
                       std::to_string(seen->second) + ": name each model once");
    }
    entries.push_back(entry);
  }
  return entries;
}

SuiteFiles find_suite_files(const std::string& suites_dir, const std::string& suite) {
  namespace fs = std::filesystem;
  SuiteFiles files;
  fs::path list = fs::path(suites_dir) / (suite + "_models_list.txt");
  if (!fs::exists(list) && ends_with(suite, "_models"))
    list = fs::path(suites_dir) / (suite + "_list.txt");
  if (fs::exists(list)) files.list = list.string();
  const fs::path yaml = fs::path(suites_dir) / (suite + ".yaml");
  if (fs::exists(yaml)) files.yaml = yaml.string();
  return files;
}

}  // namespace zoobench
