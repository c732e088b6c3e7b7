// A model's log with a warning repeated on every call keeps it once, with the count; every
// other line stays where it was.
#include "zoobench/runner/log_tidy.h"

#include <gtest/gtest.h>

#include <fstream>

#include "testing/testing.h"
#include "zoobench/util/files.h"

namespace zoobench {
namespace {

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(LogTidy, ARepeatedWarningStaysOnceWithItsCount) {
  const std::string warning =
      "[W graph_fuser.cpp:104] Warning: operator() profile_node %8 does "
      "not have profile information";
  std::string log = "plan: m with jit\n";
  for (int i = 0; i < 837; ++i) log += warning + "\n  (function operator())\n";
  log += "\nsummary: pass\nreason: a\nreason: a\n";
  const std::string tidy = collapse_repeated_lines(log);
  EXPECT_EQ(count(tidy, warning), 1u) << tidy;
  EXPECT_EQ(count(tidy, "(function operator())"), 1u);
  EXPECT_NE(tidy.find(warning + "\nzoobench: the line above appears 836 more times"),
            std::string::npos)
      << tidy;
  EXPECT_EQ(tidy.rfind("plan: m with jit\n", 0), 0u) << "order kept";
  EXPECT_NE(tidy.find("\nsummary: pass\nreason: a\nreason: a\n"), std::string::npos)
      << "lines repeated fewer than 5 times stay as they are:\n"
      << tidy;
  EXPECT_LT(tidy.size(), log.size() / 100);
}

TEST(LogTidy, ALogWithoutRepeatsIsUnchangedAndBlankLinesStay) {
  const std::string log = "a\n\n\n\n\n\nb\nno final newline";
  EXPECT_EQ(collapse_repeated_lines(log), log);
}

TEST(LogTidy, TheFileIsRewrittenOnlyWhenSomethingCollapsed) {
  testing::ScratchDir dir;
  const std::string path = dir.file("m.log");
  std::string log;
  for (int i = 0; i < 6; ++i) log += "same\n";
  std::ofstream(path) << log;
  collapse_repeated_lines_in_file(path);
  EXPECT_EQ(read_text_file(path),
            "same\nzoobench: the line above appears 5 more times in this "
            "log (left out)\n");
  collapse_repeated_lines_in_file(dir.file("absent.log"));  // no log: nothing to do, no throw
}

}  // namespace
}  // namespace zoobench
