// Implementations of the sample statistics.
#include "zoobench/perf/statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace zoobench::stats {
namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

double mean(const std::vector<double>& values) {
  if (values.empty()) return kNaN;
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

double median(std::vector<double> values) { return percentile(std::move(values), 50.0); }

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return kNaN;
  std::sort(values.begin(), values.end());
  double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(values.size() - 1);
  auto lower = static_cast<std::size_t>(std::floor(rank));
  auto upper = static_cast<std::size_t>(std::ceil(rank));
  double fraction = rank - static_cast<double>(lower);
  return values[lower] + (values[upper] - values[lower]) * fraction;
}

double minimum(const std::vector<double>& values) {
  if (values.empty()) return kNaN;
  return *std::min_element(values.begin(), values.end());
}

double standard_deviation(const std::vector<double>& values) {
  if (values.size() < 2) return values.empty() ? kNaN : 0.0;
  double m = mean(values);
  double sum = 0;
  for (double v : values) sum += (v - m) * (v - m);
  return std::sqrt(sum / static_cast<double>(values.size() - 1));
}

double coefficient_of_variation(const std::vector<double>& values) {
  double m = mean(values);
  if (values.empty() || m == 0) return kNaN;
  return standard_deviation(values) / m;
}

double robust_spread(const std::vector<double>& values) {
  if (values.empty()) return kNaN;
  const double centre = median(values);
  if (centre == 0) return kNaN;
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (double v : values) deviations.push_back(std::abs(v - centre));
  return 1.4826 * median(std::move(deviations)) / centre;
}

double geometric_mean(const std::vector<double>& values) {
  if (values.empty()) return kNaN;
  double log_sum = 0;
  for (double v : values) {
    if (!(v > 0)) return kNaN;
    log_sum += std::log(v);
  }
  return std::exp(log_sum / static_cast<double>(values.size()));
}

std::pair<double, double> bootstrap_speedup_interval(const std::vector<double>& eager,
                                                     const std::vector<double>& compiled,
                                                     double confidence, int resamples, uint64_t seed) {
  const std::size_t n = std::min(eager.size(), compiled.size());
  if (n == 0 || resamples <= 0) return {kNaN, kNaN};
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::size_t> pick(0, n - 1);
  std::vector<double> ratios;
  ratios.reserve(static_cast<std::size_t>(resamples));
  std::vector<double> e(n), c(n);
  for (int r = 0; r < resamples; ++r) {
    for (std::size_t i = 0; i < n; ++i) {
      std::size_t k = pick(rng);
      e[i] = eager[k];
      c[i] = compiled[k];
    }
    ratios.push_back(median(e) / median(c));
  }
  double tail = (1.0 - confidence) / 2.0 * 100.0;
  return {percentile(ratios, tail), percentile(ratios, 100.0 - tail)};
}

}  // namespace zoobench::stats
