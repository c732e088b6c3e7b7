// The interleaved measurement: warm both sides up, choose how many iterations one sample
// holds, then take `repeat` samples that alternate eager and compiled (frequency scaling and
// load drift hit both alike), each after `settle_iterations` untimed ones of its own side,
// more while the speedup's interval is wide (up to `max_repeat`), and summarise them with
// honest statistics.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "zoobench/perf/statistics.h"
#include "zoobench/perf/timer.h"
#include "zoobench/results/columns.h"

namespace zoobench {

struct MeasurementSettings {
  int warmup_iterations = 5;        // --warmup: untimed iterations per side, at least ...
  double min_warmup_seconds = 0.5;  // ... and at least this long per side
  int repeat = 30;                  // --repeat: samples per side
  // --max-repeat: above `repeat`, the samples go on in rounds of `repeat` / 2 (at least 5) while
  // the speedup's 95% interval is wider than +-`target_interval` of it, up to this many per side
  // (hyperfine's min/max runs, stopped by the interval rather than by time); 0: `repeat` only.
  int max_repeat = 0;
  double target_interval = 0.02;    // --target-interval: half-width, a fraction of the speedup
  int64_t iterations_per_run = 0;   // --iterations-per-run; 0: choose automatically
  // --settle-iterations: untimed iterations of a side right before each of its samples. The
  // sides alternate, so without them every sample starts just after the other side's model
  // ran (its weights and activations in the caches): on the H200 a 1-iteration sample of a
  // mobilenetv3 training step took 31 ms, against 25.6 ms per iteration in 5-iteration
  // samples (2026-11-30). A loop that repeats one model, as Python's does, never pays that.
  int settle_iterations = 1;
  double min_sample_ms =
      1.0;  // a sample lasts at least this long (clock resolution, launch jitter)
  int64_t max_iterations_per_run = 10000;
  double unstable_cov = 0.025;  // trtexec's 2.5%, applied to the robust spread
  int bootstrap_resamples = 2000;
};

struct SideSummary {
  std::vector<double> samples_ms;  // per-iteration time of each sample
  double median_ms = 0, min_ms = 0, p10_ms = 0, p90_ms = 0, cov = 0;
  // stats::robust_spread: what the unstable flag reads. The CoV (mean and standard deviation)
  // is reported too, but one slow sample among 30 (a page fault, another process) trips it
  // while the median it would question barely moves.
  double spread = 0;
  std::optional<double> device_median_ms;  // CUDA events, per iteration
  double first_iteration_ms = 0;  // the very first call (compile/lazy-init cost shows here)
  bool unstable = false;
};

// The statistics every side is summarised with, each registered once: its name and function,
// the SideSummary field that holds it and the result columns of the eager and the compiled side.
// summarize_side computes every one; performance rows (runner/record_rows.cpp) write every one.
struct SideStatistic {
  stats::NamedStatistic statistic;
  double SideSummary::*field;
  const columns::Column* eager_column;
  const columns::Column* compiled_column;
};
const std::vector<SideStatistic>& side_statistics();  // median, min, p10, p90, cov

struct PairedMeasurement {
  SideSummary eager, compiled;
  // A third side timed in the same rounds, when there is one (the compiled model's own
  // uncompiled form: Python eager beside torch.compile).
  std::optional<SideSummary> uncompiled;
  int64_t iterations_per_run = 0;
  int settle_iterations = 0;  // as run, so results say which protocol made them
  double unstable_cov = 0;    // the threshold the unstable flag used, as run
  double speedup = 0, speedup_ci_low = 0, speedup_ci_high = 0;
  bool unstable = false;
  std::string note;  // why the measurement is flagged, for the row's reason
};

// Whether the speedup's interval [low, high] is within +-target of the speedup.
bool interval_narrow_enough(double speedup, double low, double high, double target);

// Picks the iterations per sample so that a sample of the faster side lasts `min_sample_ms`.
int64_t choose_iterations_per_run(double fastest_iteration_ms, const MeasurementSettings& settings);

// Summarises one side's samples (median, percentiles, CoV, robust spread, unstable flag).
SideSummary summarize_side(std::vector<double> samples_ms, const MeasurementSettings& settings);

// Runs the whole protocol. `eager` and `compiled` (and `uncompiled`, when given) each perform
// one iteration; each round takes one sample of every side, in that order.
PairedMeasurement measure_interleaved(const std::function<void()>& eager,
                                      const std::function<void()>& compiled, Timer& timer,
                                      const MeasurementSettings& settings,
                                      const std::function<void()>& uncompiled = nullptr);

}  // namespace zoobench
