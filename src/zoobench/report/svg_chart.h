// Inline SVG charts for the HTML report, generated here so the report needs no script library:
// a horizontal bar chart of speedups per model (end-to-end and kernel, confidence intervals as
// whiskers, a 1.0x reference line) and a small log-scale bar for an accuracy margin.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace zoobench::report {

struct SpeedupBar {
  double value = 0;
  std::optional<double> ci_low, ci_high;
  bool unstable = false;
};

// One model's row in the chart. A model whose run failed has no bars and shows `failure`.
struct SpeedupChartRow {
  std::string model;
  std::optional<SpeedupBar> e2e, op;
  std::string failure;  // the status, when the performance run failed
};

// Rows are drawn in the given order (the caller sorts them). Each bar is a
// <rect class="bar e2e|op" data-model="..." data-value="..."> so tests can find it; the
// caption names the series (backend) in the chart's accessible label.
std::string speedup_chart_svg(const std::vector<SpeedupChartRow>& rows, const std::string& caption);

// Margin = worst error / allowed error (< 1 passes), on a log scale from 1e-4 to 1e2 with a
// mark at 1: green below, red above.
std::string margin_svg(double margin);

// Tick step for an axis from 0 to `max_value`: 1, 2, 2.5 or 5 times a power of ten, giving at
// most about eight ticks.
double nice_tick_step(double max_value);

}  // namespace zoobench::report
