// yaml parsing and upstream's per-suite tolerance rules.
#include "zoobench/zoo/suite_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>

#include "zoobench/util/errors.h"
#include "zoobench/util/text.h"

namespace zoobench {
namespace {

// Upstream lists may nest (they are flattened) and may be null.
void collect_names(const YAML::Node& node, std::set<std::string>& out) {
  if (!node || node.IsNull()) return;
  if (node.IsScalar()) {
    out.insert(node.as<std::string>());
  } else if (node.IsSequence()) {
    for (const auto& item : node) collect_names(item, out);
  } else if (node.IsMap()) {
    // A map used as a set (`model: reason`): the keys are the names.
    for (const auto& item : node) out.insert(item.first.as<std::string>());
  }
}

std::set<std::string> names(const YAML::Node& node) {
  std::set<std::string> out;
  collect_names(node, out);
  return out;
}

std::map<std::string, int64_t> sizes(const YAML::Node& node) {
  std::map<std::string, int64_t> out;
  if (node && node.IsMap()) {
    for (const auto& item : node) out[item.first.as<std::string>()] = item.second.as<int64_t>();
  }
  return out;
}

std::string where(const std::string& path, const YAML::Mark& mark) {
  return path + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
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

bool listed_in(const std::map<std::string, std::set<std::string>>& lists, const char* list, const std::string& model) {
  auto it = lists.find(list);
  return it != lists.end() && it->second.count(model) > 0;
}

}  // namespace

SuiteConfig::SuiteConfig(std::string suite) : suite_(std::move(suite)) {
  rule_ = suite_ == "huggingface" || suite_ == "timm_models" ? suite_ : "torchbench";
}

SuiteConfig SuiteConfig::load(const std::string& yaml_path, const std::string& suite) {
  SuiteConfig config(suite);
  YAML::Node root;
  try {
    root = YAML::LoadFile(yaml_path);
  } catch (const YAML::BadFile&) {
    throw UsageError("cannot read " + yaml_path);
  } catch (const YAML::Exception& e) {
    throw UsageError(where(yaml_path, e.mark) + ": " + e.msg);
  }
  if (!root || root.IsNull()) return config;
  if (!root.IsMap()) throw UsageError(yaml_path + ": expected a mapping at the top level");
  try {
    if (auto batch = root["batch_size"]) {
      config.batch_training_ = sizes(batch["training"]);
      config.batch_inference_ = sizes(batch["inference"]);
    }
    if (auto skip = root["skip"]) {
      config.skip_all_ = names(skip["all"]);
      if (auto device = skip["device"]; device && device.IsMap()) {
        for (const auto& item : device) config.skip_device_[item.first.as<std::string>()] = names(item.second);
      }
      if (auto test = skip["test"]) {
        config.skip_training_ = names(test["training"]);
        config.skip_inference_ = names(test["inference"]);
      }
    }
    config.only_training_ = names(root["only_training"]);
    config.only_inference_ = names(root["only_inference"]);
    if (auto accuracy = root["accuracy"]; accuracy && accuracy["skip"]) {
      config.accuracy_skip_large_ = names(accuracy["skip"]["large_models"]);
      config.accuracy_skip_eager_nondeterministic_ = names(accuracy["skip"]["eager_not_deterministic"]);
    }
    config.canary_ = names(root["canary_models"]);
    config.non_deterministic_ = names(root["non_deterministic"]);
    if (auto tolerance = root["tolerance"]; tolerance && tolerance.IsMap()) {
      for (const auto& item : tolerance) {
        config.tolerance_lists_[item.first.as<std::string>()] = names(item.second);
      }
      // upstream's tolerance.accuracy_check_runs: {model: N} compiled runs, majority vote
      if (auto runs = tolerance["accuracy_check_runs"]; runs && runs.IsMap()) {
        for (const auto& item : runs) {
          config.accuracy_check_runs_[item.first.as<std::string>()] = item.second.as<int>();
        }
      }
      if (auto thresholds = tolerance["iou_thresholds"]; thresholds && thresholds.IsMap()) {
        for (const auto& item : thresholds) {
          config.iou_thresholds_[item.first.as<std::string>()] = item.second.as<double>();
        }
      }
    }
    config.larger_multiplier_ = names(root["require_larger_multiplier_for_smaller_tensor"]);
    if (auto ours = root["zoobench"]) {
      if (ours["tolerance_rule"]) config.rule_ = ours["tolerance_rule"].as<std::string>();
      config.patches_ = patch_map(ours["patches"]);
      config.training_patches_ = patch_map(ours["training_patches"]);
      config.flaky_ = names(ours["flaky"]);
      for (const auto& name : names(ours["use_iou_for_bool"])) config.iou_for_bool_.insert(name);
      if (auto overrides = ours["tolerance_overrides"]; overrides && overrides.IsMap()) {
        for (const auto& item : overrides) {
          Override o;
          const auto& body = item.second;
          o.tolerance = body["tolerance"].as<double>();
          if (body["cosine"]) o.cosine = body["cosine"].as<bool>();
          if (body["mode"]) o.mode = body["mode"].as<std::string>() == "training" ? Mode::kTraining : Mode::kInference;
          o.reason = body["reason"] ? body["reason"].as<std::string>() : "";
          if (o.reason.empty()) {
            throw UsageError(where(yaml_path, body.Mark()) + ": tolerance override for '" +
                             item.first.as<std::string>() + "' needs a `reason:` (it is shown in results)");
          }
          config.overrides_[item.first.as<std::string>()] = o;
        }
      }
      // Why a model of a skip list is skipped, in words: {model: reason}.
      if (auto reasons = ours["skip_reasons"]; reasons && reasons.IsMap()) {
        for (const auto& item : reasons) {
          config.skip_reasons_[item.first.as<std::string>()] = item.second.as<std::string>();
        }
      }
      if (auto scales = ours["loss_scale"]; scales && scales.IsMap()) {
        for (const auto& item : scales) config.loss_scale_[item.first.as<std::string>()] = item.second.as<double>();
      }
    }
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
  return non_deterministic_.count(model) > 0 || accuracy_skip_eager_nondeterministic_.count(model) > 0;
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

std::optional<int64_t> SuiteConfig::batch_size(const std::string& model, Mode mode) const {
  const auto& table = mode == Mode::kTraining ? batch_training_ : batch_inference_;
  auto it = table.find(model);
  if (it == table.end()) return std::nullopt;
  return it->second;
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

std::vector<ModelListEntry> read_model_list(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("cannot read model list " + path);
  std::vector<ModelListEntry> entries;
  std::string line;
  int line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    std::string text = trim(line.substr(0, line.find('#')));
    if (text.empty()) continue;
    for (char& c : text) {
      if (c == ',' || c == '\t') c = ' ';
    }
    auto parts = split(text, ' ');
    parts.erase(std::remove_if(parts.begin(), parts.end(), [](const std::string& p) { return p.empty(); }),
                parts.end());
    ModelListEntry entry{parts[0], std::nullopt};
    if (parts.size() >= 2) {
      try {
        entry.batch_size = std::stoll(parts[1]);
      } catch (const std::exception&) {
        throw UsageError(path + ":" + std::to_string(line_number) + ": batch size '" + parts[1] +
                         "' is not a number (expected `name`, `name bs` or `name,bs`)");
      }
    }
    entries.push_back(entry);
  }
  return entries;
}

}  // namespace zoobench
