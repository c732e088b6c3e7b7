// Statistics over timing samples, as plain functions over std::vector<double> (testable alone,
// like google/benchmark's statistics.h). Empty inputs return NaN.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace zoobench::stats {

// A statistic by name, as google/benchmark registers them (ComputeStatistics("cv", StatisticsCV)):
// the measurement summarises each side with a list of these (perf/measurement.h).
struct NamedStatistic {
  const char* name;
  double (*compute)(const std::vector<double>& values);
};

double mean(const std::vector<double>& values);
double median(std::vector<double> values);
// Percentile in [0, 100] with linear interpolation between closest ranks (numpy's default).
double percentile(std::vector<double> values, double p);
double minimum(const std::vector<double>& values);
// Sample standard deviation (n - 1).
double standard_deviation(const std::vector<double>& values);
// Coefficient of variation: standard deviation / mean.
double coefficient_of_variation(const std::vector<double>& values);
// Robust relative spread: 1.4826 x the median absolute deviation / the median (for normal
// samples about the coefficient of variation; one outlier among many barely moves it).
double robust_spread(const std::vector<double>& values);
double geometric_mean(const std::vector<double>& values);

// Percentile bootstrap confidence interval of median(eager) / median(compiled) over paired
// repetitions: each resample draws repetition indices with replacement and keeps the pairs
// together (both sides of a repetition saw the same machine state). Fixed seed: the same
// samples always give the same interval.
std::pair<double, double> bootstrap_speedup_interval(const std::vector<double>& eager,
                                                     const std::vector<double>& compiled,
                                                     double confidence = 0.95, int resamples = 2000,
                                                     uint64_t seed = 0x5eed);

}  // namespace zoobench::stats
