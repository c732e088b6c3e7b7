// The interleaved measurement driven by a scripted Timer: which side runs when and how often,
// how many iterations a sample holds, what the summaries and the speedup are, and when a
// measurement is flagged unstable. The timer runs the iterations it is given (so the counts
// are real) but returns the times the test chose.
#include "zoobench/perf/measurement.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "zoobench/perf/statistics.h"

namespace zoobench {
namespace {

struct Call {
  char side;  // 'e' eager, 'c' compiled
  int64_t count;
  bool operator==(const Call& o) const { return side == o.side && count == o.count; }
};

std::ostream& operator<<(std::ostream& out, const Call& c) {
  return out << c.side << "x" << c.count;
}

// What the timer answers for one side: the very first call gets `first_ms`, every other
// single-iteration call (warm-up, sizing) `single_ms`, and the samples (calls of more than one
// iteration; the tests keep iterations_per_run > 1) `samples_ms` in turn.
struct SideScript {
  double first_ms = 10;
  double single_ms = 0.1;
  std::vector<double> samples_ms;
  double device_fraction = 0;  // > 0: also report device time = fraction * end-to-end
};

class ScriptedTimer : public Timer {
 public:
  ScriptedTimer(SideScript eager, SideScript compiled)
      : eager_(std::move(eager)), compiled_(std::move(compiled)) {}

  TimedSample time(const std::function<void()>& iteration, int64_t count) override {
    for (int64_t i = 0; i < count; ++i) iteration();
    const char side = last_side;
    calls.push_back({side, count});
    const SideScript& script = side == 'e' ? eager_ : compiled_;
    int& call = side == 'e' ? eager_calls_ : compiled_calls_;
    int& sample = side == 'e' ? eager_samples_ : compiled_samples_;
    TimedSample t;
    if (call++ == 0) {
      t.end_to_end_ms = script.first_ms;
    } else if (count == 1) {
      t.end_to_end_ms = script.single_ms;
    } else {
      t.end_to_end_ms =
          script.samples_ms.at(static_cast<std::size_t>(sample++) % script.samples_ms.size());
      if (script.device_fraction > 0) t.device_ms = t.end_to_end_ms * script.device_fraction;
    }
    return t;
  }

  char last_side = '?';  // set by the iteration the timer was given
  std::vector<Call> calls;

