// The models a run exports on demand (its suite's list, under either of its two names), the
// -k/-x patterns that choose among them, and the partitions, split as upstream's
// get_benchmark_indices splits them (before the filters).
#include "zoobench/runner/selection.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "testing/testing.h"
#include "zoobench/util/errors.h"

namespace zoobench {
namespace {

std::vector<std::string> listed(const std::string& suite, const std::string& list_file) {
  zoobench::testing::ScratchDir dir;
  std::ofstream(dir.file(list_file)) << "alpha 8\nbeta,4\n";
  ZooCatalog catalog = ZooCatalog::scan_or_empty(dir.file("zoo"));
  RunOptions options;
  options.suite = suite;
  add_listed_models(catalog, options, dir.path());
  std::vector<std::string> names;
  for (const auto& entry : catalog.models(suite)) names.push_back(entry.name);
  return names;
}

// Upstream's timm suite `timm_models` keeps its list in timm_models_list.txt (not
// timm_models_models_list.txt): an empty zoo still learns the list's models, as the exporter.
TEST(ListedModels, EitherListNameOfASuite) {
  EXPECT_EQ(listed("demo", "demo_models_list.txt"), (std::vector<std::string>{"alpha", "beta"}));
  EXPECT_EQ(listed("timm_models", "timm_models_list.txt"),
            (std::vector<std::string>{"alpha", "beta"}));
  EXPECT_TRUE(listed("demo", "demo_list.txt").empty());  // only *_models suites drop the infix
}

std::vector<std::string> selected(const std::vector<std::string>& names,
                                  const std::vector<std::string>& filters,
                                  const std::vector<std::string>& excludes = {}) {
  zoobench::testing::ScratchDir dir;
  ZooCatalog catalog = ZooCatalog::scan_or_empty(dir.file("zoo"));
  for (const auto& name : names) catalog.add_to_export("demo", name);
  RunOptions options;
  options.suite = "demo";
  options.filters = filters;
  options.excludes = excludes;
  std::vector<std::string> out;
  for (const auto& model : select_models(catalog, options, {}, "cpu")) out.push_back(model.entry.name);
  return out;
}

// Upstream's patterns (re.search, case-insensitive) as its users write them.
TEST(NamePatterns, SearchedCaseInsensitivelyAsUpstream) {
  const std::vector<std::string> names = {"BertForMaskedLM", "hf_Bert", "resnet50", "resnet18"};
  EXPECT_EQ(selected(names, {"^(hf_bert|resnet18)$"}), (std::vector<std::string>{"hf_Bert", "resnet18"}));
  EXPECT_EQ(selected(names, {"resnet[0-9]+"}, {"50"}), (std::vector<std::string>{"resnet18"}));
  EXPECT_EQ(selected(names, {"bert"}).size(), 2u);
  // Python's escapes and non-capturing groups, which POSIX expressions lack.
  EXPECT_EQ(selected(names, {R"(^(?:resnet)\d+$)"}, {R"(5\d)"}),
            (std::vector<std::string>{"resnet18"}));
}

// `(a+)+$` backtracked without end under std::regex; a pattern of 30,000 nested groups crashed
// its parser; glibc's regcomp took seconds and a gigabyte for the fuzzer's `(a+)$$$...` and
// `(a+++...`; a malformed one is named.
TEST(NamePatterns, HostilePatternsEndOrAreRefused) {
  const std::string long_name = std::string(100, 'a') + "b";
  EXPECT_TRUE(selected({long_name}, {"(a+)+$"}).empty());
  EXPECT_EQ(selected({long_name}, {"(a+)+b$"}).size(), 1u);
  EXPECT_TRUE(selected({long_name}, {"(a+)\v" + std::string(596, '$')}).empty());
  EXPECT_THROW(selected({long_name}, {"(a" + std::string(129, '+')}), UsageError);
  EXPECT_THROW(selected({long_name}, {"((((a{100}){100}){100}){100})"}), UsageError);
  EXPECT_THROW(selected({"aa"}, {"(a)\\1"}), UsageError);  // a back-reference needs backtracking
  try {
    selected({"a"}, {std::string(30000, '(') + std::string(30000, ')')});
    FAIL() << "a 60,000-character pattern was accepted";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("at most 1000"));
  }
  try {
    selected({"a"}, {"(unclosed"});
    FAIL() << "a malformed pattern was accepted";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("'(unclosed' is not a valid regular expression"));
  }
}

struct Partitioned {
  std::vector<std::string> names;  // the zoo's models of suite "demo"
  RunOptions options;
  std::map<std::string, SuiteConfig> configs;

