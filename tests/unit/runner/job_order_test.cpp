// The order a run starts its jobs in (runner/job_order.h): the suite's longest models first,
// and no memory-heavy job beside another on one device.
#include "zoobench/runner/job_order.h"

#include <gtest/gtest.h>

#include <fstream>

#include "testing/testing.h"

namespace zoobench {
namespace {

JobPlan job(const std::string& suite, const std::string& name, const std::string& backend,
            bool memory_heavy = false) {
  JobPlan plan;
  plan.entry.suite = suite;
  plan.entry.name = name;
  plan.backend = backend;
  plan.memory_heavy = memory_heavy;
  return plan;
}

std::vector<std::string> labels(const std::deque<JobPlan>& jobs) {
  std::vector<std::string> out;
  for (const auto& j : jobs) out.push_back(j.entry.name + "/" + j.backend);
  return out;
}

SuiteConfig config_with(const testing::ScratchDir& dir, const std::string& suite,
                        const std::string& zoobench_keys) {
  const std::string path = dir.path() + "/" + suite + ".yaml";
  std::ofstream(path) << "zoobench:\n" << zoobench_keys;
  return SuiteConfig::load(path, suite);
}

// A job as the run plans it (plan_job), so that the suite's keys reach it as they do in a run.
JobPlan planned(const SuiteConfig& config, const std::string& name, const std::string& backend) {
  return plan_job(RunOptions{}, ZooEntry{config.suite(), name, ""}, config, backend, true, false);
}

TEST(LongestFirst, StartFirstModelsLeadInTheirListsOrderTheRestKeepTheirsAndAModelStaysWhole) {
  testing::ScratchDir dir;
  const SuiteConfig t = config_with(dir, "t", "  start_first: [huge, large]\n");
  std::deque<JobPlan> jobs = {planned(t, "alpha", "jit"), planned(t, "alpha", "inductor"),
                              planned(t, "large", "jit"), planned(t, "large", "inductor"),
                              planned(t, "beta", "jit"),  planned(t, "huge", "jit"),
                              planned(t, "huge", "inductor")};
  EXPECT_EQ(labels(longest_first(jobs)),
            (std::vector<std::string>{"huge/jit", "huge/inductor", "large/jit", "large/inductor",
                                      "alpha/jit", "alpha/inductor", "beta/jit"}));
}

TEST(LongestFirst, WithoutTheKeyOrAConfigTheSelectionsOrderStands) {
  testing::ScratchDir dir;
  const SuiteConfig t = config_with(dir, "t", "  flaky: []\n");
  const SuiteConfig other("other");
  std::deque<JobPlan> jobs = {planned(t, "b", "jit"), planned(other, "a", "jit"),
                              planned(t, "c", "jit")};
  EXPECT_EQ(labels(longest_first(jobs)), labels(jobs));
}

TEST(LongestFirst, TheRunsLineNamesTheModelsStartedFirstOnceEach) {
  testing::ScratchDir dir;
  const SuiteConfig t = config_with(dir, "t", "  start_first: [huge, large]\n");
  std::deque<JobPlan> jobs =
      longest_first({planned(t, "alpha", "jit"), planned(t, "large", "jit"),
                     planned(t, "huge", "jit"), planned(t, "huge", "inductor")});
  EXPECT_EQ(start_order_line(jobs),
            "started first, as the suite's longest (zoobench.start_first): huge, large");
  EXPECT_EQ(start_order_line({planned(t, "alpha", "jit")}), "");
}

TEST(LongestFirst, APlannedJobCarriesItsSuitesMemoryHeavyMark) {
  testing::ScratchDir dir;
  const SuiteConfig t = config_with(dir, "t", "  memory_heavy: [huge]\n");
  EXPECT_TRUE(planned(t, "huge", "jit").memory_heavy);
  EXPECT_FALSE(planned(t, "alpha", "jit").memory_heavy);
}

TEST(FirstStartable, AMemoryHeavyJobWaitsWhileAnotherRunsOnTheDeviceAndOthersGoAhead) {
  std::deque<JobPlan> queued = {job("t", "gpt2_large", "inductor", true),
                                job("t", "t5_large", "inductor", true), job("t", "small", "jit")};
  auto any = [](const JobPlan&) { return true; };
  EXPECT_EQ(first_startable(queued, false, any)->entry.name, "gpt2_large");
  EXPECT_EQ(first_startable(queued, true, any)->entry.name, "small");
  queued.pop_back();
  // Only heavy jobs left while one runs: none here (the worker running it takes them later).
  EXPECT_EQ(first_startable(queued, true, any), queued.end());
}

TEST(FirstStartable, TheTimeBudgetsFitStillDecides) {
  std::deque<JobPlan> queued = {job("t", "long", "jit"), job("t", "heavy", "jit", true),
                                job("t", "short", "jit")};
  auto short_only = [](const JobPlan& j) { return j.entry.name != "long"; };
  EXPECT_EQ(first_startable(queued, false, short_only)->entry.name, "heavy");
  EXPECT_EQ(first_startable(queued, true, short_only)->entry.name, "short");
  auto none = [](const JobPlan&) { return false; };
  EXPECT_EQ(first_startable(queued, false, none), queued.end());
}

}  // namespace
}  // namespace zoobench
