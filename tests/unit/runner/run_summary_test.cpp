// The end of a run: the geomean and its band against a hand computation, and the same lines in
// the same order whatever the run had in it.
#include "zoobench/runner/run_summary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <sstream>

namespace zoobench {
namespace {

using ::testing::HasSubstr;

ResultRow performance(const std::string& name, const std::string& backend, double speedup,
                      double low, double high, bool unstable) {
  ResultRow row;
  row.kind = ExperimentKind::kPerformance;
  set_cell(row, columns::kName, name);
  set_cell(row, columns::kBackend, backend);
  row.set_status(Status::kPass);
  set_cell(row, columns::kSpeedup, format_cell(speedup));
  if (low > 0) set_cell(row, columns::kSpeedupCiLow, format_cell(low));
  if (high > 0) set_cell(row, columns::kSpeedupCiHigh, format_cell(high));
  set_cell(row, columns::kUnstable, unstable ? "1" : "0");
  return row;
}

ResultRow accuracy(const std::string& name, const std::string& backend, Status status) {
  ResultRow row;
  set_cell(row, columns::kName, name);
  set_cell(row, columns::kBackend, backend);
  row.set_status(status);
  return row;
}

std::string printed(const std::vector<ResultRow>& rows, std::size_t skipped = 0) {
  char* buffer = nullptr;
  std::size_t size = 0;
  std::FILE* out = ::open_memstream(&buffer, &size);
  print_run_summary(tally_rows(rows), skipped, out);
  std::fclose(out);
  std::string text(buffer, size);
  std::free(buffer);
  return text;
}

// Each line's first word(s), up to the first colon or the table's first cell.
std::vector<std::string> line_heads(const std::string& text) {
  std::vector<std::string> heads;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    std::istringstream words(line);
    std::string head;
    words >> head;
    heads.push_back(head.substr(0, head.find(':')));
  }
  return heads;
}

TEST(RunSummary, TheGeomeanAndItsBandAreThoseOfTheSpeedupsAndTheirEnds) {
  const RunTally tally = tally_rows({performance("a", "jit", 2.0, 1.0, 4.0, false),
                                     performance("b", "jit", 8.0, 4.0, 16.0, true)});
  const auto geomean = geomean_speedup(tally.backends.at(0));
  ASSERT_TRUE(geomean && geomean->band);
  EXPECT_NEAR(geomean->value, std::sqrt(2.0 * 8.0), 1e-12);
  EXPECT_NEAR(geomean->band->first, std::sqrt(1.0 * 4.0), 1e-12);
  EXPECT_NEAR(geomean->band->second, std::sqrt(4.0 * 16.0), 1e-12);
  // One speedup without its interval: no band rather than a band over some of the models.
  const RunTally partial = tally_rows(
      {performance("a", "jit", 2.0, 1.0, 4.0, false), performance("b", "jit", 8.0, 0, 0, false)});
  EXPECT_FALSE(geomean_speedup(partial.backends.at(0))->band);
}

TEST(RunSummary, ARunWithFailuresAndUnstableRowsPrintsTheSameLinesAsACleanOne) {
  const std::string clean =
      printed({accuracy("a", "jit", Status::kPass), performance("a", "jit", 2.0, 1.9, 2.1, false)});
  std::vector<ResultRow> rows;
  for (const char* name : {"m1", "m2", "m3", "m4", "m5", "m6", "m7"})
    rows.push_back(accuracy(name, "jit", Status::kFailAccuracy));
  rows.push_back(performance("m1", "jit", 3.0, 2.4, 3.6, true));
  const std::string troubled = printed(rows, 2);
  EXPECT_EQ(line_heads(clean), line_heads(troubled)) << clean << "\n---\n" << troubled;
  EXPECT_THAT(clean, HasSubstr("failures: none"));
  EXPECT_THAT(clean, HasSubstr("unstable: none"));
  EXPECT_THAT(clean, HasSubstr("1/1 (100%)"));
  EXPECT_THAT(troubled, HasSubstr("summary: 7 model(s), 2 skipped"));
  EXPECT_THAT(troubled, HasSubstr("0/7 (0%)"));
  EXPECT_THAT(troubled,
              HasSubstr("failures: fail_accuracy (accuracy, jit): m1, m2, m3, m4, m5 and 2 more"));
  EXPECT_THAT(troubled, HasSubstr("m1 (jit, \u00b120%)"));  // (3.6 - 2.4) / 2 / 3.0
  // Two significant digits: the band is wider than ±5% (report/number_format.h).
  EXPECT_THAT(troubled, HasSubstr("3.0x [2.4x, 3.6x]"));
}

// The host line gives the median of the small-op costs the timings measured, and their range;
// a run without them (an older file, the CPU's accuracy alone) says nothing of it.
TEST(RunSummary, TheHostLineGivesWhatASmallOpCostWhereTheTimingsBegan) {
  std::vector<ResultRow> rows;
  for (double cost : {7.5, 3.0, 12.25}) {
    rows.push_back(performance("m" + format_cell(cost), "inductor", 2.0, 1.9, 2.1, false));
    rows.back().detail["timed_section"] = {{"op_launch_us", cost}};
  }
  EXPECT_THAT(printed(rows),
              HasSubstr("; a small op cost 7.5 us on the device (median of the timings; 3.0 to "
                        "12.2)\n"));
  EXPECT_THAT(printed({performance("a", "jit", 2.0, 1.9, 2.1, false)}),
              ::testing::Not(HasSubstr("small op")));
}

// Timings that ran with CUBLAS_WORKSPACE_CONFIG set are counted on the host line: their eager
// sides read slow.
TEST(RunSummary, TheHostLineCountsTimingsThatRanWithTheCublasWorkspaceVariable) {
  std::vector<ResultRow> rows;
  for (const char* name : {"a", "b", "c"}) {
    rows.push_back(performance(name, "inductor", 2.0, 1.9, 2.1, false));
    rows.back().detail["timed_section"] = {{"op_launch_us", 5.0}};
  }
  EXPECT_THAT(printed(rows), ::testing::Not(HasSubstr("CUBLAS_WORKSPACE_CONFIG")));
  rows[0].detail["timed_section"]["cublas_workspace_config"] = ":4096:8";
  rows[2].detail["timed_section"]["cublas_workspace_config"] = ":16:8";
  EXPECT_THAT(printed(rows), HasSubstr("; 2 timing(s) ran with CUBLAS_WORKSPACE_CONFIG set"));
}

TEST(RunSummary, TimingsTakenAgainWithTheOthersPausedAreCountedWithThoseStableThen) {
  std::vector<ResultRow> rows;
  for (const char* name : {"a", "b", "c"}) {
    rows.push_back(performance(name, "inductor", 2.0, 1.9, 2.1, std::string(name) == "b"));
    rows.back().detail["timed_section"] = {{"op_launch_us", 5.0}};
  }
  EXPECT_THAT(printed(rows), ::testing::Not(HasSubstr("timed again")));
  for (auto* row : {&rows[0], &rows[1]})
    row->detail["timed_section"]["unstable_beside_others"] = {
        {"eager_spread", 0.1}, {"compiled_spread", 0.01}, {"speedup", 1.8}};
  // a was stable the second time, b was not: both were taken again.
  EXPECT_THAT(printed(rows), HasSubstr("timed again with the other pipelines paused, unstable "
                                       "beside them: 2 (a, b); stable then: 1\n"));
}

TEST(RunSummary, APartThatDidNotRunShowsADash) {
  const std::string text = printed({accuracy("a", "eager", Status::kEager1stRunFail),
                                    performance("a", "jit", 2.0, 1.9, 2.1, false)});
  EXPECT_THAT(text, ::testing::ContainsRegex("\n  eager +0/1 \\(0%\\) +- +0 +0 +1\n"));
  EXPECT_THAT(text, ::testing::ContainsRegex("\n  jit +- +2.0x \\[1.9x, 2.1x\\] +1 +0 +0\n"));
  EXPECT_THAT(text, HasSubstr("failures: eager_1st_run_fail (accuracy, eager): a"));
}

}  // namespace
}  // namespace zoobench
