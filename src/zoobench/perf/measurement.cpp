// Warm-up, iteration scaling, interleaved sampling, summaries.
#include "zoobench/perf/measurement.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "zoobench/perf/statistics.h"

namespace zoobench {
namespace {

void warm_up(const std::function<void()>& iteration, Timer& timer,
             const MeasurementSettings& settings) {
  auto start = std::chrono::steady_clock::now();
  int done = 0;
  while (done < settings.warmup_iterations ||
         std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() <
             settings.min_warmup_seconds) {
    // No cap on the count: a slow model leaves this loop after warmup_iterations (the time is
    // spent by then), and a fast one must keep going until min_warmup_seconds have passed.
    timer.time(iteration, 1);
    ++done;
  }
}

}  // namespace

int64_t choose_iterations_per_run(double fastest_iteration_ms,
                                  const MeasurementSettings& settings) {
  if (settings.iterations_per_run > 0) return settings.iterations_per_run;
  if (!(fastest_iteration_ms > 0)) return settings.max_iterations_per_run;
  auto needed = static_cast<int64_t>(std::ceil(settings.min_sample_ms / fastest_iteration_ms));
  return std::clamp<int64_t>(needed, 1, settings.max_iterations_per_run);
}

const std::vector<SideStatistic>& side_statistics() {
  using Samples = const std::vector<double>&;
  static const std::vector<SideStatistic> kStatistics = {
      {{"median", [](Samples v) { return stats::median(v); }},
       &SideSummary::median_ms,
       &columns::kEagerLatency,
       &columns::kAbsLatency},
      {{"min", stats::minimum}, &SideSummary::min_ms, &columns::kEagerMin, &columns::kCompiledMin},
      {{"p10", [](Samples v) { return stats::percentile(v, 10); }},
       &SideSummary::p10_ms,
       &columns::kEagerP10,
       &columns::kCompiledP10},
      {{"p90", [](Samples v) { return stats::percentile(v, 90); }},
       &SideSummary::p90_ms,
       &columns::kEagerP90,
       &columns::kCompiledP90},
      {{"cov", stats::coefficient_of_variation},
       &SideSummary::cov,
       &columns::kCovEager,
       &columns::kCovCompiled}};
  return kStatistics;
}

SideSummary summarize_side(std::vector<double> samples_ms, const MeasurementSettings& settings) {
  SideSummary s;
  for (const SideStatistic& registered : side_statistics()) {
    s.*registered.field = registered.statistic.compute(samples_ms);
  }
  s.spread = stats::robust_spread(samples_ms);
  s.unstable = std::isfinite(s.spread) && s.spread > settings.unstable_cov;
  s.samples_ms = std::move(samples_ms);
  return s;
}

bool interval_narrow_enough(double speedup, double low, double high, double target) {
  return speedup > 0 && (high - low) / 2 <= target * speedup;
}

PairedMeasurement measure_interleaved(const std::function<void()>& eager,
                                      const std::function<void()>& compiled, Timer& timer,
                                      const MeasurementSettings& settings,
                                      const std::function<void()>& uncompiled) {
  PairedMeasurement m;
  std::vector<const std::function<void()>*> sides = {&eager, &compiled};
  if (uncompiled) sides.push_back(&uncompiled);
  // The first call of each side is timed alone: it carries lazy initialisation and, for
  // compiled code, whatever compilation was deferred to the first run.
  std::vector<double> first(sides.size()), one(sides.size());
  for (std::size_t s = 0; s < sides.size(); ++s) first[s] = timer.time(*sides[s], 1).end_to_end_ms;
  for (const auto* side : sides) warm_up(*side, timer, settings);
  for (std::size_t s = 0; s < sides.size(); ++s) one[s] = timer.time(*sides[s], 1).end_to_end_ms;
  m.iterations_per_run =
      choose_iterations_per_run(*std::min_element(one.begin(), one.end()), settings);
  m.settle_iterations = settings.settle_iterations;
  m.unstable_cov = settings.unstable_cov;

  std::vector<std::vector<double>> samples(sides.size()), device(sides.size());
  // Settling goes through the timer too, so its device work has finished before the sample's
  // clock starts.
  auto settle = [&](const std::function<void()>& side) {
    for (int i = 0; i < settings.settle_iterations; ++i) timer.time(side, 1);
  };
  auto rounds = [&](int count) {
    for (int r = 0; r < count; ++r) {
      for (std::size_t s = 0; s < sides.size(); ++s) {
        settle(*sides[s]);
        TimedSample sample = timer.time(*sides[s], m.iterations_per_run);
        samples[s].push_back(sample.end_to_end_ms);
        if (sample.device_ms) device[s].push_back(*sample.device_ms);
      }
    }
  };
  rounds(settings.repeat);
  const int more = std::max(5, settings.repeat / 2);
  while (static_cast<int>(samples[0].size()) < settings.max_repeat) {
    const double speedup = stats::median(samples[0]) / stats::median(samples[1]);
    auto [low, high] = stats::bootstrap_speedup_interval(samples[0], samples[1], 0.95,
                                                         settings.bootstrap_resamples);
    if (interval_narrow_enough(speedup, low, high, settings.target_interval)) break;
    rounds(std::min(more, settings.max_repeat - static_cast<int>(samples[0].size())));
  }
  auto summary = [&](std::size_t s) {
    SideSummary side = summarize_side(samples[s], settings);
    side.first_iteration_ms = first[s];
    if (!device[s].empty()) side.device_median_ms = stats::median(device[s]);
    return side;
  };
  m.eager = summary(0);
  m.compiled = summary(1);
  if (sides.size() > 2) m.uncompiled = summary(2);
  m.speedup = m.eager.median_ms / m.compiled.median_ms;
  std::tie(m.speedup_ci_low, m.speedup_ci_high) = stats::bootstrap_speedup_interval(
      m.eager.samples_ms, m.compiled.samples_ms, 0.95, settings.bootstrap_resamples);
  m.unstable = m.eager.unstable || m.compiled.unstable;
  if (m.unstable) {
    m.note = fmt::format(
        "unstable: spread (1.4826 MAD / median) eager {:.1f}%, compiled {:.1f}% (> {:.1f}%)",
        m.eager.spread * 100, m.compiled.spread * 100, settings.unstable_cov * 100);
  }
  return m;
}

}  // namespace zoobench
