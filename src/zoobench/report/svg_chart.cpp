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

std::string speedup_chart_svg(const std::vector<SpeedupChartRow>& rows,
                              const std::string& caption) {
  bool any_op =
      std::any_of(rows.begin(), rows.end(), [](const auto& r) { return r.op.has_value(); });
  double row_height = any_op ? 30 : 22;
  double bar_height = any_op ? 11 : 14;
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
  double step = nice_tick_step(max_value);
  double axis_max = std::ceil(max_value * 1.02 / step) * step;
  double left = 16.0 + kLabelCharWidth * static_cast<double>(longest);
  double right = kWidth - kValueRoom;
  auto x = [&](double value) {
    return left + (right - left) * std::clamp(value, 0.0, axis_max) / axis_max;
  };
  double plot_height = row_height * static_cast<double>(std::max<std::size_t>(rows.size(), 1));
  double height = kTop + plot_height + kBottom;

  std::string out = fmt::format(
      "<svg class=\"speedup-chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {} {}\" "
      "width=\"100%\" role=\"img\" aria-label=\"{}\" font-family=\"system-ui, sans-serif\" "
      "font-size=\"12\">\n",
      kWidth, height, escape_html("Speedup per model: " + caption));
  // Legend.
  double legend_x = left;
  out += fmt::format(
      "<rect x=\"{}\" y=\"8\" width=\"12\" height=\"12\" fill=\"{}\"/>"
      "<text x=\"{}\" y=\"18\">E2E speedup</text>\n",
      legend_x, kE2EColor, legend_x + 16);
  legend_x += 110;
  if (any_op) {
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

  // Grid and tick labels.
  for (double tick = 0; tick <= axis_max + step / 2; tick += step) {
    out += fmt::format(
        "<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" "
        "stroke=\"#e5e7eb\"/><text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\" "
        "fill=\"#666\">{4}</text>\n",
        x(tick), kTop - 4, kTop + plot_height, kTop + plot_height + 16, tick_label(tick));
  }

  for (std::size_t i = 0; i < rows.size(); ++i) {
    const SpeedupChartRow& row = rows[i];
    double top = kTop + row_height * static_cast<double>(i);
    std::string model = escape_html(row.model);
    out += fmt::format("<g class=\"model-row\" data-model=\"{}\">", model);
    out +=
        fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}<title>{}</title></text>",
                    left - 8, top + row_height / 2 + 4, escape_html(shorten(row.model, kLabelChars)), model);
    if (!row.failure.empty()) {
      out += fmt::format("<text class=\"failed\" x=\"{}\" y=\"{:.1f}\" fill=\"#cf222e\">{}</text>",
                         left + 6, top + row_height / 2 + 4, escape_html(row.failure));
    }
    double bar_top = top + (row_height - (any_op ? 2 * bar_height + 2 : bar_height)) / 2;
    for (const char* metric : {"e2e", "op"}) {
      const auto& bar = metric[0] == 'e' ? row.e2e : row.op;
      double y = metric[0] == 'e' ? bar_top : bar_top + bar_height + 2;
      if (!bar) continue;
      out += fmt::format(
          "<rect class=\"bar {}{}\" data-model=\"{}\" data-value=\"{:.4g}\" x=\"{}\" y=\"{:.1f}\" "
          "width=\"{:.1f}\" height=\"{}\" fill=\"{}\"{}><title>{} {}: {}{}</title></rect>",
          metric, bar->unstable ? " unstable" : "", model, bar->value, left, y,
          std::max(0.5, x(bar->value) - left), bar_height, metric[0] == 'e' ? kE2EColor : kOpColor,
          bar->unstable ? " fill-opacity=\"0.55\"" : "", model, metric[0] == 'e' ? "E2E" : "OP",
          format_ratio(bar->value, "\u00d7"), bar->unstable ? " (unstable)" : "");
      double label_x = x(bar->value);
      if (bar->ci_low && bar->ci_high) {
        double mid = y + bar_height / 2;
        double x0 = x(*bar->ci_low), x1 = x(*bar->ci_high);
        out += fmt::format(
            "<g class=\"ci\" stroke=\"#222\" stroke-width=\"1.2\"><line x1=\"{0:.1f}\" "
            "y1=\"{2:.1f}\" "
            "x2=\"{1:.1f}\" y2=\"{2:.1f}\"/><line x1=\"{0:.1f}\" y1=\"{3:.1f}\" x2=\"{0:.1f}\" "
            "y2=\"{4:.1f}\"/><line x1=\"{1:.1f}\" y1=\"{3:.1f}\" x2=\"{1:.1f}\" "
            "y2=\"{4:.1f}\"/></g>",
            x0, x1, mid, mid - 3.5, mid + 3.5);
        label_x = std::max(label_x, x1);
      }
      out += fmt::format(
          "<text class=\"value\" x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#333\">{}{}</text>", label_x + 5,
          y + bar_height - 2, format_ratio(bar->value, "\u00d7"), bar->unstable ? "\u2020" : "");
    }
    out += "</g>\n";
  }
  // The reference line goes last so it is drawn over the bars.
  out += fmt::format(
      "<line class=\"reference\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" "
      "stroke=\"#111\" stroke-width=\"1.5\" stroke-dasharray=\"5 4\"/>\n",
      x(1.0), kTop - 6, kTop + plot_height);
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
