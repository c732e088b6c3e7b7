// The sample statistics against values worked out by hand (noted beside each case) and, for
// percentiles, against numpy itself; the bootstrap interval against samples whose true speedup
// is known.
#include "zoobench/perf/statistics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>

#include "testing/testing.h"

namespace zoobench::stats {
namespace {

TEST(Mean, OfValuesAndOfNothing) {
  EXPECT_DOUBLE_EQ(mean({1, 2, 3, 10}), 4.0);
  EXPECT_TRUE(std::isnan(mean({})));
}

TEST(Median, OddEvenUnsortedSingleEmpty) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);  // (2 + 3) / 2
  EXPECT_DOUBLE_EQ(median({7}), 7.0);
  EXPECT_TRUE(std::isnan(median({})));
}

TEST(Minimum, Smallest) {
  EXPECT_DOUBLE_EQ(minimum({3, -1, 2}), -1.0);
  EXPECT_TRUE(std::isnan(minimum({})));
}

// numpy's default ("linear"): rank = p/100 * (n - 1), interpolated between the two closest
// order statistics.
TEST(Percentile, LinearInterpolationBetweenClosestRanks) {
  const std::vector<double> four = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(percentile(four, 0), 1.0);
  EXPECT_DOUBLE_EQ(percentile(four, 25), 1.75);  // rank 0.75: 1 + 0.75 * (2 - 1)
  EXPECT_DOUBLE_EQ(percentile(four, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile(four, 75), 3.25);  // rank 2.25
  EXPECT_DOUBLE_EQ(percentile(four, 100), 4.0);
  EXPECT_DOUBLE_EQ(percentile({5, 1, 4, 2, 3}, 10), 1.4);  // rank 0.4
  EXPECT_DOUBLE_EQ(percentile({5, 1, 4, 2, 3}, 90), 4.6);  // rank 3.6
  EXPECT_DOUBLE_EQ(percentile({10, 20}, 30), 13.0);
  EXPECT_DOUBLE_EQ(percentile({6}, 90), 6.0);
  EXPECT_TRUE(std::isnan(percentile({}, 50)));
}

TEST(Percentile, AgreesWithNumpy) {
  std::vector<double> values;
  for (int i = 0; i < 23; ++i) values.push_back(std::fmod(i * 7.31 + 0.5 * i * i, 13.0) - 4.0);
  const std::vector<double> ps = {0, 1, 5, 10, 12.5, 33.3, 50, 66.7, 90, 95, 99, 100};
  std::ostringstream code;
  code.precision(17);
  code << "import numpy as np\nv = [";
  for (double v : values) code << v << ",";
  code << "]\nfor p in [";
  for (double p : ps) code << p << ",";
  code << "]:\n    print(repr(float(np.percentile(v, p))))\n";
  auto result = testing::run_python(code.str());
  std::istringstream lines(result.output);
  for (double p : ps) {
    double expected = NAN;
    ASSERT_TRUE(lines >> expected) << result.output;
    EXPECT_NEAR(percentile(values, p), expected, 1e-12) << "p" << p;
  }
}

// 2, 4, 4, 4, 5, 5, 7, 9: mean 5, squared deviations sum to 32; sample variance 32 / 7.
TEST(StandardDeviation, SampleNotPopulation) {
  const std::vector<double> v = {2, 4, 4, 4, 5, 5, 7, 9};
  EXPECT_NEAR(standard_deviation(v), std::sqrt(32.0 / 7.0), 1e-15);
  EXPECT_DOUBLE_EQ(standard_deviation({3}), 0.0);
  EXPECT_TRUE(std::isnan(standard_deviation({})));
}

TEST(CoefficientOfVariation, StandardDeviationOverMean) {
  EXPECT_NEAR(coefficient_of_variation({2, 4, 4, 4, 5, 5, 7, 9}), std::sqrt(32.0 / 7.0) / 5.0,
              1e-15);
  EXPECT_DOUBLE_EQ(coefficient_of_variation({3, 3, 3}), 0.0);
  EXPECT_TRUE(std::isnan(coefficient_of_variation({-1, 1})));  // mean 0
  // median 4.5, absolute deviations 2.5 0.5 0.5 0.5 0.5 0.5 2.5 4.5: their median 0.5
  EXPECT_NEAR(robust_spread({2, 4, 4, 4, 5, 5, 7, 9}), 1.4826 * 0.5 / 4.5, 1e-15);
  EXPECT_DOUBLE_EQ(robust_spread({3, 3, 3}), 0.0);
  EXPECT_TRUE(std::isnan(robust_spread({})));
  EXPECT_TRUE(std::isnan(coefficient_of_variation({})));
}

TEST(GeometricMean, OfPositiveValuesOnly) {
  EXPECT_NEAR(geometric_mean({1, 2, 4, 8}), std::pow(2.0, 1.5),
              1e-12);  // (1*2*4*8)^(1/4) = 64^(1/4)
  EXPECT_NEAR(geometric_mean({2, 8}), 4.0, 1e-12);
  EXPECT_NEAR(geometric_mean({0.5, 2}), 1.0, 1e-12);  // a 2x speedup and a 2x slowdown cancel
  EXPECT_TRUE(std::isnan(geometric_mean({1, 0})));
  EXPECT_TRUE(std::isnan(geometric_mean({1, -2})));
  EXPECT_TRUE(std::isnan(geometric_mean({})));
}

// Paired samples: repetition i sees machine drift d_i on both sides, then independent noise.
// The true speedup (eager / compiled) is `ratio`.
struct Paired {
  std::vector<double> eager, compiled;
};
Paired paired_samples(int n, double ratio, double drift, double noise, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> drift_of(1.0, 1.0 + drift);
  std::normal_distribution<double> noise_of(0.0, noise);
  Paired p;
  for (int i = 0; i < n; ++i) {
    const double d = drift_of(rng);
    p.eager.push_back(ratio * d * (1.0 + noise_of(rng)));
    p.compiled.push_back(d * (1.0 + noise_of(rng)));
  }
  return p;
}

TEST(BootstrapSpeedupInterval, SameSeedSameInterval) {
  Paired p = paired_samples(30, 1.5, 0.2, 0.03, 7);
  auto a = bootstrap_speedup_interval(p.eager, p.compiled, 0.95, 2000, 42);
  auto b = bootstrap_speedup_interval(p.eager, p.compiled, 0.95, 2000, 42);
  EXPECT_EQ(a, b);
  auto c = bootstrap_speedup_interval(p.eager, p.compiled, 0.95, 2000, 43);
  EXPECT_NE(a, c) << "the seed does not reach the resampling";
  // The default arguments are fixed too.
  EXPECT_EQ(bootstrap_speedup_interval(p.eager, p.compiled),
            bootstrap_speedup_interval(p.eager, p.compiled));
}

TEST(BootstrapSpeedupInterval, ExactRatioGivesAPointInterval) {
  Paired p = paired_samples(20, 1.0, 2.0, 0.05, 3);
  std::vector<double> compiled;
  for (double e : p.eager) compiled.push_back(e / 2);  // exactly half, every repetition
  auto [low, high] = bootstrap_speedup_interval(p.eager, compiled);
  EXPECT_DOUBLE_EQ(low, 2.0);
  EXPECT_DOUBLE_EQ(high, 2.0);
}

// Over many data sets with a true speedup of 2, the 95% interval holds 2 nearly always, and is
// not so wide that holding it means nothing.
TEST(BootstrapSpeedupInterval, ContainsTheTrueRatio) {
  int contained = 0;
  const int datasets = 40;
  for (int s = 0; s < datasets; ++s) {
    Paired p = paired_samples(30, 2.0, 0.3, 0.02, 1000 + s);
    auto [low, high] = bootstrap_speedup_interval(p.eager, p.compiled);
    EXPECT_LT(high / low, 1.1) << "data set " << s;
    contained += low <= 2.0 && 2.0 <= high ? 1 : 0;
  }
  EXPECT_GE(contained, 34) << "of " << datasets;
}

// Width shrinks like 1/sqrt(n): 25x the samples, ~5x narrower (averaged over data sets, as a
// single small data set's interval varies a lot); ask for 2.5x.
TEST(BootstrapSpeedupInterval, NarrowsWithMoreSamples) {
  double few_width = 0, many_width = 0;
  for (uint64_t s = 0; s < 5; ++s) {
    Paired few = paired_samples(20, 2.0, 0.3, 0.02, 11 + s);
    Paired many = paired_samples(500, 2.0, 0.3, 0.02, 111 + s);
    auto [few_low, few_high] = bootstrap_speedup_interval(few.eager, few.compiled);
    auto [many_low, many_high] = bootstrap_speedup_interval(many.eager, many.compiled);
    few_width += few_high - few_low;
    many_width += many_high - many_low;
  }
  EXPECT_LT(many_width * 2.5, few_width) << few_width / 5 << " vs " << many_width / 5;
}

// Pairs are resampled together: a drift of 3x that both sides of a repetition share cancels
// in the ratio; resampling the sides independently would make the interval ~3x wide.
TEST(BootstrapSpeedupInterval, KeepsPairsTogether) {
  Paired p = paired_samples(40, 2.0, 2.0, 0.005, 5);
  auto [low, high] = bootstrap_speedup_interval(p.eager, p.compiled);
  EXPECT_LT(high / low, 1.02) << low << " .. " << high;
}

TEST(BootstrapSpeedupInterval, LowerConfidenceIsNarrower) {
  Paired p = paired_samples(30, 1.3, 0.3, 0.03, 9);
  auto [low95, high95] = bootstrap_speedup_interval(p.eager, p.compiled, 0.95);
  auto [low50, high50] = bootstrap_speedup_interval(p.eager, p.compiled, 0.50);
  EXPECT_LE(low95, low50);
  EXPECT_LE(low50, high50);
  EXPECT_LE(high50, high95);
}

TEST(BootstrapSpeedupInterval, NoSamplesNoInterval) {
  auto [low, high] = bootstrap_speedup_interval({}, {});
  EXPECT_TRUE(std::isnan(low));
  EXPECT_TRUE(std::isnan(high));
}

}  // namespace
}  // namespace zoobench::stats
