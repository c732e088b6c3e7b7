// The output folder's lock: one run at a time, and never written through a planted link.
#include "zoobench/runner/output_lock.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "testing/testing.h"
#include "zoobench/util/errors.h"

namespace zoobench {
namespace {

using ::testing::HasSubstr;

std::string contents(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(OutputLock, HoldsThePidAndRefusesASecondRun) {
  zoobench::testing::ScratchDir dir;
  OutputLock first = OutputLock::acquire(dir.file("out"));
  EXPECT_EQ(contents(dir.file("out/.zoobench.lock")), std::to_string(::getpid()) + "\n");
  try {
    OutputLock::acquire(dir.file("out"));
    FAIL() << "a second lock of the same folder was granted";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("pid " + std::to_string(::getpid())));
  }
}

TEST(OutputLock, ALinkOrAFolderInItsPlaceIsRefusedAndLeftAlone) {
  zoobench::testing::ScratchDir dir;
  std::filesystem::create_directories(dir.file("out"));
  std::ofstream(dir.file("precious.txt")) << "keep me";
  std::filesystem::create_symlink(dir.file("precious.txt"), dir.file("out/.zoobench.lock"));
  try {
    OutputLock::acquire(dir.file("out"));
    FAIL() << "the lock was taken through a symbolic link";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("symbolic link"));
  }
  EXPECT_EQ(contents(dir.file("precious.txt")), "keep me");

  std::filesystem::create_directories(dir.file("other/.zoobench.lock"));
  EXPECT_THROW(OutputLock::acquire(dir.file("other")), UsageError);
}

}  // namespace
}  // namespace zoobench