 private:
  SideScript eager_, compiled_;
  int eager_calls_ = 0, compiled_calls_ = 0, eager_samples_ = 0, compiled_samples_ = 0;
};

struct Sides {
  ScriptedTimer timer;
  int64_t eager_iterations = 0, compiled_iterations = 0;
  std::function<void()> eager = [this] {
    timer.last_side = 'e';
    ++eager_iterations;
  };
  std::function<void()> compiled = [this] {
    timer.last_side = 'c';
    ++compiled_iterations;
  };
  Sides(SideScript e, SideScript c) : timer(std::move(e), std::move(c)) {}
};

MeasurementSettings quick(int warmup, int repeat) {
  MeasurementSettings s;
  s.warmup_iterations = warmup;
  s.min_warmup_seconds = 0;
  s.repeat = repeat;
  return s;
}

std::vector<double> alternating(double center, double relative, int n) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(center * (1 + (i % 2 == 0 ? relative : -relative)));
  return v;
}

TEST(ChooseIterationsPerRun, ASampleLastsAtLeastAMillisecond) {
  MeasurementSettings s;  // min_sample_ms 1
  EXPECT_EQ(choose_iterations_per_run(0.1, s), 10);
  EXPECT_EQ(choose_iterations_per_run(0.3, s), 4);  // ceil(3.33)
  EXPECT_EQ(choose_iterations_per_run(0.001, s), 1000);
  EXPECT_EQ(choose_iterations_per_run(1.0, s), 1);
  s.min_sample_ms = 5;
  EXPECT_EQ(choose_iterations_per_run(0.1, s), 50);
}

TEST(ChooseIterationsPerRun, ClampsToOneAndToTheMaximum) {
  MeasurementSettings s;
  EXPECT_EQ(choose_iterations_per_run(250.0, s), 1);
  EXPECT_EQ(choose_iterations_per_run(1e-6, s), s.max_iterations_per_run);
  // A clock that saw nothing (0) or nonsense: as many as allowed.
  EXPECT_EQ(choose_iterations_per_run(0.0, s), s.max_iterations_per_run);
  EXPECT_EQ(choose_iterations_per_run(NAN, s), s.max_iterations_per_run);
  s.max_iterations_per_run = 64;
  EXPECT_EQ(choose_iterations_per_run(0.001, s), 64);
}

TEST(ChooseIterationsPerRun, AnExplicitSettingWins) {
  MeasurementSettings s;
  s.iterations_per_run = 7;
  EXPECT_EQ(choose_iterations_per_run(0.1, s), 7);
  EXPECT_EQ(choose_iterations_per_run(500.0, s), 7);
}

// 1..10: median 5.5; p10 at rank 0.9 = 1.9; p90 at rank 8.1 = 9.1; sd sqrt(82.5 / 9).
TEST(SummarizeSide, MedianPercentilesSpread) {
  SideSummary s = summarize_side({10, 1, 9, 2, 8, 3, 7, 4, 6, 5}, MeasurementSettings{});
  EXPECT_DOUBLE_EQ(s.median_ms, 5.5);
  EXPECT_DOUBLE_EQ(s.min_ms, 1.0);
  EXPECT_DOUBLE_EQ(s.p10_ms, 1.9);
  EXPECT_DOUBLE_EQ(s.p90_ms, 9.1);
  EXPECT_NEAR(s.cov, std::sqrt(82.5 / 9.0) / 5.5, 1e-15);
  EXPECT_TRUE(s.unstable);
  EXPECT_EQ(s.samples_ms.size(), 10u);
  EXPECT_EQ(s.samples_ms.front(), 10.0) << "samples keep their order";
}

// One slow sample among 30 (a page fault, another process) moves the CoV past 2.5% but not
// the median the speedup is made of: the side is not unstable. Ten of them are a spread.
TEST(SummarizeSide, OneOutlierDoesNotMakeASideUnstable) {
  std::vector<double> samples(30);
  for (std::size_t i = 0; i < samples.size(); ++i) samples[i] = 10.0 + 0.01 * (i % 3);
  samples[7] = 20.0;
  SideSummary one = summarize_side(samples, MeasurementSettings{});
  EXPECT_GT(one.cov, 0.025);
  EXPECT_LT(one.spread, 0.025);
  EXPECT_FALSE(one.unstable);
  for (std::size_t i = 0; i < samples.size(); i += 2) samples[i] = 11.0;
  EXPECT_TRUE(summarize_side(samples, MeasurementSettings{}).unstable);
}

// The whole protocol, call by call: first call of each side alone, warm-up of each side, one
// call each to size the samples, then eager/compiled samples alternating, each after one
// untimed settling iteration of its own side.
// Every registered statistic is computed by summarize_side with its own function, once per name.
TEST(SummarizeSide, FillsEveryRegisteredStatistic) {
  std::vector<double> samples = {4, 1, 3, 2, 10};
  SideSummary s = summarize_side(samples, MeasurementSettings{});
  std::set<std::string> names;
  for (const SideStatistic& registered : side_statistics()) {
    EXPECT_TRUE(names.insert(registered.statistic.name).second) << registered.statistic.name;
    EXPECT_EQ(s.*registered.field, registered.statistic.compute(samples))
        << registered.statistic.name;
  }
  EXPECT_EQ(names, (std::set<std::string>{"median", "min", "p10", "p90", "cov"}));
}

TEST(MeasureInterleaved, RunsTheProtocolInOrder) {
  SideScript eager{40, 0.1, {0.10, 0.12, 0.09, 0.11}};
  SideScript compiled{60, 0.05, {0.05, 0.06, 0.04, 0.05}};
  Sides sides(eager, compiled);
  PairedMeasurement m = measure_interleaved(sides.eager, sides.compiled, sides.timer, quick(3, 4));

  // Samples are sized for the faster side: 1 ms / 0.05 ms = 20 iterations.
  EXPECT_EQ(m.iterations_per_run, 20);
  std::vector<Call> expected = {{'e', 1}, {'c', 1}};
  for (int i = 0; i < 3; ++i) expected.push_back({'e', 1});
  for (int i = 0; i < 3; ++i) expected.push_back({'c', 1});
  expected.push_back({'e', 1});
  expected.push_back({'c', 1});
  for (int r = 0; r < 4; ++r) {
    expected.insert(expected.end(), {{'e', 1}, {'e', 20}, {'c', 1}, {'c', 20}});
  }
  EXPECT_EQ(sides.timer.calls, expected);
  EXPECT_EQ(sides.eager_iterations, 1 + 3 + 1 + 4 * (1 + 20));
  EXPECT_EQ(sides.compiled_iterations, 1 + 3 + 1 + 4 * (1 + 20));

  EXPECT_EQ(m.eager.samples_ms, eager.samples_ms);
  EXPECT_EQ(m.compiled.samples_ms, compiled.samples_ms);
  EXPECT_DOUBLE_EQ(m.eager.first_iteration_ms, 40);
  EXPECT_DOUBLE_EQ(m.compiled.first_iteration_ms, 60);
  EXPECT_DOUBLE_EQ(m.eager.median_ms, 0.105);
  EXPECT_DOUBLE_EQ(m.compiled.median_ms, 0.05);
  EXPECT_DOUBLE_EQ(m.speedup, 0.105 / 0.05);  // ratio of the medians, not of the means
  EXPECT_LE(m.speedup_ci_low, m.speedup);
  EXPECT_GE(m.speedup_ci_high, m.speedup);
  EXPECT_FALSE(m.eager.device_median_ms.has_value());
}

TEST(MeasureInterleaved, WarmupCountsPerSide) {
  for (int warmup : {0, 1, 5}) {
    Sides sides({10, 0.5, {0.5}}, {10, 0.5, {0.5}});
    measure_interleaved(sides.eager, sides.compiled, sides.timer, quick(warmup, 2));
    // first + warm-up + sizing, then 2 x (1 settling + a sample of ceil(1 / 0.5) = 2)
    EXPECT_EQ(sides.eager_iterations, 1 + warmup + 1 + 2 * (1 + 2)) << "warmup " << warmup;
    EXPECT_EQ(sides.compiled_iterations, 1 + warmup + 1 + 2 * (1 + 2)) << "warmup " << warmup;
  }
}

// Settling iterations run right before each sample, on the sample's own side, and are not
// samples: 0 gives the bare alternation, 2 two untimed calls before every sample.
TEST(MeasureInterleaved, SettleIterationsPrecedeEachSampleOfTheirSide) {
  for (int settle : {0, 2}) {
    SCOPED_TRACE("settle " + std::to_string(settle));
    Sides sides({10, 0.1, {0.25, 0.3}}, {10, 0.1, {0.125, 0.15}});
    MeasurementSettings s = quick(1, 2);
    s.settle_iterations = settle;
    s.iterations_per_run = 4;
    PairedMeasurement m = measure_interleaved(sides.eager, sides.compiled, sides.timer, s);
    std::vector<Call> sampling(sides.timer.calls.begin() + 6, sides.timer.calls.end());
    std::vector<Call> expected;
    for (int r = 0; r < 2; ++r) {
      for (char side : {'e', 'c'}) {
        for (int i = 0; i < settle; ++i) expected.push_back({side, 1});
        expected.push_back({side, 4});
      }
    }
    EXPECT_EQ(sampling, expected);
    EXPECT_EQ(m.eager.samples_ms, (std::vector<double>{0.25, 0.3}));
    EXPECT_EQ(m.compiled.samples_ms, (std::vector<double>{0.125, 0.15}));
    EXPECT_EQ(sides.eager_iterations, 1 + 1 + 1 + 2 * (settle + 4));
    EXPECT_EQ(m.settle_iterations, settle) << "the record says which protocol made it";
  }
}

// A minimum warm-up time keeps warming up fast iterations after the count is reached. (The
// iterations here take no time: 0.2 s of them are far more than any fixed count.)
TEST(MeasureInterleaved, WarmupLastsAtLeastTheMinimumTime) {
  Sides sides({10, 0.5, {0.5}}, {10, 0.5, {0.5}});
  MeasurementSettings s = quick(1, 1);
  s.min_warmup_seconds = 0.2;
  measure_interleaved(sides.eager, sides.compiled, sides.timer, s);
  EXPECT_GT(sides.eager_iterations, 1000);
  EXPECT_GT(sides.compiled_iterations, 1000);
}

TEST(MeasureInterleaved, ExplicitIterationsPerRun) {
  Sides sides({10, 0.1, {1.0}}, {10, 0.1, {1.0}});
  MeasurementSettings s = quick(0, 3);
  s.iterations_per_run = 5;
  PairedMeasurement m = measure_interleaved(sides.eager, sides.compiled, sides.timer, s);
  EXPECT_EQ(m.iterations_per_run, 5);
  EXPECT_EQ(sides.eager_iterations, 1 + 1 + 3 * (1 + 5));  // first, sizing, 3 x (settle + sample)
}

TEST(MeasureInterleaved, DeviceTimeIsSummarisedWhenTheTimerHasIt) {
  Sides sides({10, 0.5, {1.0, 2.0, 3.0}, 0.5}, {10, 0.5, {1.0, 1.0, 1.0}, 0.25});
  PairedMeasurement m = measure_interleaved(sides.eager, sides.compiled, sides.timer, quick(0, 3));
  ASSERT_TRUE(m.eager.device_median_ms.has_value());
  ASSERT_TRUE(m.compiled.device_median_ms.has_value());
  EXPECT_DOUBLE_EQ(*m.eager.device_median_ms, 1.0);
  EXPECT_DOUBLE_EQ(*m.compiled.device_median_ms, 0.25);
}

// trtexec's 2.5%, on the robust spread: a side whose samples spread by more makes the
// measurement unstable. Alternating +-a around a centre has CoV a * sqrt(n / (n - 1)) (n even)
// and spread 1.4826 a (every deviation is a).
TEST(MeasureInterleaved, UnstableAboveTwoAndAHalfPercent) {
  struct Case {
    double eager_noise, compiled_noise;
    bool eager_unstable, compiled_unstable;
  };
  for (const Case& c : {Case{0.01, 0.01, false, false}, Case{0.015, 0.0, false, false},
                        Case{0.01, 0.03, false, true}, Case{0.05, 0.01, true, false},
                        Case{0.04, 0.04, true, true}}) {
    SCOPED_TRACE("noise " + std::to_string(c.eager_noise) + " / " +
                 std::to_string(c.compiled_noise));
    Sides sides({10, 0.02, alternating(2.0, c.eager_noise, 30)},
                {10, 0.01, alternating(1.0, c.compiled_noise, 30)});
    PairedMeasurement m =
        measure_interleaved(sides.eager, sides.compiled, sides.timer, quick(2, 30));
    EXPECT_NEAR(m.eager.cov, c.eager_noise * std::sqrt(30.0 / 29.0), 1e-12);
    EXPECT_NEAR(m.compiled.cov, c.compiled_noise * std::sqrt(30.0 / 29.0), 1e-12);
    EXPECT_NEAR(m.eager.spread, 1.4826 * c.eager_noise, 1e-12);
    EXPECT_EQ(m.eager.unstable, c.eager_unstable);
    EXPECT_EQ(m.compiled.unstable, c.compiled_unstable);
    EXPECT_EQ(m.unstable, c.eager_unstable || c.compiled_unstable);
    if (m.unstable) {
      EXPECT_NE(m.note.find("unstable"), std::string::npos) << m.note;
    } else {
      EXPECT_TRUE(m.note.empty()) << m.note;
    }
    EXPECT_NEAR(m.speedup, 2.0, 1e-12);
  }
}

// A third side (Python eager beside torch.compile) is sampled in every round, after the other
// two, and summarised on its own; the eager/compiled speedup does not change because of it.
TEST(MeasureInterleaved, AnUncompiledSideTakesItsTurnInEveryRound) {
  struct ConstantTimer : Timer {
    char side = '?';
    std::string order;  // the side of every multi-iteration sample, in order
    TimedSample time(const std::function<void()>& iteration, int64_t count) override {
      for (int64_t i = 0; i < count; ++i) iteration();
      if (count > 1) order += side;
      TimedSample t;
      t.end_to_end_ms = side == 'e' ? 2.0 : side == 'c' ? 1.0 : 4.0;
      return t;
    }
  } timer;
  auto eager = [&] { timer.side = 'e'; };
  auto compiled = [&] { timer.side = 'c'; };
  auto uncompiled = [&] { timer.side = 'u'; };
  MeasurementSettings settings;
  settings.warmup_iterations = 1;
  settings.min_warmup_seconds = 0;
  settings.repeat = 4;
  settings.iterations_per_run = 2;
  PairedMeasurement m = measure_interleaved(eager, compiled, timer, settings, uncompiled);
  EXPECT_EQ(timer.order, "ecuecuecuecu");
  ASSERT_TRUE(m.uncompiled.has_value());
  EXPECT_EQ(m.uncompiled->samples_ms.size(), 4u);
  EXPECT_DOUBLE_EQ(m.uncompiled->median_ms, 4.0);
  EXPECT_DOUBLE_EQ(m.speedup, 2.0);
  EXPECT_DOUBLE_EQ(m.unstable_cov, settings.unstable_cov);
  // Without one, there is none.
  timer.order.clear();
  EXPECT_FALSE(measure_interleaved(eager, compiled, timer, settings).uncompiled.has_value());
  EXPECT_EQ(timer.order, "ecececec");
}

// The threshold is a setting the measurement records: the same 3% noise is unstable under the
// default (2.5%) and stable under a 5% threshold, and each measurement says which it used.
TEST(MeasureInterleaved, TheUnstableThresholdIsASettingItRecords) {
  for (double threshold : {MeasurementSettings{}.unstable_cov, 0.05}) {
    Sides sides({10, 0.02, alternating(2.0, 0.03, 30)}, {10, 0.01, alternating(1.0, 0.0, 30)});
    MeasurementSettings settings = quick(2, 30);
    settings.unstable_cov = threshold;
    PairedMeasurement m = measure_interleaved(sides.eager, sides.compiled, sides.timer, settings);
    EXPECT_EQ(m.unstable, threshold < 0.03) << threshold;
    EXPECT_DOUBLE_EQ(m.unstable_cov, threshold);
  }
}

// --max-repeat: a quiet pair stops at --repeat; a noisy one keeps sampling in rounds of
// repeat / 2 (at least 5) while the speedup's interval is wider than the target, up to the cap.
TEST(MeasureInterleaved, SamplesMoreOnlyWhileTheIntervalIsWide) {
  EXPECT_TRUE(interval_narrow_enough(2.0, 1.97, 2.03, 0.02));
  EXPECT_FALSE(interval_narrow_enough(2.0, 1.9, 2.1, 0.02));
  for (double noise : {0.002, 0.2}) {
    SCOPED_TRACE("noise " + std::to_string(noise));
    // Out of phase: the paired ratios spread (in phase they would all be 2).
    Sides sides({10, 0.02, alternating(2.0, noise, 30)}, {10, 0.01, alternating(1.0, -noise, 30)});
    MeasurementSettings settings = quick(2, 10);
    settings.max_repeat = 62;
    PairedMeasurement m = measure_interleaved(sides.eager, sides.compiled, sides.timer, settings);
    const std::size_t expected = noise < 0.01 ? 10u : 62u;  // 10, 15, ..., 60, then the last 2
    EXPECT_EQ(m.eager.samples_ms.size(), expected);
    EXPECT_EQ(m.compiled.samples_ms.size(), expected);
  }
  // Without --max-repeat, --repeat alone, however wide the interval.
  Sides noisy({10, 0.02, alternating(2.0, 0.2, 30)}, {10, 0.01, alternating(1.0, -0.2, 30)});
  EXPECT_EQ(measure_interleaved(noisy.eager, noisy.compiled, noisy.timer, quick(2, 10))
                .eager.samples_ms.size(),
            10u);
}

TEST(HostTimer, RunsTheIterationsAndReportsNoDeviceTime) {
  auto timer = make_timer(c10::Device(c10::kCPU));
  int calls = 0;
  TimedSample t = timer->time([&] { ++calls; }, 3);
  EXPECT_EQ(calls, 3);
  EXPECT_GE(t.end_to_end_ms, 0.0);
  EXPECT_FALSE(t.device_ms.has_value());
}

}  // namespace
}  // namespace zoobench
