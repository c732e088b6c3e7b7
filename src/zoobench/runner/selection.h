// Which models a run covers: the zoo's models of the chosen suite(s), split into partitions as
// upstream splits them (before any filter), narrowed by --only, -k/--filter, -x/--exclude and
// --exclude-exact, with each model's reason to be skipped (suite yaml skip lists) — `zoobench
// list` shows the same reasons a run applies. A canary model runs when it is in the zoo: the
// exporter exports one only with --only or when the yaml's canary_models names it (upstream's
// meaning of that list).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "zoobench/runner/run_options.h"
#include "zoobench/zoo/catalog.h"
#include "zoobench/zoo/suite_config.h"

namespace zoobench {

struct SelectedModel {
  ZooEntry entry;
  std::optional<std::string> skip_reason;
};

// Suite configurations by suite name, read from the suites folder (a suite without a yaml
// gets the defaults). Throws UsageError for a yaml that does not parse.
std::map<std::string, SuiteConfig> load_suite_configs(const std::string& suites_dir,
                                                      const std::vector<std::string>& suites);

// Export on demand: adds the models of `options.suite`'s list
// (<suites_dir>/<suite>_models_list.txt) that the zoo lacks, so that the run exports them. For a
// named suite only: `--suite all` means the zoo's suites as they are.
void add_listed_models(ZooCatalog& catalog, const RunOptions& options,
                       const std::string& suites_dir);

// The models of the run in a stable order (suite, name). Unknown --only names are a UsageError
// with close matches. As upstream's iter_model_names: each suite's whole list, sorted (canary
// models first, as torchbench.py's sorted paths put canary_models/ before models/), is split
// by partition_range first; the filters, --exclude-exact and the skip lists then narrow the
// partition. --only ignores partitions, as upstream's. The partitions match upstream's where
// the zoo's list is upstream's list.
std::vector<SelectedModel> select_models(const ZooCatalog& catalog, const RunOptions& options,
                                         const std::map<std::string, SuiteConfig>& configs,
                                         const std::string& device_type);

// Contiguous split of `count` items into `total` partitions, upstream's get_benchmark_indices:
// partition `id` gets [begin, end), count / total items (rounded down) each and the rest in the
// last (7 in 2: 3 + 4).
std::pair<std::size_t, std::size_t> partition_range(std::size_t count, int total, int id);

}  // namespace zoobench
