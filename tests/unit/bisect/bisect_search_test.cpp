// The bisect search (bisect/bisect.h) against fake steps: which switch sets it reports, which
// steps it runs, and how it treats crashes, with no model and no child process.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "zoobench/bisect/bisect.h"

namespace zoobench {
namespace {

using Names = std::vector<std::string>;

const Names kSwitches = {"freeze", "fold_frozen", "optimize_for_inference", "executor",
                         "nnc_fuser", "patch:a", "patch:b"};
const std::map<std::string, std::string> kRequires = {{"fold_frozen", "freeze"},
                                                      {"optimize_for_inference", "freeze"},
                                                      {"nnc_fuser", "executor"}};

bool on(const Names& disabled, const std::string& name) {
  return std::find(disabled.begin(), disabled.end(), name) == disabled.end();
}

// A fake model: `fails(disabled)` says whether the check fails with those switches off.
RunStep fake(std::function<bool(const Names&)> fails, std::string failing_status = "fail_accuracy") {
  return [fails, failing_status](const Names& disabled) {
    BisectStep step;
    step.disabled = disabled;
    step.status = fails(disabled) ? failing_status : "pass";
    return step;
  };
}

TEST(BisectSearch, OneSwitchIsFoundAsCulpritAndFix) {
  auto report = bisect_switches(kSwitches, kRequires,
                                fake([](const Names& d) { return on(d, "patch:a"); }));
  EXPECT_EQ(report.verdict, BisectVerdict::kFound);
  EXPECT_EQ(report.culprit, Names{"patch:a"});
  EXPECT_EQ(report.fix, Names{"patch:a"});
  EXPECT_TRUE(report.steps.front().disabled.empty());
  EXPECT_EQ(report.steps[1].disabled, kSwitches);
  // Each distinct set runs once.
  std::set<Names> distinct;
  for (const auto& step : report.steps) EXPECT_TRUE(distinct.insert(step.disabled).second);
}

TEST(BisectSearch, FaultNeedingTwoSwitchesIsThatPairAndEitherFixesIt) {
  auto report = bisect_switches(kSwitches, kRequires, fake([](const Names& d) {
                                  return on(d, "executor") && on(d, "patch:b");
                                }));
  EXPECT_EQ(report.verdict, BisectVerdict::kFound);
  EXPECT_EQ(report.culprit, (Names{"executor", "patch:b"}));
  ASSERT_EQ(report.fix.size(), 1u);
  EXPECT_TRUE(report.fix[0] == "executor" || report.fix[0] == "patch:b") << report.fix[0];
}

TEST(BisectSearch, TwoSeparateFaultsNeedBothOffToPass) {
  auto report = bisect_switches(kSwitches, kRequires, fake([](const Names& d) {
                                  return on(d, "freeze") || on(d, "patch:a");
                                }));
  EXPECT_EQ(report.fix, (Names{"freeze", "patch:a"}));
  ASSERT_EQ(report.culprit.size(), 1u);
}

TEST(BisectSearch, SwitchThatNeedsAnotherIsNamedItself) {
  // fold_frozen does nothing without freeze: the culprit and the fix are fold_frozen, not freeze.
  auto report = bisect_switches(kSwitches, kRequires, fake([](const Names& d) {
                                  return on(d, "freeze") && on(d, "fold_frozen");
                                }));
  EXPECT_EQ(report.culprit, Names{"fold_frozen"});
  EXPECT_EQ(report.fix, Names{"fold_frozen"});
}

TEST(BisectSearch, PassingModelHasNothingToBisect) {
  auto report = bisect_switches(kSwitches, kRequires, fake([](const Names&) { return false; }));
  EXPECT_EQ(report.verdict, BisectVerdict::kNothingToBisect);
  EXPECT_EQ(report.steps.size(), 1u);
  EXPECT_NE(format_bisect_report(report).find("nothing to bisect"), std::string::npos);
}

TEST(BisectSearch, CrashEverywhereFailsWithoutOptimizationAndKeepsTheStatus) {
  auto report =
      bisect_switches(kSwitches, kRequires, fake([](const Names&) { return true; }, "crash"));
  EXPECT_EQ(report.verdict, BisectVerdict::kFailsWithoutOptimization);
  ASSERT_EQ(report.steps.size(), 2u);
  EXPECT_EQ(report.steps[1].status, "crash");
  EXPECT_FALSE(report.steps[1].passed());
  const std::string text = format_bisect_report(report);
  EXPECT_NE(text.find("fails with no optimization"), std::string::npos) << text;
  auto json = bisect_report_json(report);
  EXPECT_EQ(json["verdict"], "fails_without_optimization");
  EXPECT_EQ(json["steps"][1]["status"], "crash");
}

TEST(BisectSearch, StepThatTimesOutCountsAsFailing) {
  // With patch:a off the check passes; with it on some steps time out instead of failing.
  auto step = [](const Names& d) {
    BisectStep s;
    s.disabled = d;
    s.status = !on(d, "patch:a") ? "pass" : on(d, "executor") ? "timeout" : "fail_accuracy";
    return s;
  };
  auto report = bisect_switches(kSwitches, kRequires, step);
  EXPECT_EQ(report.fix, Names{"patch:a"});
  EXPECT_EQ(report.culprit, Names{"patch:a"});
}

TEST(Ddmin, FindsOneMinimalSubsetAndAsksEachSubsetOnce) {
  const Names items = {"a", "b", "c", "d", "e", "f", "g", "h"};
  std::set<std::set<std::string>> asked;
  int calls = 0;
  auto result = minimal_passing_subset(items, [&](const Names& s) {
    ++calls;
    EXPECT_TRUE(asked.insert(std::set<std::string>(s.begin(), s.end())).second);
    std::set<std::string> set(s.begin(), s.end());
    return set.count("c") && set.count("g");
  });
  EXPECT_EQ(result, (Names{"c", "g"}));
  EXPECT_LT(calls, 30);
}

}  // namespace
}  // namespace zoobench
