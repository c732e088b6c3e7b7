// Where a run's model processes run (runner/pipeline_cpus.h): with several pipelines on a GPU,
// one core per device for its timings, kept out of what the processes share; on the CPU, or
// with too few CPUs, each worker's own share as --cpu-affinity gives it.
#include "zoobench/runner/pipeline_cpus.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "zoobench/util/cpu_affinity.h"

namespace zoobench {
namespace {

std::vector<int> range(int first, int last) {
  std::vector<int> cpus;
  for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
  return cpus;
}

// A machine of `cores` cores, two hyperthreads each, numbered as Linux does on x86: CPU i and
// i + cores are one core.
std::function<std::vector<int>(int)> hyperthreads(int cores) {
  return [cores](int cpu) {
    const int first = cpu % cores;
    return std::vector<int>{first, first + cores};
  };
}

std::vector<int> itself(int cpu) { return {cpu}; }

TEST(PipelineCpus, AGpuGetsACoreForItsTimingsAndThePipelinesShareTheRest) {
  const PipelineCpus plan = pipeline_cpus({}, {"cuda"}, true, 4, range(0, 15), hyperthreads(8));
  EXPECT_TRUE(plan.split.empty());
  EXPECT_EQ(plan.timing_cpus("cuda"), (std::vector<int>{7, 15}));
  EXPECT_EQ(format_cpu_list(plan.shared), "0-6,8-14");
  for (std::size_t w = 0; w < 4; ++w) EXPECT_EQ(plan.worker_cpus(w, 4), plan.shared) << w;
  EXPECT_NE(plan.why.find("share CPUs 0-6,8-14"), std::string::npos) << plan.why;
  EXPECT_NE(plan.why.find("cuda on 7,15"), std::string::npos) << plan.why;
}

TEST(PipelineCpus, WithoutHyperthreadsTwoCpusTimeAndEachDeviceHasItsOwn) {
  const PipelineCpus plan =
      pipeline_cpus({}, {"cuda:0", "cuda:1"}, true, 8, range(0, 31), itself);
  EXPECT_EQ(plan.timing_cpus("cuda:0"), (std::vector<int>{30, 31}));
  EXPECT_EQ(plan.timing_cpus("cuda:1"), (std::vector<int>{28, 29}));
  EXPECT_EQ(plan.shared, range(0, 27));
  EXPECT_TRUE(plan.timing_cpus("cuda:2").empty());
}

TEST(PipelineCpus, TooFewCpusToSpareACoreSplitsThemAsBefore) {
  // 4 CPUs, 4 workers: no CPU to spare for timings; each worker its own.
  const PipelineCpus plan = pipeline_cpus({}, {"cuda"}, true, 4, range(0, 3), itself);
  EXPECT_TRUE(plan.timing.empty());
  EXPECT_EQ(plan.split, range(0, 3));
  EXPECT_EQ(plan.worker_cpus(2, 4), std::vector<int>{2});
  EXPECT_TRUE(plan.timing_cpus("cuda").empty());
}

TEST(PipelineCpus, CpuRunsAndCpuAffinityAreSplitAndOneWorkerIsNotPinned) {
  const PipelineCpus cpu = pipeline_cpus({}, {"cpu"}, false, 2, range(0, 15), itself);
  EXPECT_TRUE(cpu.timing.empty());
  EXPECT_EQ(cpu.worker_cpus(1, 2), range(8, 15));
  const PipelineCpus given = pipeline_cpus({2, 3}, {"cuda"}, true, 2, range(0, 15), itself);
  EXPECT_TRUE(given.timing.empty());
  EXPECT_EQ(given.worker_cpus(0, 2), std::vector<int>{2});
  EXPECT_NE(given.why.find("share of CPUs 2-3"), std::string::npos) << given.why;
  const PipelineCpus one = pipeline_cpus({}, {"cuda"}, true, 1, range(0, 15), itself);
  EXPECT_TRUE(one.split.empty() && one.shared.empty() && one.timing.empty());
  EXPECT_TRUE(one.worker_cpus(0, 1).empty());
  EXPECT_TRUE(one.why.empty());
}

TEST(PipelineCpus, ACoreOnlyPartlyAllowedTimesOnItsAllowedPart) {
  // taskset gave 0-5 of an 8-core machine: CPU 5's sibling 13 is not the run's.
  const PipelineCpus plan = pipeline_cpus({}, {"cuda"}, true, 2, range(0, 5), hyperthreads(8));
  EXPECT_EQ(plan.timing_cpus("cuda"), (std::vector<int>{4, 5}));
  EXPECT_EQ(plan.shared, range(0, 3));
}

}  // namespace
}  // namespace zoobench
