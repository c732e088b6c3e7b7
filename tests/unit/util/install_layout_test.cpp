// Where an installed, a built and a copied zoobench find their parts.
#include "zoobench/util/install_layout.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "testing/testing.h"

namespace zoobench {
namespace {

namespace fs = std::filesystem;

const PartLocation kSuites{"ZOOBENCH_TEST_SUITES", "../share/zoobench/suites", "/src/suites"};

TEST(InstallLayout, AnInstalledBinaryFindsItsPartsBesideIt) {
  testing::ScratchDir dir;
  fs::create_directories(dir.file("prefix/share/zoobench/suites"));
  const std::string found = locate_part(kSuites, dir.file("prefix/bin/zoobench"), "/build");
  EXPECT_EQ(fs::path(found), fs::path(dir.file("prefix/share/zoobench/suites")));
}

TEST(InstallLayout, TheBuildsOwnProgramsUseTheBuildsParts) {
  for (const char* program : {"/build/zoobench", "/build/tests/unit_python", "/build/bench/x"})
    EXPECT_EQ(locate_part(kSuites, program, "/build"), "/src/suites") << program;
}

// A copy of the binary (elsewhere, or in a scratch folder of the build) finds nothing: the path
// it names is the installed one, which does not exist, never the clone's it was built in.
TEST(InstallLayout, ACopyElsewhereNamesTheInstalledPathItLacks) {
  for (const char* copy : {"/tmp/lone/zoobench", "/build/test-scratch/x/bin/zoobench"}) {
    const std::string found = locate_part(kSuites, copy, "/build");
    EXPECT_NE(found, "/src/suites") << copy;
    EXPECT_EQ(fs::path(found),
              (fs::path(copy).parent_path() / "../share/zoobench/suites").lexically_normal());
  }
}

TEST(InstallLayout, TheEnvironmentOverridesEverything) {
  ::setenv("ZOOBENCH_TEST_SUITES", "/my/suites", 1);
  EXPECT_EQ(locate_part(kSuites, "/build/zoobench", "/build"), "/my/suites");
  ::setenv("ZOOBENCH_TEST_SUITES", "", 1);  // empty: as if unset
  EXPECT_EQ(locate_part(kSuites, "/build/zoobench", "/build"), "/src/suites");
  ::unsetenv("ZOOBENCH_TEST_SUITES");
}

}  // namespace
}  // namespace zoobench
