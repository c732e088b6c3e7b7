// The progress lines of a suite run: data from files never reaches the terminal as control
// characters.
#include "zoobench/runner/progress.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <string>

namespace zoobench {
namespace {

std::string printed(const std::function<void(Progress&)>& act) {
  std::FILE* out = std::tmpfile();
  {
    Progress progress(1, /*live=*/false, out);
    act(progress);
  }
  std::rewind(out);
  std::string text;
  for (int c = std::fgetc(out); c != EOF; c = std::fgetc(out)) text += static_cast<char>(c);
  std::fclose(out);
  return text;
}

TEST(Progress, ControlCharactersOfNamesAreShownAsQuestionMarks) {
  const std::string text = printed([](Progress& p) {
    p.finished("evil\x1b]0;title\x07name", "cpu", {}, 1.0);
    p.note("a note with a bell\x07");
  });
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find('\x07'), std::string::npos) << text;
  EXPECT_NE(text.find("evil?]0;title?name"), std::string::npos) << text;
}

// A model's line says when its speedup is unstable, by how much, and how busy the host was; a
// stable one is just its speedup.
TEST(Progress, AnUnstableSpeedupSaysSoWithItsSpreadAndTheHostLoad) {
  auto row = [](bool unstable) {
    ResultRow r;
    r.kind = ExperimentKind::kPerformance;
    r.set_status(Status::kPass);
    set_cell(r, columns::kSpeedup, "2.5");
    set_cell(r, columns::kSpeedupCiLow, "2");
    set_cell(r, columns::kSpeedupCiHigh, "3");
    set_cell(r, columns::kUnstable, unstable ? "1" : "0");
    return r;
  };
  const std::string text = printed([&](Progress& p) {
    p.finished("shaky", "cpu", {row(true)}, 1.0);
    p.finished("steady", "cpu", {row(false)}, 1.0);
  });
  EXPECT_NE(text.find("shaky cpu speedup=2.5x \u2020unstable \u00b120% (host load average "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("steady cpu speedup=2.5x (1s)"), std::string::npos) << text;
}

}  // namespace
}  // namespace zoobench
