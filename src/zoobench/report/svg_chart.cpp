// SVG drawing of the speedup chart and margin bars.
#include "zoobench/report/svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "zoobench/report/html_escape.h"
#include "zoobench/report/number_format.h"

namespace zoobench::report {
namespace {

constexpr double kWidth = 960;
constexpr double kTop = 34;     // legend
constexpr double kBottom = 26;  // tick labels
constexpr double kValueRoom = 78;
// Model names longer than this are cut (the full name is the label's tooltip); the label column
// is sized for it at about 7 px a character of the 12 px font.
constexpr std::size_t kLabelChars = 34;
constexpr double kLabelCharWidth = 7.0;
constexpr const char* kE2EColor = "#4e79a7";
constexpr const char* kOpColor = "#f28e2b";

std::string shorten(const std::string& name, std::size_t limit) {
  if (name.size() <= limit) return name;
  return name.substr(0, limit - 1) + "\u2026";
}

std::string tick_label(double value) {
  std::string text = fmt::format("{:.2f}", value);
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text += '0';
  return text + "\u00d7";
}

}  // namespace

double nice_tick_step(double max_value) {
  if (!(max_value > 0)) return 1;
  double raw = max_value / 8;
  double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double factor : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (factor * power >= raw) return factor * power;
  }
  return 10 * power;
}

namespace {

// Where things go: sizes that follow from the rows (label width, bar thickness, the axis's
// range) and the value -> x mapping every piece draws with.
struct ChartLayout {
  bool any_op = false;  // two bars per model (E2E and OP) instead of one
  double row_height = 22, bar_height = 14;
  double step = 1, axis_max = 1;  // tick step and the axis's end
  double left = 0, right = 0;     // the plot's x range; model labels end left of it
  double plot_height = 0;

  double x(double value) const {
    return left + (right - left) * std::clamp(value, 0.0, axis_max) / axis_max;
  }
};

ChartLayout layout_chart(const std::vector<SpeedupChartRow>& rows) {
  ChartLayout layout;
  layout.any_op =
      std::any_of(rows.begin(), rows.end(), [](const auto& r) { return r.op.has_value(); });
  layout.row_height = layout.any_op ? 30 : 22;
  layout.bar_height = layout.any_op ? 11 : 14;
  std::size_t longest = 8;
  double max_value = 1.0;
  for (const auto& row : rows) {
    longest = std::max(longest, std::min(row.model.size(), kLabelChars));
    for (const auto* bar : {&row.e2e, &row.op}) {
      if (!*bar) continue;
      max_value = std::max(max_value, (*bar)->value);
      if ((*bar)->ci_high) max_value = std::max(max_value, *(*bar)->ci_high);
    }
  }
  layout.step = nice_tick_step(max_value);
  layout.axis_max = std::ceil(max_value * 1.02 / layout.step) * layout.step;
  layout.left = 16.0 + kLabelCharWidth * static_cast<double>(longest);
  layout.right = kWidth - kValueRoom;
  layout.plot_height =
      layout.row_height * static_cast<double>(std::max<std::size_t>(rows.size(), 1));
  return layout;
}

// The legend above the plot: the bars' colours, the whisker, the unstable mark.
std::string legend_svg(const ChartLayout& layout) {
  double legend_x = layout.left;
  std::string out = fmt::format(
      "<rect x=\"{}\" y=\"8\" width=\"12\" height=\"12\" fill=\"{}\"/>"
      "<text x=\"{}\" y=\"18\">E2E speedup</text>\n",
      legend_x, kE2EColor, legend_x + 16);
  legend_x += 110;
  if (layout.any_op) {
    out += fmt::format(
        "<rect x=\"{}\" y=\"8\" width=\"12\" height=\"12\" fill=\"{}\"/>"
        "<text x=\"{}\" y=\"18\">OP (kernel) speedup</text>\n",
        legend_x, kOpColor, legend_x + 16);
    legend_x += 150;
  }
  out += fmt::format(
      "<line x1=\"{0}\" y1=\"14\" x2=\"{1}\" y2=\"14\" stroke=\"#333\"/>"
      "<line x1=\"{0}\" y1=\"10\" x2=\"{0}\" y2=\"18\" stroke=\"#333\"/>"
      "<line x1=\"{1}\" y1=\"10\" x2=\"{1}\" y2=\"18\" stroke=\"#333\"/>"
      "<text x=\"{2}\" y=\"18\">95% CI</text>\n",
      legend_x, legend_x + 14, legend_x + 20);
  legend_x += 80;
  out +=
      fmt::format("<text x=\"{}\" y=\"18\" fill=\"#666\">{} unstable</text>\n", legend_x, "\u2020");
  return out;
}

// Vertical grid lines with their tick labels below the plot.
std::string grid_svg(const ChartLayout& layout) {
  std::string out;
  for (double tick = 0; tick <= layout.axis_max + layout.step / 2; tick += layout.step) {
    out += fmt::format(
        "<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" "
        "stroke=\"#e5e7eb\"/><text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\" "
        "fill=\"#666\">{4}</text>\n",
        layout.x(tick), kTop - 4, kTop + layout.plot_height, kTop + layout.plot_height + 16,
        tick_label(tick));
  }
  return out;
}

// One bar at height `y`: the rect, its confidence-interval whisker, its value label.
std::string bar_svg(const ChartLayout& layout, const SpeedupBar& bar, bool e2e, double y,
                    const std::string& model) {
  const char* metric = e2e ? "e2e" : "op";
  std::string out = fmt::format(
      "<rect class=\"bar {}{}\" data-model=\"{}\" data-value=\"{:.4g}\" x=\"{}\" y=\"{:.1f}\" "
      "width=\"{:.1f}\" height=\"{}\" fill=\"{}\"{}><title>{} {}: {}{}</title></rect>",
      metric, bar.unstable ? " unstable" : "", model, bar.value, layout.left, y,
      std::max(0.5, layout.x(bar.value) - layout.left), layout.bar_height,
      e2e ? kE2EColor : kOpColor, bar.unstable ? " fill-opacity=\"0.55\"" : "", model,
      e2e ? "E2E" : "OP", format_speedup(bar.value, bar.ci_low, bar.ci_high, "\u00d7"),
      bar.unstable ? " (unstable)" : "");
  double label_x = layout.x(bar.value);
  if (bar.ci_low && bar.ci_high) {
    double mid = y + layout.bar_height / 2;
    double x0 = layout.x(*bar.ci_low), x1 = layout.x(*bar.ci_high);
    out += fmt::format(
        "<g class=\"ci\" stroke=\"#222\" stroke-width=\"1.2\"><line x1=\"{0:.1f}\" "
        "y1=\"{2:.1f}\" "
        "x2=\"{1:.1f}\" y2=\"{2:.1f}\"/><line x1=\"{0:.1f}\" y1=\"{3:.1f}\" x2=\"{0:.1f}\" "
        "y2=\"{4:.1f}\"/><line x1=\"{1:.1f}\" y1=\"{3:.1f}\" x2=\"{1:.1f}\" "
        "y2=\"{4:.1f}\"/></g>",
        x0, x1, mid, mid - 3.5, mid + 3.5);
    label_x = std::max(label_x, x1);
  }
  out += fmt::format("<text class=\"value\" x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#333\">{}{}</text>",
                     label_x + 5, y + layout.bar_height - 2,
                     format_speedup(bar.value, bar.ci_low, bar.ci_high, "\u00d7"),
                     bar.unstable ? "\u2020" : "");
  return out;
}

// The i-th model's row: its label, the failure text or its bars (E2E above OP).
std::string model_row_svg(const ChartLayout& layout, const SpeedupChartRow& row, std::size_t i) {
  double top = kTop + layout.row_height * static_cast<double>(i);
  std::string model = escape_html(row.model);
  std::string out = fmt::format("<g class=\"model-row\" data-model=\"{}\">", model);
  out += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}<title>{}</title></text>",
                     layout.left - 8, top + layout.row_height / 2 + 4,
                     escape_html(shorten(row.model, kLabelChars)), model);
  if (!row.failure.empty()) {
    out += fmt::format("<text class=\"failed\" x=\"{}\" y=\"{:.1f}\" fill=\"#cf222e\">{}</text>",
                       layout.left + 6, top + layout.row_height / 2 + 4, escape_html(row.failure));
  }
  double bars_height = layout.any_op ? 2 * layout.bar_height + 2 : layout.bar_height;
  double bar_top = top + (layout.row_height - bars_height) / 2;
  if (row.e2e) out += bar_svg(layout, *row.e2e, true, bar_top, model);
  if (row.op) out += bar_svg(layout, *row.op, false, bar_top + layout.bar_height + 2, model);
  return out + "</g>\n";
}

}  // namespace

