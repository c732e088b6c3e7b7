// CPU lists for --cpu-affinity (util/cpu_affinity.h): taskset's syntax, shares per worker, and
// the process's own set checked against the kernel's view in /proc/self/status.
#include "zoobench/util/cpu_affinity.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <string>

#include "testing/testing.h"
#include "zoobench/util/errors.h"

namespace zoobench {
namespace {

TEST(CpuAffinity, ParsesTasksetLists) {
  EXPECT_EQ(parse_cpu_list("4"), (std::vector<int>{4}));
  EXPECT_EQ(parse_cpu_list("2-5,8"), (std::vector<int>{2, 3, 4, 5, 8}));
  EXPECT_EQ(parse_cpu_list(" 8 , 1-2 ,2"), (std::vector<int>{1, 2, 8}));  // sorted, no repeats
  EXPECT_EQ(parse_cpu_list("3-3"), (std::vector<int>{3}));
}

TEST(CpuAffinity, RejectsWhatIsNotAList) {
  for (const char* bad : {"", "a", "1,,2", "5-2", "-1", "1-", "2.5", "0x1", "99999"}) {
    EXPECT_THROW(parse_cpu_list(bad), UsageError) << "'" << bad << "'";
  }
  try {
    parse_cpu_list("5-2");
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("runs backwards"), std::string::npos) << e.what();
  }
}

TEST(CpuAffinity, FormatsRangesAndRoundTrips) {
  EXPECT_EQ(format_cpu_list({0, 1, 2, 3, 8}), "0-3,8");
  EXPECT_EQ(format_cpu_list({5}), "5");
  EXPECT_EQ(format_cpu_list({1, 3, 5}), "1,3,5");
  EXPECT_EQ(format_cpu_list({}), "");
  for (const char* text : {"0-3,8", "7", "0,2,4-6,31-33"}) EXPECT_EQ(format_cpu_list(parse_cpu_list(text)), text);
}

TEST(CpuAffinity, SharesAreConsecutiveCoverEveryCpuOnceAndDifferByAtMostOne) {
  const std::vector<int> cpus = parse_cpu_list("0-6,10");  // 8 CPUs
  EXPECT_EQ(worker_cpu_share(cpus, 0, 1), cpus);
  EXPECT_EQ(worker_cpu_share(cpus, 0, 2), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(worker_cpu_share(cpus, 1, 2), (std::vector<int>{4, 5, 6, 10}));
  std::vector<int> joined;
  for (std::size_t w = 0; w < 3; ++w) {
    auto share = worker_cpu_share(cpus, w, 3);
    EXPECT_EQ(share.size(), w < 2 ? 3u : 2u) << "worker " << w;  // 8 = 3 + 3 + 2
    joined.insert(joined.end(), share.begin(), share.end());
  }
  EXPECT_EQ(joined, cpus);
  EXPECT_THROW(worker_cpu_share({4}, 0, 2), UsageError);
}

// Two hardware threads per core numbered as Linux numbers them on x86 (CPU i and i+8 share a
// core): each of four pipelines' shares is two whole cores, so no pipeline's compile runs on the
// other thread of a core whose first thread is timing.
TEST(CpuAffinity, SharesHoldWholeCoresWhereCoresHaveTwoThreads) {
  std::vector<int> cpus(16);
  for (int i = 0; i < 16; ++i) cpus[i] = i;
  const auto core_of = [](int cpu) { return cpu % 8; };
  const std::vector<int> ordered = cores_together(cpus, core_of);
  EXPECT_EQ(ordered, (std::vector<int>{0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15}));
  for (std::size_t worker = 0; worker < 4; ++worker) {
    std::vector<int> cores;
    for (int cpu : worker_cpu_share(ordered, worker, 4)) cores.push_back(core_of(cpu));
    std::sort(cores.begin(), cores.end());
    const int first = static_cast<int>(2 * worker);
    EXPECT_EQ(cores, (std::vector<int>{first, first, first + 1, first + 1})) << "worker " << worker;
  }
  // one thread per core: the order stays
  EXPECT_EQ(cores_together(cpus, [](int cpu) { return cpu; }), cpus);
}

TEST(CpuAffinity, ThisMachinesCoresTogetherAreItsCpusReordered) {
  const std::vector<int> cpus = current_cpu_affinity();
  std::vector<int> ordered = cores_together(cpus);
  for (std::size_t i = 1; i < ordered.size(); ++i)
    EXPECT_LE(first_thread_of_core(ordered[i - 1]), first_thread_of_core(ordered[i]));
  std::sort(ordered.begin(), ordered.end());
  EXPECT_EQ(ordered, cpus);
  for (int cpu : cpus) EXPECT_LE(first_thread_of_core(cpu), cpu);
}

TEST(CpuAffinity, CurrentAffinityIsWhatTheKernelSays) {
  const std::string kernel = testing::cpus_allowed_list();
  if (kernel.empty()) GTEST_SKIP() << "no Cpus_allowed_list in /proc/self/status";
  EXPECT_EQ(format_cpu_list(current_cpu_affinity()), format_cpu_list(parse_cpu_list(kernel)));
  const int running_on = ::sched_getcpu();
  auto cpus = current_cpu_affinity();
  EXPECT_NE(std::find(cpus.begin(), cpus.end(), running_on), cpus.end()) << "running on CPU " << running_on;
}

}  // namespace
}  // namespace zoobench
