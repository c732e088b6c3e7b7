// Model selection and partitioning.
#include "zoobench/runner/selection.h"

#include <filesystem>
#include <memory>

#include "zoobench/util/errors.h"
#include "zoobench/util/name_pattern.h"
#include "zoobench/util/text.h"

namespace zoobench {
namespace {

using NamePatterns = std::vector<std::unique_ptr<NamePattern>>;

NamePatterns compile_all(const std::vector<std::string>& patterns, const char* flag) {
  NamePatterns out;
  for (const auto& pattern : patterns) out.push_back(std::make_unique<NamePattern>(pattern, flag));
  return out;
}

bool any_match(const NamePatterns& patterns, const std::string& name) {
  for (const auto& pattern : patterns) {
    if (pattern->found_in(name)) return true;
  }
  return false;
}

}  // namespace

std::map<std::string, SuiteConfig> load_suite_configs(const std::string& suites_dir,
                                                      const std::vector<std::string>& suites) {
  std::map<std::string, SuiteConfig> configs;
  for (const auto& suite : suites) {
    std::string path = (std::filesystem::path(suites_dir) / (suite + ".yaml")).string();
    if (std::filesystem::exists(path)) {
      configs.emplace(suite, SuiteConfig::load(path, suite));
    } else {
      configs.emplace(suite, SuiteConfig(suite));
    }
  }
  return configs;
}

void add_listed_models(ZooCatalog& catalog, const RunOptions& options,
                       const std::string& suites_dir) {
  // suites/<suite>_models_list.txt; upstream's timm suite `timm_models` names its list
  // timm_models_list.txt, so a suite named *_models may use <suite>_list.txt (as the exporter).
  auto list = std::filesystem::path(suites_dir) / (options.suite + "_models_list.txt");
  if (!std::filesystem::exists(list) && ends_with(options.suite, "_models"))
    list = std::filesystem::path(suites_dir) / (options.suite + "_list.txt");
  if (!std::filesystem::exists(list)) return;
  for (const auto& entry : read_model_list(list.string())) {
    catalog.add_to_export(options.suite, entry.name);
  }
}

std::pair<std::size_t, std::size_t> partition_range(std::size_t count, int total, int id) {
  if (total <= 1) return {0, count};
  // Same arithmetic as upstream: the first `count % total` partitions get one extra model.
  std::size_t per = count / static_cast<std::size_t>(total);
  std::size_t extra = count % static_cast<std::size_t>(total);
  std::size_t uid = static_cast<std::size_t>(id);
  std::size_t begin = uid * per + std::min(uid, extra);
  std::size_t end = begin + per + (uid < extra ? 1 : 0);
  return {begin, end};
}

std::vector<SelectedModel> select_models(const ZooCatalog& catalog, const RunOptions& options,
                                         const std::map<std::string, SuiteConfig>& configs,
                                         const std::string& device_type) {
  if (options.total_partitions < 1 || options.partition_id < 0 ||
      options.partition_id >= options.total_partitions) {
    throw UsageError("--partition-id must be in [0, --total-partitions); got " +
                     std::to_string(options.partition_id) + " of " +
                     std::to_string(options.total_partitions));
  }
  auto entries = catalog.models(options.suite);
  if (entries.empty()) {
    throw UsageError("the zoo at '" + catalog.directory() + "' has no models of suite '" +
                     options.suite + "'; suites there: " + join(catalog.suites(), ", "));
  }
  for (const auto& name : options.only) {
    bool found = false;
    for (const auto& entry : entries) found = found || entry.name == name;
    if (!found) {
      std::vector<std::string> names;
      for (const auto& entry : entries) names.push_back(entry.name);
      auto close = closest_names(name, names);
      throw UsageError("unknown model '" + name + "' in suite '" + options.suite + "'" +
                       (close.empty() ? "" : "; did you mean: " + join(close, ", ")) +
                       " (`zoobench list` shows the zoo)");
    }
  }
  auto filters = compile_all(options.filters, "--filter");
  auto excludes = compile_all(options.excludes, "--exclude");
  std::vector<SelectedModel> selected;
  for (const auto& entry : entries) {
    if (!options.only.empty() &&
        std::find(options.only.begin(), options.only.end(), entry.name) == options.only.end()) {
      continue;
    }
    if (!filters.empty() && !any_match(filters, entry.name)) continue;
    if (any_match(excludes, entry.name)) continue;
    if (std::find(options.exclude_exact.begin(), options.exclude_exact.end(), entry.name) !=
        options.exclude_exact.end())
      continue;
    SelectedModel model{entry, std::nullopt};
    auto config = configs.find(entry.suite);
    if (config != configs.end()) {
      // With --performance too, an accuracy.skip reason skips only the check (plan_jobs).
      model.skip_reason =
          config->second.skip_reason(entry.name, device_type, options.mode, options.accuracy);
      // --no-skip, as upstream's: the skip lists no longer skip; the large models' accuracy
      // skip (pass_due_to_skip, another list upstream too) stays.
      if (options.no_skip && model.skip_reason && !starts_with(*model.skip_reason, "accuracy.skip"))
        model.skip_reason.reset();
    }
    selected.push_back(std::move(model));
  }
  auto [begin, end] =
      partition_range(selected.size(), options.total_partitions, options.partition_id);
  return std::vector<SelectedModel>(selected.begin() + static_cast<std::ptrdiff_t>(begin),
                                    selected.begin() + static_cast<std::ptrdiff_t>(end));
}

}  // namespace zoobench