std::string speedup_chart_svg(const std::vector<SpeedupChartRow>& rows,
                              const std::string& caption) {
  const ChartLayout layout = layout_chart(rows);
  double height = kTop + layout.plot_height + kBottom;
  std::string out = fmt::format(
      "<svg class=\"speedup-chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {} {}\" "
      "width=\"100%\" role=\"img\" aria-label=\"{}\" font-family=\"system-ui, sans-serif\" "
      "font-size=\"12\">\n",
      kWidth, height, escape_html("Speedup per model: " + caption));
  out += legend_svg(layout) + grid_svg(layout);
  for (std::size_t i = 0; i < rows.size(); ++i) out += model_row_svg(layout, rows[i], i);
  // The reference line goes last so it is drawn over the bars.
  out += fmt::format(
      "<line class=\"reference\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" "
      "stroke=\"#111\" stroke-width=\"1.5\" stroke-dasharray=\"5 4\"/>\n",
      layout.x(1.0), kTop - 6, kTop + layout.plot_height);
  out += "</svg>\n";
  return out;
}

std::string margin_svg(double margin) {
  constexpr double kWidthPx = 56, kLowDecade = -4, kDecades = 6;
  auto position = [&](double value) {
    if (!(value > 0)) return 0.0;
    double decades = std::clamp(std::log10(value) - kLowDecade, 0.0, kDecades);
    return kWidthPx * decades / kDecades;
  };
  return fmt::format(
      "<svg class=\"margin-bar\" width=\"{0}\" height=\"12\" viewBox=\"0 0 {0} 12\" "
      "aria-hidden=\"true\">"
      "<rect x=\"0\" y=\"2\" width=\"{0}\" height=\"8\" fill=\"#eef0f3\"/>"
      "<rect x=\"0\" y=\"2\" width=\"{1:.1f}\" height=\"8\" fill=\"{2}\"/>"
      "<line x1=\"{3:.1f}\" y1=\"0\" x2=\"{3:.1f}\" y2=\"12\" stroke=\"#333\"/></svg>",
      kWidthPx, position(margin), margin < 1 ? "#2da44e" : "#cf222e", position(1.0));
}

}  // namespace zoobench::report
