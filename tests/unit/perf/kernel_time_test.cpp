// The kernel listing of a profiled pass: per-iteration time and calls per kernel name, the
// largest first, the tail folded into one entry, and the entries adding up to the total.
#include "zoobench/perf/kernel_time.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace zoobench {
namespace {

double sum_ms(const KernelTime& t) {
  double sum = 0;
  for (const auto& k : t.kernels) sum += k.ms;
  return sum;
}

TEST(KernelListing, GroupsByNamePerIterationLargestFirst) {
  // Two iterations: gemm twice per iteration (3 us and 5 us), relu once (1 us), a copy once (2 us).
  std::vector<DeviceActivity> activities = {
      {"gemm", 3000}, {"relu", 1000}, {"gemm", 5000}, {"Memcpy DtoD", 2000},
      {"gemm", 3000}, {"relu", 1000}, {"gemm", 5000}, {"Memcpy DtoD", 2000},
  };
  KernelTime t = summarize_kernels(activities, 2);
  EXPECT_DOUBLE_EQ(t.total_ms, 0.011);
  ASSERT_EQ(t.kernels.size(), 3u);
  EXPECT_EQ(t.kernels[0].name, "gemm");
  EXPECT_DOUBLE_EQ(t.kernels[0].ms, 0.008);
  EXPECT_DOUBLE_EQ(t.kernels[0].calls, 2);
  EXPECT_EQ(t.kernels[1].name, "Memcpy DtoD");
  EXPECT_DOUBLE_EQ(t.kernels[1].calls, 1);
  EXPECT_EQ(t.kernels[2].name, "relu");
  EXPECT_DOUBLE_EQ(t.kernels[2].ms, 0.001);
  EXPECT_NEAR(sum_ms(t), t.total_ms, 1e-12);
}

TEST(KernelListing, FoldsTheTailIntoOneEntryThatKeepsTheSum) {
  // Kernel i takes (i + 1) us once: the three largest are listed, the other four folded.
  std::vector<DeviceActivity> activities;
  for (int i = 0; i < 7; ++i) activities.push_back({"k" + std::to_string(i), (i + 1) * 1000});
  KernelTime t = summarize_kernels(activities, 1, 3);
  ASSERT_EQ(t.kernels.size(), 4u);
  EXPECT_EQ(t.kernels[0].name, "k6");
  EXPECT_EQ(t.kernels[2].name, "k4");
  EXPECT_EQ(t.kernels[3].name, "(4 other kernels)");
  EXPECT_DOUBLE_EQ(t.kernels[3].ms, (1 + 2 + 3 + 4) / 1e3);
  EXPECT_DOUBLE_EQ(t.kernels[3].calls, 4);
  EXPECT_DOUBLE_EQ(t.total_ms, 28 / 1e3);
  EXPECT_NEAR(sum_ms(t), t.total_ms, 1e-12);
}

TEST(KernelListing, ListsOneMoreKernelRatherThanFoldingIt) {
  // Folding a single kernel into "(1 other kernels)" would hide its name and save no line.
  std::vector<DeviceActivity> activities = {{"a", 3000}, {"b", 2000}, {"c", 1000}};
  KernelTime t = summarize_kernels(activities, 1, 2);
  ASSERT_EQ(t.kernels.size(), 3u);
  EXPECT_EQ(t.kernels[2].name, "c");
}

TEST(KernelListing, EqualTimesAreOrderedByName) {
  std::vector<DeviceActivity> activities = {{"b", 1000}, {"c", 1000}, {"a", 1000}};
  KernelTime t = summarize_kernels(activities, 1);
  ASSERT_EQ(t.kernels.size(), 3u);
  EXPECT_EQ(t.kernels[0].name, "a");
  EXPECT_EQ(t.kernels[2].name, "c");
}

TEST(KernelListing, NoIterationsNoListing) {
  KernelTime t = summarize_kernels({{"a", 1000}}, 0);
  EXPECT_TRUE(t.kernels.empty());
  EXPECT_EQ(t.total_ms, 0);
}

}  // namespace
}  // namespace zoobench
