// The run's exit gate: which rows fail a run, and what an expected file forgives (upstream's
// check_accuracy.py's verdicts: an improvement and a model the file does not name fail too).
#include "zoobench/runner/run_gate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../report/report_rows.h"

namespace zoobench {
namespace {

using report::testing::accuracy_row;
using report::testing::performance_row;
using ::testing::HasSubstr;
using ::testing::Not;

ResultRow expected_row(const std::string& name, const std::string& status) {
  ResultRow row;
  row.kind = ExperimentKind::kAccuracy;
  row.cells = {{"name", name}, {"accuracy", status}};
  return row;
}

ResultRow failed_performance(const std::string& name) {
  return performance_row("cpu", name, "jit", 1, 1, {{"status", "fail_to_run"}});
}

TEST(RunGate, WithoutAnExpectedFileEveryFailedRowFailsTheRun) {
  const std::vector<ResultRow> rows = {accuracy_row("cpu", "a", "pass"),
                                       accuracy_row("cpu", "b", "pass_due_to_skip"),
                                       accuracy_row("cpu", "c", "fail_accuracy"),
                                       performance_row("cpu", "a", "jit", 2, 1),
                                       failed_performance("c")};
  const RunGate gate = gate_run(rows, {"a", "b", "c"}, {}, "");
  EXPECT_EQ(gate.failed, 2);
  EXPECT_TRUE(gate.fails());
  EXPECT_THAT(gate.message, HasSubstr("2 of 5 rows failed"));
  EXPECT_THAT(gate.message, HasSubstr("c accuracy (fail_accuracy)"));
  EXPECT_THAT(gate.message, HasSubstr("c performance (fail_to_run)"));

  const RunGate clean = gate_run({rows[0], rows[1], rows[3]}, {"a", "b"}, {}, "");
  EXPECT_FALSE(clean.fails());
  EXPECT_TRUE(clean.message.empty());
}

TEST(RunGate, AnExpectedFileForgivesKnownFailuresAndNamesNewOnes) {
  const std::vector<ResultRow> expected = {expected_row("a", "pass"),
                                           expected_row("c", "fail_accuracy"),
                                           expected_row("d", "pass"),
                                           expected_row("outside", "pass")};
  // c fails as expected (its performance row too); d was set out to run and has no row.
  const std::vector<ResultRow> rows = {accuracy_row("cpu", "a", "pass"),
                                       accuracy_row("cpu", "c", "fail_accuracy"),
                                       failed_performance("c")};
  const RunGate gate = gate_run(rows, {"a", "c", "d"}, expected, "exp.csv");
  EXPECT_EQ(gate.known, 2);
  EXPECT_EQ(gate.failed, 1);  // d, missing; `outside` is not this run's
  EXPECT_THAT(gate.message, HasSubstr("d (expected pass, now no row)"));
  EXPECT_THAT(gate.message, Not(HasSubstr("outside")));

  // A failure other than the expected one counts; a failed performance row of a model expected
  // to pass fails it.
  const std::vector<ResultRow> changed = {accuracy_row("cpu", "a", "pass"),
                                          accuracy_row("cpu", "c", "fail_to_run"),
                                          failed_performance("a")};
  const RunGate other = gate_run(changed, {"a", "c"}, expected, "exp.csv");
  EXPECT_EQ(other.failed, 2);
  EXPECT_THAT(other.message, HasSubstr("c (expected fail_accuracy, now fail_to_run)"));
  EXPECT_THAT(other.message, HasSubstr("a performance (fail_to_run)"));

  // A timing-only run (no model's accuracy to miss): a failed timing of a model whose accuracy
  // is expected to fail is known; of one expected to pass, a failure.
  const RunGate timing = gate_run({failed_performance("c"), failed_performance("a")}, {},
                                  expected, "exp.csv");
  EXPECT_EQ(timing.known, 1);
  EXPECT_EQ(timing.failed, 1);
  EXPECT_THAT(timing.message, HasSubstr("a performance (fail_to_run)"));
}

// As upstream's check_accuracy.py exits 1 on them: a pass where a failure was expected (until the
// file records it), and a model of the run that the file does not name, passing or not.
TEST(RunGate, AnImprovementAndAModelTheFileDoesNotNameFailTheRun) {
  const std::vector<ResultRow> expected = {expected_row("a", "pass"),
                                           expected_row("c", "fail_accuracy")};
  const RunGate better = gate_run({accuracy_row("cpu", "c", "pass")}, {"c"}, expected, "exp.csv");
  EXPECT_TRUE(better.fails());
  EXPECT_EQ(better.failed, 0);
  EXPECT_EQ(better.improved, 1);
  EXPECT_THAT(better.message, HasSubstr("1 improved: c"));
  EXPECT_THAT(better.message, HasSubstr("check_accuracy.py"));
  EXPECT_THAT(better.message, HasSubstr("--update-expected"));

  const RunGate unnamed =
      gate_run({accuracy_row("cpu", "a", "pass"), accuracy_row("cpu", "new", "pass")}, {"a", "new"},
               expected, "exp.csv");
  EXPECT_TRUE(unnamed.fails());
  EXPECT_EQ(unnamed.failed, 1);
  EXPECT_THAT(unnamed.message, HasSubstr("new (MISSING_EXPECTED: not in exp.csv, now pass)"));
}

}  // namespace
}  // namespace zoobench
