// --time-budget's estimates (runner/job_estimates.h) from rows as the runner writes them.
#include "zoobench/runner/job_estimates.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <optional>

#include "zoobench/util/files.h"

namespace zoobench {
namespace {

ResultRow row(ExperimentKind kind, const std::string& model, const std::string& backend,
              std::optional<double> job_s, std::optional<double> duration_s = std::nullopt) {
  ResultRow r;
  r.kind = kind;
  set_cell(r, columns::kName, model);
  set_cell(r, columns::kBackend, backend);
  set_cell(r, columns::kJobS, format_cell(job_s));
  if (kind == ExperimentKind::kAccuracy) set_cell(r, columns::kDurationS, format_cell(duration_s));
  return r;
}

ResultRow check(const std::string& model, const std::string& backend, double job_s) {
  return row(ExperimentKind::kAccuracy, model, backend, job_s);
}

ResultRow timing(const std::string& model, const std::string& backend, double job_s) {
  return row(ExperimentKind::kPerformance, model, backend, job_s);
}

TEST(JobEstimates, ATimingIsItsChecksSecondsScaledByItsBackendsLargestTimingToCheckRatio) {
  JobEstimates estimates;
  estimates.add(check("b", "inductor", 40));
  // No model has both a check and a timing with inductor yet: the check's seconds.
  EXPECT_DOUBLE_EQ(estimates.expected_s("b", "inductor", false, true), 40);

  estimates.add(check("a", "inductor", 50));
  estimates.add(timing("a", "inductor", 75));  // 1.5 times its check
  estimates.add(check("c", "inductor", 20));
  estimates.add(timing("c", "inductor", 24));  // 1.2 times: the larger ratio counts
  EXPECT_DOUBLE_EQ(estimates.expected_s("b", "inductor", false, true), 60);
  // A timing that ran before is its own estimate.
  EXPECT_DOUBLE_EQ(estimates.expected_s("a", "inductor", false, true), 75);
  // A check and a timing in one job: both.
  EXPECT_DOUBLE_EQ(estimates.expected_s("b", "inductor", true, true), 100);
  EXPECT_DOUBLE_EQ(estimates.expected_s("b", "inductor", true, false), 40);

  // Another backend's ratio is its own.
  estimates.add(check("b", "jit", 10));
  estimates.add(check("a", "jit", 10));
  estimates.add(timing("a", "jit", 5));
  EXPECT_DOUBLE_EQ(estimates.expected_s("b", "jit", false, true), 5);
  EXPECT_DOUBLE_EQ(estimates.expected_s("b", "inductor", false, true), 60);
}

TEST(JobEstimates, AJobThatCheckedAndTimedCountsItsSecondsOnce) {
  // One child did both (upstream's accuracy batch then the list's timings, accuracy_batch.h):
  // each of its rows holds the whole job's seconds.
  JobEstimates estimates;
  estimates.add(check("a", "inductor", 90));
  estimates.add(timing("a", "inductor", 90));
  EXPECT_DOUBLE_EQ(estimates.expected_s("a", "inductor", true, true), 90);
  EXPECT_DOUBLE_EQ(estimates.expected_s("a", "inductor", false, true), 90);
  // Two jobs of their own: both.
  estimates.add(check("b", "inductor", 30));
  estimates.add(timing("b", "inductor", 45));
  EXPECT_DOUBLE_EQ(estimates.expected_s("b", "inductor", true, true), 75);
}

TEST(JobEstimates, NothingKnownIsZeroAndRowsWithoutSecondsAddNothing) {
  JobEstimates estimates;
  EXPECT_EQ(estimates.expected_s("a", "jit", true, true), 0);
  estimates.add(row(ExperimentKind::kPerformance, "a", "jit", std::nullopt));
  estimates.add(row(ExperimentKind::kAccuracy, "a", "jit", std::nullopt));
  EXPECT_EQ(estimates.expected_s("a", "jit", true, true), 0);
  // The timing of a model without a check: unknown, whatever other models say.
  estimates.add(check("b", "jit", 10));
  estimates.add(timing("b", "jit", 30));
  EXPECT_EQ(estimates.expected_s("a", "jit", false, true), 0);
}

TEST(JobEstimates, AnOlderCheckRowWithoutJobSecondsGivesItsDuration) {
  JobEstimates estimates;
  estimates.add(row(ExperimentKind::kAccuracy, "a", "jit", std::nullopt, 12.0));
  EXPECT_DOUBLE_EQ(estimates.expected_s("a", "jit", false, true), 12);
  // A check's job seconds, where the row has them, come before its duration.
  estimates.add(row(ExperimentKind::kAccuracy, "b", "jit", 15.0, 12.0));
  EXPECT_DOUBLE_EQ(estimates.expected_s("b", "jit", true, false), 15);
}

// A job cut after 300 s needs at least that long, even where its rows say less; the record of
// cut jobs in a run's logs folder carries that to the next run into the same folder.
TEST(JobEstimates, ACutJobNeedsAtLeastTheSecondsItRanAndTheRecordCarriesThemToTheNextRun) {
  JobEstimates estimates;
  estimates.add(check("slow", "inductor", 40));
  estimates.add_cut("slow", "inductor", 300);
  EXPECT_DOUBLE_EQ(estimates.expected_s("slow", "inductor", false, true), 300);
  EXPECT_DOUBLE_EQ(estimates.expected_s("slow", "inductor", true, true), 300);
  estimates.add(timing("slow", "inductor", 500));  // it finished later, taking longer still
  EXPECT_DOUBLE_EQ(estimates.expected_s("slow", "inductor", false, true), 500);
  EXPECT_EQ(estimates.expected_s("other", "inductor", false, true), 0);

  const auto dir =
      std::filesystem::temp_directory_path() / ("zoobench-cut-jobs-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "logs");
  record_cut_job((dir / "logs").string(), "slow", "inductor", 120);
  record_cut_job((dir / "logs").string(), "slow", "inductor", 260.5);
  record_cut_job((dir / "logs").string(), "slow", "jit", 9);
  RunOptions options;
  options.output_directory = dir.string();
  options.backends = {"inductor"};
  JobEstimates next_run;
  add_result_files(next_run, options, "cuda");
  EXPECT_DOUBLE_EQ(next_run.expected_s("slow", "inductor", true, true), 260.5);
  EXPECT_DOUBLE_EQ(next_run.expected_s("slow", "jit", true, true), 9);
  remove_tree(dir.string());
}

}  // namespace
}  // namespace zoobench
