// Model selection and partitioning.
#include "zoobench/runner/selection.h"

#include <algorithm>
#include <filesystem>
#include <memory>

#include "zoobench/util/errors.h"
#include "zoobench/util/log.h"
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
    const std::string yaml = find_suite_files(suites_dir, suite).yaml;
    configs.emplace(suite, yaml.empty() ? SuiteConfig(suite) : SuiteConfig::load(yaml, suite));
  }
  return configs;
}

void add_listed_models(ZooCatalog& catalog, const RunOptions& options,
                       const std::string& suites_dir) {
  const std::string list = find_suite_files(suites_dir, options.suite).list;
  if (list.empty()) return;
  for (const auto& entry : read_model_list(list)) catalog.add_to_export(options.suite, entry.name);
}

std::pair<std::size_t, std::size_t> partition_range(std::size_t count, int total, int id) {
  if (total <= 1) return {0, count};
  // Upstream's get_benchmark_indices: each partition takes count / total models (rounded down)
  // and the last one takes the rest, so 7 models in 2 partitions are 3 + 4.
  const std::size_t per = count / static_cast<std::size_t>(total);
  const std::size_t uid = static_cast<std::size_t>(id);
  const std::size_t begin = std::min(uid * per, count);
  const std::size_t end = id < total - 1 ? std::min(begin + per, count) : count;
  return {begin, end};
}

namespace {

// One suite's models in the order upstream partitions them: sorted, and torchbench.py sorts the
// models' paths, where canary_models/<name> comes before models/<name>: the canary models the
// yaml names (canary_models) come first.
std::vector<ZooEntry> in_upstream_order(std::vector<ZooEntry> models, const SuiteConfig* config) {
  std::stable_sort(models.begin(), models.end(), [&](const ZooEntry& a, const ZooEntry& b) {
    const bool a_canary = config && config->is_canary(a.name);
    const bool b_canary = config && config->is_canary(b.name);
    if (a_canary != b_canary) return a_canary;
    return a.name < b.name;
  });
  return models;
}

// The models of partition `options.partition_id`, as upstream's iter_model_names takes them: the
// suite's whole list is split first, and -k/-x/--exclude-exact and the skip lists narrow each
// part afterwards, so partition K here is upstream's partition K where the lists are the same
// (and a narrowed partition may be empty). With --suite all each suite is split on its own, as
// upstream runs one script per suite.
std::vector<ZooEntry> partition_of(const std::vector<ZooEntry>& entries, const RunOptions& options,
                                   const std::map<std::string, SuiteConfig>& configs) {
  std::vector<ZooEntry> out;
  for (auto first = entries.begin(); first != entries.end();) {
    const std::string& suite_name = first->suite;
    auto last = std::find_if(first, entries.end(),
                             [&](const ZooEntry& e) { return e.suite != suite_name; });
    const auto config = configs.find(suite_name);
    const std::vector<ZooEntry> suite =
        in_upstream_order({first, last}, config == configs.end() ? nullptr : &config->second);
    const auto [begin, end] =
        partition_range(suite.size(), options.total_partitions, options.partition_id);
    out.insert(out.end(), suite.begin() + static_cast<std::ptrdiff_t>(begin),
               suite.begin() + static_cast<std::ptrdiff_t>(end));
    first = last;
  }
  return out;
}

void require_known_only_names(const std::vector<ZooEntry>& entries, const RunOptions& options) {
  for (const auto& name : options.only) {
    bool found = false;
    for (const auto& entry : entries) found = found || entry.name == name;
    if (found) continue;
    std::vector<std::string> names;
    for (const auto& entry : entries) names.push_back(entry.name);
    auto close = closest_names(name, names);
    throw UsageError("unknown model '" + name + "' in suite '" + options.suite + "'" +
                     (close.empty() ? "" : "; did you mean: " + join(close, ", ")) +
                     " (`zoobench list` shows the zoo)");
  }
}

bool is_listed(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

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
  require_known_only_names(entries, options);
  // Upstream's --only runs its model whatever the partition (the partition splits the list
  // that --only replaces).
  if (options.only.empty() && options.total_partitions > 1)
    entries = partition_of(entries, options, configs);
  else if (options.total_partitions > 1)
    log::warn(
        "--only runs its models in every partition, as upstream's --only ignores "
        "--total-partitions/--partition-id");
  auto filters = compile_all(options.filters, "--filter");
  auto excludes = compile_all(options.excludes, "--exclude");
  std::vector<SelectedModel> selected;
  for (const auto& entry : entries) {
    if (!options.only.empty() && !is_listed(options.only, entry.name)) continue;
    if (!filters.empty() && !any_match(filters, entry.name)) continue;
    if (any_match(excludes, entry.name) || is_listed(options.exclude_exact, entry.name)) continue;
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
  return selected;
}

}  // namespace zoobench
