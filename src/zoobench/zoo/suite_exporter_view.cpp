// SuiteConfig::exporter_view: what the exporter (tools/zoo_export) takes from a suite yaml, in
// the yaml's own shape, so that the exporter reads zoobench's reading instead of the file.
#include <set>

#include "zoobench/zoo/suite_config.h"
#include "zoobench/util/errors.h"

namespace zoobench {
namespace {

nlohmann::json names(const std::set<std::string>& listed) {
  return nlohmann::json(std::vector<std::string>(listed.begin(), listed.end()));
}

nlohmann::json sizes(const std::map<std::string, int64_t>& table) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [model, size] : table) out[model] = size;
  return out;
}

nlohmann::json list_models(const std::string& list_path) {
  nlohmann::json models = nlohmann::json::array();
  if (list_path.empty()) return models;
  for (const auto& entry : read_model_list(list_path)) {
    models.push_back({{"name", entry.name},
                      {"batch_size", entry.batch_size ? nlohmann::json(*entry.batch_size)
                                                      : nlohmann::json()}});
  }
  return models;
}

nlohmann::json path_or_null(const std::string& path) {
  return path.empty() ? nlohmann::json() : nlohmann::json(path);
}

}  // namespace

nlohmann::json read_suite_for_exporter(const std::string& suites_dir, const std::string& suite) {
  const SuiteFiles files = find_suite_files(suites_dir, suite);
  if (files.list.empty() && files.yaml.empty()) {
    throw UsageError("unknown suite '" + suite + "': " + suites_dir + " has neither " + suite +
                     "_models_list.txt nor " + suite + ".yaml");
  }
  const SuiteConfig config =
      files.yaml.empty() ? SuiteConfig(suite) : SuiteConfig::load(files.yaml, suite);
  return {{"format", "zoobench-suite/1"},     {"suite", suite},
          {"list", path_or_null(files.list)}, {"yaml", path_or_null(files.yaml)},
          {"models", list_models(files.list)}, {"config", config.exporter_view()}};
}

nlohmann::json SuiteConfig::exporter_view() const {
  nlohmann::json device = nlohmann::json::object();
  for (const auto& [type, listed] : skip_device_) device[type] = names(listed);
  nlohmann::json reasons = nlohmann::json::object();
  for (const auto& [model, why] : skip_reasons_) reasons[model] = why;
  return {
      {"batch_size",
       {{"training", sizes(batch_training_)},
        {"inference", sizes(batch_inference_)},
        {"divisors", sizes(batch_divisors_)}}},
      {"dont_change_batch_size", names(dont_change_batch_)},
      {"accuracy", {{"max_batch_size", sizes(accuracy_max_batch_)}}},
      {"skip",
       {{"all", names(skip_all_)},
        {"device", device},
        {"test", {{"training", names(skip_training_)}, {"inference", names(skip_inference_)}}}}},
      {"only_training", names(only_training_)},
      {"only_inference", names(only_inference_)},
      {"canary_models", names(canary_)},
      {"scaled_compute_loss", names(scaled_compute_loss_)},
      {"zoobench",
       {{"extra_models", names(extra_models_)},
        {"image_size", image_size_ ? nlohmann::json(*image_size_) : nlohmann::json()},
        {"skip_reasons", reasons},
        {"run_despite_checkout_skip", names(run_despite_checkout_skip_)}}}};
}

}  // namespace zoobench
