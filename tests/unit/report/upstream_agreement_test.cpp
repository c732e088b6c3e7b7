// zoobench against upstream's harness, model by model: statuses, speedups against Python eager,
// and the targets.
#include "zoobench/report/upstream_agreement.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report_rows.h"

namespace zoobench::report {
namespace {

using testing::accuracy_row;
using testing::performance_row;
using ::testing::HasSubstr;

ResultRow upstream_performance(const std::string& name, double speedup) {
  ResultRow row;
  row.kind = ExperimentKind::kPerformance;
  row.cells = {{"dev", "cuda"}, {"name", name}, {"batch_size", "8"},
               {"speedup", format_cell(speedup)}, {"abs_latency", "1.0"}};
  return row;
}

TEST(UpstreamAgreement, StatusesAndPythonEagerSpeedupsMeetModelByModel) {
  const std::vector<ResultRow> ours = {
      accuracy_row("cuda:0", "a", "pass"),
      accuracy_row("cuda:0", "b", "fail_accuracy", {{"reason", "3/10 tensors failed"}}),
      accuracy_row("cuda:0", "only_ours", "pass"),
      performance_row("cuda:0", "a", "inductor", 2.0, 1.0, {{"python_speedup", "1.05"}}),
      performance_row("cuda:0", "b", "inductor", 2.0, 1.0, {{"python_speedup", "2.0"}})};
  const std::vector<ResultRow> theirs = {accuracy_row("cuda", "a", "pass"),
                                         accuracy_row("cuda", "b", "pass"),
                                         upstream_performance("a", 1.0),
                                         upstream_performance("b", 0.0)};  // did not run
  const UpstreamAgreement agreement = compare_with_upstream(ours, theirs);
  ASSERT_EQ(agreement.models.size(), 3u);
  EXPECT_EQ(agreement.both_checked(), 2);
  EXPECT_EQ(agreement.agreeing(), 1);
  const ModelAgreement& a = agreement.models[0];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.dev, "cuda");  // cuda:0 and cuda meet
  ASSERT_TRUE(a.ratio.has_value());
  EXPECT_DOUBLE_EQ(*a.ratio, 1.05);  // python_speedup, not zoobench's speedup of 2
  EXPECT_FALSE(agreement.models[1].ratio.has_value());  // upstream's 0: not a speedup
  ASSERT_TRUE(agreement.median_abs_speedup_deviation().has_value());
  EXPECT_NEAR(*agreement.median_abs_speedup_deviation(), 0.05, 1e-12);

