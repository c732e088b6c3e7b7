// The models a run exports on demand: its suite's list, under either of its two names.
#include "zoobench/runner/selection.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "testing/testing.h"

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

}  // namespace
}  // namespace zoobench
