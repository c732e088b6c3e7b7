// The zoo's catalog: the model folders a scan finds, and the ones it passes over.
#include "zoobench/zoo/catalog.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "testing/testing.h"

namespace zoobench {
namespace {

namespace fs = std::filesystem;

// A symbolic-link loop among the model folders refused the whole run: it is passed over
// (with a warning) and the readable models are found.
TEST(ZooCatalog, AFolderThatCannotBeReadIsPassedOver) {
  testing::ScratchDir dir;
  const fs::path zoo = fs::path(dir.path()) / "zoo";
  fs::create_directories(zoo / "demo" / "good");
  std::ofstream(zoo / "demo" / "good" / "manifest.json") << "{}";
  fs::create_symlink(zoo / "demo" / "loop", zoo / "demo" / "loop");
  fs::create_symlink(zoo / "loop_suite", zoo / "loop_suite");
  const ZooCatalog catalog = ZooCatalog::scan(zoo.string());
  ASSERT_EQ(catalog.models("demo").size(), 1u);
  EXPECT_EQ(catalog.models("demo")[0].name, "good");
  EXPECT_EQ(catalog.suites(), std::vector<std::string>{"demo"});
}

}  // namespace
}  // namespace zoobench