  const std::string text = format_upstream_agreement(agreement);
  EXPECT_THAT(text, HasSubstr("statuses agree on 1 of the 2 models both ran (50.0%; target >= 95%: "
                              "NOT met)"));
  EXPECT_THAT(text, HasSubstr("5.0% (target <= 5%: met)"));
  EXPECT_THAT(text, HasSubstr("- b (cuda): zoobench fail_accuracy, upstream pass: 3/10 tensors failed"));
}

// A verdict reached at another batch size is not the same experiment: the table shows both
// sizes and the summary counts those models.
TEST(UpstreamAgreement, DifferentAccuracyBatchSizesAreShownAndCounted) {
  const std::vector<ResultRow> ours = {accuracy_row("cuda", "a", "pass", {{"batch_size", "128"}}),
                                       accuracy_row("cuda", "b", "pass", {{"batch_size", "8"}})};
  const std::vector<ResultRow> theirs = {accuracy_row("cuda", "a", "pass", {{"batch_size", "8"}}),
                                         accuracy_row("cuda", "b", "pass", {{"batch_size", "8"}})};
  const UpstreamAgreement agreement = compare_with_upstream(ours, theirs);
  EXPECT_EQ(agreement.checked_at_other_batch_sizes(), 1);
  EXPECT_FALSE(agreement.models[0].same_inputs());
  const std::string text = format_upstream_agreement(agreement);
  EXPECT_THAT(text, HasSubstr("| 128 / 8 |"));
  EXPECT_THAT(text, HasSubstr("1 of the 2 models both ran were checked at different batch sizes"));
}

// Graph breaks meet where both sides passed and both counted, as upstream's check_graph_breaks.py
// compares them: a failed row's count (upstream pads it with 0) is not compared.
TEST(UpstreamAgreement, GraphBreaksAreComparedWhereBothPassed) {
  const std::vector<ResultRow> ours = {
      accuracy_row("cuda", "same", "pass", {{"graph_breaks", "7"}}),
      accuracy_row("cuda", "more", "pass", {{"graph_breaks", "9"}}),
      accuracy_row("cuda", "skip", "pass_due_to_skip", {{"graph_breaks", "6"}}),
      accuracy_row("cuda", "failed", "fail_accuracy", {{"graph_breaks", "3"}}),
      accuracy_row("cuda", "uncounted", "pass")};
  const std::vector<ResultRow> theirs = {
      accuracy_row("cuda", "same", "pass", {{"graph_breaks", "7"}}),
      accuracy_row("cuda", "more", "pass", {{"graph_breaks", "6"}}),
      accuracy_row("cuda", "skip", "pass_due_to_skip", {{"graph_breaks", "6"}}),
      accuracy_row("cuda", "failed", "fail_accuracy", {{"graph_breaks", "0"}}),
      accuracy_row("cuda", "uncounted", "pass", {{"graph_breaks", "2"}})};
  const UpstreamAgreement agreement = compare_with_upstream(ours, theirs);
  EXPECT_EQ(agreement.breaks_compared(), 3);  // same, more, skip
  EXPECT_EQ(agreement.breaks_equal(), 2);
  const std::string text = format_upstream_agreement(agreement);
  EXPECT_THAT(text, HasSubstr("| 9 / 6 "));
  EXPECT_THAT(text, HasSubstr("| 3 / 0 "));  // shown, not compared
  EXPECT_THAT(text, HasSubstr("| - / 2 "));
  EXPECT_THAT(text, HasSubstr("graph_breaks equal on 2 of the 3 models both passed (66.7%; "
                              "target >= 95%: NOT met)"));
}

// A side that could not build or run the model (offline: a download it lacks) judged nothing:
// the model is listed under that side, not counted as a disagreement or in the status target.
TEST(UpstreamAgreement, ModelsOneSideCouldNotRunAreListedNotCounted) {
  const std::vector<ResultRow> ours = {
      accuracy_row("cuda", "both", "pass"), accuracy_row("cuda", "differs", "pass"),
      accuracy_row("cuda", "theirs_no_load", "pass"),
      accuracy_row("cuda", "ours_no_load", "model_fail_to_load"),
      accuracy_row("cuda", "theirs_eager_failed", "fail_accuracy")};
  const std::vector<ResultRow> theirs = {
      accuracy_row("cuda", "both", "pass"), accuracy_row("cuda", "differs", "fail_accuracy"),
      accuracy_row("cuda", "theirs_no_load", "eager_fail_to_run"),
      accuracy_row("cuda", "ours_no_load", "pass"),
      accuracy_row("cuda", "theirs_eager_failed", "eager_1st_run_fail")};
  const UpstreamAgreement agreement = compare_with_upstream(ours, theirs);
  EXPECT_EQ(agreement.both_checked(), 5);
  EXPECT_EQ(agreement.both_ran(), 2);
  EXPECT_EQ(agreement.agreeing(), 1);
  const std::string text = format_upstream_agreement(agreement);
  EXPECT_THAT(text, HasSubstr("statuses agree on 1 of the 2 models both ran (50.0%"));
  EXPECT_THAT(text, HasSubstr("upstream could not run 2 of the models both checked (not judged, "
                              "not counted above): theirs_eager_failed (eager_1st_run_fail), "
                              "theirs_no_load (eager_fail_to_run)"));
  EXPECT_THAT(text, HasSubstr("zoobench could not run 1 of the models both checked (not judged, "
                              "not counted above): ours_no_load (model_fail_to_load)"));
  EXPECT_THAT(text, HasSubstr("| not run |"));
  EXPECT_THAT(text, HasSubstr("- differs (cuda): zoobench pass, upstream fail_accuracy"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("- theirs_no_load (cuda)")));
}

}  // namespace
}  // namespace zoobench::report