  Partitioned(std::vector<std::string> models, int total) : names(std::move(models)) {
    options.suite = "demo";
    options.total_partitions = total;
  }
  std::vector<std::string> part(int id) {
    zoobench::testing::ScratchDir dir;
    ZooCatalog catalog = ZooCatalog::scan_or_empty(dir.file("zoo"));
    for (const auto& name : names) {
      const auto slash = name.find('/');  // "suite/name" for another suite than demo
      if (slash == std::string::npos) {
        catalog.add_to_export("demo", name);
      } else {
        catalog.add_to_export(name.substr(0, slash), name.substr(slash + 1));
      }
    }
    options.partition_id = id;
    std::vector<std::string> out;
    for (const auto& model : select_models(catalog, options, configs, "cpu"))
      out.push_back(model.entry.name);
    return out;
  }
};

using Names = std::vector<std::string>;

// common.py's get_benchmark_indices: length // total per partition, the last one takes the rest.
TEST(Partitions, EachTakesItsShareRoundedDownAndTheLastTheRest) {
  EXPECT_EQ(partition_range(7, 2, 0), (std::pair<std::size_t, std::size_t>{0, 3}));
  EXPECT_EQ(partition_range(7, 2, 1), (std::pair<std::size_t, std::size_t>{3, 7}));
  EXPECT_EQ(partition_range(7, 3, 1), (std::pair<std::size_t, std::size_t>{2, 4}));
  EXPECT_EQ(partition_range(7, 3, 2), (std::pair<std::size_t, std::size_t>{4, 7}));
  EXPECT_EQ(partition_range(2, 3, 0), (std::pair<std::size_t, std::size_t>{0, 0}));
  EXPECT_EQ(partition_range(2, 3, 2), (std::pair<std::size_t, std::size_t>{0, 2}));
  EXPECT_EQ(partition_range(5, 1, 0), (std::pair<std::size_t, std::size_t>{0, 5}));

  Partitioned seven({"a", "b", "c", "d", "e", "f", "g"}, 2);
  EXPECT_EQ(seven.part(0), (Names{"a", "b", "c"}));
  EXPECT_EQ(seven.part(1), (Names{"d", "e", "f", "g"}));
}

// Upstream's iter_model_names partitions the sorted list first, then drops what -k, -x,
// --exclude-exact and the skip lists leave out: a filter never moves a model to another
// partition.
TEST(Partitions, SplitTheWholeListBeforeFiltersAndSkips) {
  Partitioned filtered({"a", "b", "c", "d", "e", "f", "g"}, 2);
  filtered.options.filters = {"[aeg]"};
  EXPECT_EQ(filtered.part(0), (Names{"a"}));
  EXPECT_EQ(filtered.part(1), (Names{"e", "g"}));
  filtered.options.filters = {"^[de]$"};
  EXPECT_TRUE(filtered.part(0).empty());  // as upstream: a narrowed partition may be empty

  Partitioned excluded({"a", "b", "c", "d", "e", "f", "g"}, 2);
  excluded.options.exclude_exact = {"b"};
  excluded.options.excludes = {"^f$"};
  EXPECT_EQ(excluded.part(0), (Names{"a", "c"}));
  EXPECT_EQ(excluded.part(1), (Names{"d", "e", "g"}));

  // A skipped model keeps its place (and its reason) in its partition.
  zoobench::testing::ScratchDir dir;
  std::ofstream(dir.file("demo.yaml")) << "skip:\n  all:\n    - b\n";
  excluded.configs.emplace("demo", SuiteConfig::load(dir.file("demo.yaml"), "demo"));
  excluded.options.exclude_exact.clear();
  EXPECT_EQ(excluded.part(0), (Names{"a", "b", "c"}));

  // --only runs its models whatever the partition, as upstream's --only.
  Partitioned only({"a", "b", "c", "d"}, 2);
  only.options.only = {"a", "d"};
  EXPECT_EQ(only.part(1), (Names{"a", "d"}));
}

// torchbench.py sorts model paths, so canary_models/<name> comes before models/<name>; with
// --suite all each suite is split on its own, as upstream runs one script per suite.
TEST(Partitions, CanaryModelsFirstAndEachSuiteSplitOnItsOwn) {
  zoobench::testing::ScratchDir dir;
  std::ofstream(dir.file("demo.yaml")) << "canary_models:\n  - zeta\n";
  Partitioned canary({"alpha", "beta", "gamma", "zeta"}, 2);
  canary.configs.emplace("demo", SuiteConfig::load(dir.file("demo.yaml"), "demo"));
  EXPECT_EQ(canary.part(0), (Names{"zeta", "alpha"}));
  EXPECT_EQ(canary.part(1), (Names{"beta", "gamma"}));

  Partitioned all({"a", "b", "c", "other/x", "other/y", "other/z"}, 2);
  all.options.suite = "all";
  EXPECT_EQ(all.part(0), (Names{"a", "x"}));
  EXPECT_EQ(all.part(1), (Names{"b", "c", "y", "z"}));
}

}  // namespace
}  // namespace zoobench
