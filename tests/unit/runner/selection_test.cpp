// The models a run exports on demand (its suite's list, under either of its two names), and
// the -k/-x patterns that choose among them.
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

}  // namespace
}  // namespace zoobench
