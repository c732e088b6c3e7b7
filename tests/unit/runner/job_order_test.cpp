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

TEST(LongestFirst, StartFirstModelsLeadInTheirListsOrderTheRestKeepTheirsAndAModelStaysWhole) {
  testing::ScratchDir dir;
  std::map<std::string, SuiteConfig> configs;
  configs.emplace("t", config_with(dir, "t", "  start_first: [huge, large]\n"));
  std::deque<JobPlan> jobs = {job("t", "alpha", "jit"),  job("t", "alpha", "inductor"),
                              job("t", "large", "jit"),  job("t", "large", "inductor"),
                              job("t", "beta", "jit"),   job("t", "huge", "jit"),
                              job("t", "huge", "inductor")};
  EXPECT_EQ(labels(longest_first(jobs, configs)),
            (std::vector<std::string>{"huge/jit", "huge/inductor", "large/jit", "large/inductor",
                                      "alpha/jit", "alpha/inductor", "beta/jit"}));
}

TEST(LongestFirst, WithoutTheKeyOrAConfigTheSelectionsOrderStands) {
  testing::ScratchDir dir;
  std::map<std::string, SuiteConfig> configs;
  configs.emplace("t", config_with(dir, "t", "  flaky: []\n"));
  std::deque<JobPlan> jobs = {job("t", "b", "jit"), job("other", "a", "jit"), job("t", "c", "jit")};
  EXPECT_EQ(labels(longest_first(jobs, configs)), labels(jobs));
}

TEST(LongestFirst, TheRunsLineNamesTheModelsStartedFirstOnceEach) {
  testing::ScratchDir dir;
  std::map<std::string, SuiteConfig> configs;
  configs.emplace("t", config_with(dir, "t", "  start_first: [huge, large]\n"));
  std::deque<JobPlan> jobs = longest_first(
      {job("t", "alpha", "jit"), job("t", "large", "jit"), job("t", "huge", "jit"),
       job("t", "huge", "inductor")},
      configs);
  EXPECT_EQ(start_order_line(jobs, configs),
            "started first, as the suite's longest (zoobench.start_first): huge, large");
  EXPECT_EQ(start_order_line({job("t", "alpha", "jit")}, configs), "");
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
