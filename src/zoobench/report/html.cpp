// HTML rendering of the joined results.
#include "zoobench/report/html.h"

#include <fmt/format.h>

#include <algorithm>

#include "zoobench/report/html_escape.h"
#include "zoobench/report/number_format.h"
#include "zoobench/report/summary.h"
#include "zoobench/report/svg_chart.h"
#include "zoobench/report/timing_columns.h"
#include "zoobench/util/text.h"

namespace zoobench::report {
namespace {

constexpr const char* kStyle = R"css(
:root { --fg:#1f2328; --muted:#59636e; --line:#d1d9e0; --soft:#f6f8fa; --good:#116329; --bad:#a40e26; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: #fff; }
main { max-width: 1320px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 32px 0 10px; padding-bottom: 6px; border-bottom: 1px solid var(--line); }
.meta, .sources, .muted { color: var(--muted); }
.sources code { font-size: 12px; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 10px; margin: 20px 0 8px; }
.card { border: 1px solid var(--line); border-radius: 10px; padding: 10px 14px; background: var(--soft); }
.card .label { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.card .value { font-size: 28px; font-weight: 650; margin: 2px 0; font-variant-numeric: tabular-nums; }
.card .sub { color: var(--muted); font-size: 12px; }
.good { color: var(--good); } .bad { color: var(--bad); }
figure { margin: 8px 0 20px; }
figcaption { font-weight: 600; margin-bottom: 4px; }
.speedup-chart { max-width: 1100px; display: block; }
.table-wrap { overflow-x: auto; border: 1px solid var(--line); border-radius: 8px; }
table { border-collapse: collapse; width: 100%; font-size: 12.5px; }
th, td { padding: 4px 7px; border-bottom: 1px solid #eaeef2; text-align: left; vertical-align: middle; }
th { background: var(--soft); font-weight: 600; font-size: 12px; position: sticky; top: 0; }
table.sortable th { cursor: pointer; user-select: none; }
table.sortable th:hover { background: #eaeef2; }
th[aria-sort=ascending]::after { content: " \25B2"; font-size: 10px; }
th[aria-sort=descending]::after { content: " \25BC"; font-size: 10px; }
.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tbody tr:hover { background: #f6f8fa; }
td.status { font-weight: 600; white-space: nowrap; background: #fff1e5; color: #9a3412; }
td.status[data-status=pass], td.status[data-status=pass_due_to_skip] { background: #dafbe1; color: var(--good); }
td.status[data-status=fail_accuracy] { background: #ffebe9; color: var(--bad); }
td.status[data-status=skipped] { background: #eef0f3; color: var(--muted); }
td.speedup.up { color: var(--good); } td.speedup.down { color: var(--bad); }
.ci { display: block; color: var(--muted); font-size: 11px; font-weight: 400; }
.was { display: block; font-size: 11px; font-weight: 400; color: var(--muted); }
.mark { color: #bc4c00; font-weight: 700; cursor: help; }
td.regressed, tr.regressed td.model { box-shadow: inset 3px 0 0 #cf222e; }
td.regressed { background: #ffebe9; color: var(--bad); font-weight: 700; }
td.margin { white-space: nowrap; } td.margin svg { vertical-align: middle; margin-left: 4px; }
td.reason { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; }
ul.regressions li { margin: 4px 0; }
footer { margin-top: 28px; color: var(--muted); font-size: 12px; }
)css";

// Sorting: click a header (ascending, then descending); #sort=<key>[&order=desc] in the URL
// sorts on load. Rows without a value stay last. Marks the document when it has run.
constexpr const char* kScript = R"js(
(function () {
  function value(cell) {
    if (!cell) return null;
    var v = cell.hasAttribute('data-sort') ? cell.getAttribute('data-sort') : cell.textContent.trim();
    if (v === '' || v === '-') return null;
    var n = Number(v);
    return isNaN(n) ? v.toLowerCase() : n;
  }
  function sortTable(table, column, descending) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = value(a.cells[column]), y = value(b.cells[column]);
      if (x === null || y === null) return (x === null) - (y === null);
      if (typeof x !== typeof y) return typeof x === 'number' ? -1 : 1;
      var order = x < y ? -1 : x > y ? 1 : 0;
      return descending ? -order : order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      if (i === column) th.setAttribute('aria-sort', descending ? 'descending' : 'ascending');
      else th.removeAttribute('aria-sort');
    });
  }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      th.addEventListener('click', function () {
        sortTable(table, i, th.getAttribute('aria-sort') === 'ascending');
      });
    });
  });
  var m = /sort=([^&]+)(&order=desc)?/.exec(location.hash);
  if (m) {
    var th = document.querySelector('table.sortable th[data-key="' + CSS.escape(decodeURIComponent(m[1])) + '"]');
    if (th) sortTable(th.closest('table'), th.cellIndex, !!m[2]);
  }
  document.documentElement.setAttribute('data-sortable', 'ready');
})();
)js";

struct Column {
  std::string key;  // the markdown column name: the sort key
  bool numeric = false;
  std::string note = "";  // a second line under the name: a speedup's baseline
};

std::string header_cell(const Column& column) {
  // Let long column names wrap after their underscores.
  std::string text = escape_html(column.key);
  std::string wrapped;
  for (char c : text) {
    wrapped += c;
    if (c == '_') wrapped += "<wbr>";
  }
  if (!column.note.empty()) wrapped += "<span class=\"ci\">" + escape_html(column.note) + "</span>";
  return fmt::format("<th data-key=\"{}\"{}>{}</th>", escape_html(column.key),
                     column.numeric ? " class=\"num\"" : "", wrapped);
}

std::string number_sort(std::optional<double> value) {
  return value ? fmt::format("{:.6g}", *value) : "";
}

std::string td_number(const std::string& text, std::optional<double> sort_value,
                      const std::string& extra_class = "") {
  return fmt::format("<td class=\"num{}{}\" data-sort=\"{}\">{}</td>",
                     extra_class.empty() ? "" : " ", extra_class, number_sort(sort_value), text);
}

std::string unstable_mark(const std::string& threshold) {
  return "<span class=\"mark\" title=\"unstable: spread above " + escape_html(threshold) +
         "\">\u2020</span>";
}

std::string status_cell(const std::optional<AccuracyCell>& cell,
                        const std::optional<AccuracyChange>& change) {
  if (!cell) return "<td data-sort=\"\">-</td>";
  std::string status = escape_html(cell->status);
  std::string classes = "status status-" + css_token(cell->status);
  if (change && change->regressed) classes += " regressed";
  std::string was;
  if (change && change->before != change->after) {
    was = "<span class=\"was\">was " + escape_html(change->before) + "</span>";
  }
  std::string title = cell->reason.empty() ? "" : " title=\"" + escape_html(cell->reason) + "\"";
  return fmt::format("<td class=\"{}\" data-status=\"{}\" data-sort=\"{}\"{}>{}{}</td>", classes,
                     status, status, title, status, was);
}

// `unstable_threshold`: the spread threshold the measurement exceeded, "" when it was stable.
std::string speedup_cell(std::optional<double> speedup, std::optional<double> ci_low,
                         std::optional<double> ci_high, const std::string& unstable_threshold) {
  if (!speedup) return td_number("-", std::nullopt);
  const bool unstable = !unstable_threshold.empty();
  std::string text = format_speedup(speedup, ci_low, ci_high, "\u00d7");
  if (unstable) text += unstable_mark(unstable_threshold);
  if (ci_low && ci_high) {
    text += "<span class=\"ci\">" +
            format_speedup_interval(speedup, ci_low, ci_high, "", "\u2013") + "</span>";
  }
  std::string classes = std::string("speedup ") + (*speedup >= 1.0 ? "up" : "down");
  if (unstable) classes += " unstable";
  return td_number(text, speedup, classes);
}

std::string card(const std::string& label, const std::string& value, const std::string& value_class,
                 const std::string& sub) {
  return fmt::format(
      "<div class=\"card\"><div class=\"label\">{}</div><div class=\"value {}\">{}</div>"
      "<div class=\"sub\">{}</div></div>\n",
      label, value_class, value, sub);
}

// One card for a per-series number: the first series large, every series in the line below;
// none when no series has the number (kernel time on a CPU, compile latency of jit rows).
std::string series_card(const JoinedResults& joined, const ReportSummary& summary,
                        const std::string& label, const char* unit_suffix,
                        std::optional<double> SeriesSummary::*field,
                        const int SeriesSummary::*count, bool ratio, const std::string& what) {
  const bool any =
      std::any_of(summary.per_series.begin(), summary.per_series.end(),
                  [&](const SeriesSummary& series) { return (series.*field).has_value(); });
  if (!any) return "";
  std::optional<double> first;
  std::vector<std::string> parts;
  for (std::size_t s = 0; s < summary.per_series.size(); ++s) {
    const SeriesSummary& series = summary.per_series[s];
    std::optional<double> value = series.*field;
    if (s == 0) first = value;
    std::string text = !value  ? "-"
                       : ratio ? format_ratio(value, "\u00d7")
                               : fmt::format("{:.2f}{}", *value, unit_suffix);
    std::string models = count ? fmt::format(" over {} models", series.*count) : "";
    parts.push_back(escape_html(joined.performance_series[s].label) +
                    (summary.per_series.size() > 1 ? " " + text : "") + models);
  }
  std::string value = !first  ? "-"
                      : ratio ? format_ratio(first, "\u00d7")
                              : fmt::format("{:.2f}{}", *first, unit_suffix);
  std::string value_class = ratio && first ? (*first >= 1.0 ? "good" : "bad") : "";
  return card(label, value, value_class, join(parts, " · ") + (what.empty() ? "" : " · " + what));
}

// A series' geomean speedup as the cards show it: the digits its band allows, the unstable mark
// where a model in it was unstable, the band itself in `band` ("" when there is none).
struct GeomeanText {
  std::string value, band;
};
GeomeanText geomean_text(const SeriesSummary& series, bool e2e, const std::string& threshold) {
  const std::optional<double> value = e2e ? series.geomean_speedup : series.geomean_op_speedup;
  if (!value) return {"-", ""};
  const auto& band = e2e ? series.geomean_speedup_band : std::nullopt;
  GeomeanText out;
  out.value = band ? format_speedup(value, band->low, band->high, "\u00d7")
                   : format_speedup(value, {}, {}, "\u00d7");
  if (e2e && series.geomean_unstable) out.value += unstable_mark(threshold);
  if (band) {
    out.band = "band " + format_speedup_interval(value, band->low, band->high, "\u00d7", "\u2013");
  }
  return out;
}

// The geomean speedup card (E2E, or OP: kernel time): the first series large with its band, every
// series in the line below with its own; each says the eager it is measured against. None when
// no series has the number (kernel time on a CPU).
std::string speedup_card(const JoinedResults& joined, const ReportSummary& summary, bool e2e) {
  const auto& per_series = summary.per_series;
  auto value_of = [e2e](const SeriesSummary& series) {
    return e2e ? series.geomean_speedup : series.geomean_op_speedup;
  };
  if (std::none_of(per_series.begin(), per_series.end(),
                   [&](const SeriesSummary& series) { return value_of(series).has_value(); }))
    return "";
  std::vector<std::string> parts;
  for (std::size_t s = 0; s < per_series.size(); ++s) {
    const GeomeanText text = geomean_text(per_series[s], e2e, joined.unstable_threshold);
    std::string part = escape_html(joined.performance_series[s].label);
    if (per_series.size() > 1)
      part += " " + text.value + (text.band.empty() ? "" : " " + text.band);
    part += fmt::format(" over {} models ", e2e ? per_series[s].models_with_speedup
                                                : per_series[s].models_with_op_speedup);
    parts.push_back(part + escape_html(speedup_baseline(joined.performance_series[s])));
  }
  const GeomeanText first = geomean_text(per_series.front(), e2e, joined.unstable_threshold);
  const std::optional<double> value = value_of(per_series.front());
  std::string shown =
      first.value + (first.band.empty() ? "" : "<span class=\"ci\">" + first.band + "</span>");
  return card(e2e ? "Geomean E2E speedup" : "Geomean OP speedup", shown,
              value ? (*value >= 1.0 ? "good" : "bad") : "",
              join(parts, " \u00b7 ") + (e2e ? "" : " \u00b7 kernel time"));
}

std::string cards(const JoinedResults& joined, const ReportSummary& summary,
                  const ReportOptions& options) {
  std::string out = "<section class=\"cards\">\n";
  if (!joined.accuracy_columns.empty()) {
    auto fraction = summary.overall.fraction();
    std::vector<std::string> parts = {
        fmt::format("{} of {} accuracy checks", summary.overall.passed, summary.overall.total)};
    if (joined.accuracy_columns.size() > 1) {
      for (std::size_t c = 0; c < joined.accuracy_columns.size(); ++c) {
        parts.push_back(fmt::format("{} {}/{}", escape_html(joined.accuracy_columns[c].label),
                                    summary.per_column[c].passed, summary.per_column[c].total));
      }
    }
    out += card("Accuracy pass rate", fraction ? format_percent(*fraction) : "-",
                fraction && *fraction == 1.0  ? "good"
                : fraction && *fraction < 0.9 ? "bad"
                                              : "",
                join(parts, " · "));
  }
  if (!joined.performance_series.empty()) {
    out += speedup_card(joined, summary, /*e2e=*/true);
    out += speedup_card(joined, summary, /*e2e=*/false);
    out += series_card(joined, summary, "Mean compile latency", " s",
                       &SeriesSummary::mean_compilation_latency_s, nullptr, false,
                       "prepare + first-run excess");
    out += series_card(joined, summary, "Memory compression", "",
                       &SeriesSummary::geomean_compression_ratio, nullptr, true,
                       "eager / compiled peak, geomean");
    const int unstable = summary.unstable_rows(), measured = summary.timed_rows();
    out += card(
        "Unstable measurements", std::to_string(unstable), unstable > 0 ? "bad" : "good",
        fmt::format("of {} performance rows (spread above {})", measured, joined.unstable_threshold));
  }
  if (options.baseline) {
    int regressions = options.baseline->regressions();
    out += card("Regressions vs baseline", std::to_string(regressions),
                regressions > 0 ? "bad" : "good",
                fmt::format("threshold {:.0f}% slower, or pass \u2192 fail",
                            options.baseline->threshold * 100));
  }
  return out + "</section>\n";
}

std::string charts(const JoinedResults& joined) {
  std::string out;
  for (std::size_t s = 0; s < joined.performance_series.size(); ++s) {
    std::vector<SpeedupChartRow> rows;
    for (const auto& model : joined.models) {
      const auto& cell = model.performance[s];
      if (!cell) continue;
      SpeedupChartRow row;
      row.model = model.name;
      if (!cell->passed()) {
        row.failure = cell->status;
      } else {
        if (cell->speedup)
          row.e2e = SpeedupBar{*cell->speedup, cell->speedup_ci_low, cell->speedup_ci_high,
                               cell->unstable};
        if (cell->op_speedup)
          row.op = SpeedupBar{*cell->op_speedup, std::nullopt, std::nullopt, false};
        if (!row.e2e && !row.op) row.failure = "no speedup measured";
      }
      rows.push_back(std::move(row));
    }
    // Fastest first; models without an end-to-end speedup after them, by name.
    std::stable_sort(rows.begin(), rows.end(),
                     [](const SpeedupChartRow& a, const SpeedupChartRow& b) {
                       double x = a.e2e ? a.e2e->value : -1, y = b.e2e ? b.e2e->value : -1;
                       return x > y;
                     });
    const std::string& label = joined.performance_series[s].label;
    out += fmt::format(
        "<figure data-series=\"{}\"><figcaption>{} \u2014 {} models, sorted by E2E "
        "speedup {}</figcaption>\n{}</figure>\n",
        escape_html(label), escape_html(label), rows.size(),
        escape_html(speedup_baseline(joined.performance_series[s])),
        speedup_chart_svg(rows, label));
  }
  return out;
}

// The models table's header: index, name, each accuracy column's status and margin, the timing
// columns (timing_columns.h), then each series' compile time, memory ratio and baseline ratio.
std::vector<Column> models_table_columns(const JoinedResults& joined, const ReportOptions& options,
                                         const std::vector<TimingColumn>& timings) {
  std::vector<Column> columns = {{"index", true}, {"model_name", false}};
  for (const auto& column : joined.accuracy_columns) {
    columns.push_back({column.header(), false});
    columns.push_back({column.label.empty() ? "margin" : column.label + "_margin", true});
  }
  for (const auto& timing : timings) {
    columns.push_back({timing.header, true,
                       timing.role == TimingRole::kSpeedup
                           ? speedup_baseline(joined.performance_series[timing.series])
                           : ""});
  }
  for (const auto& series : joined.performance_series) {
    columns.push_back({series.label + "_compile_s", true});
    columns.push_back({series.label + "_memory_ratio", true});
    if (options.baseline) columns.push_back({series.label + "_E2E_vs_baseline", true});
  }
  return columns;
}

// Each accuracy column's status (marked when it regressed) and margin, with its bar.
std::string accuracy_cells(const JoinedModel& model, const ModelChange* change) {
  std::string out;
  for (std::size_t c = 0; c < model.accuracy.size(); ++c) {
    out += status_cell(model.accuracy[c], change ? change->accuracy[c] : std::nullopt);
    std::optional<double> margin = model.accuracy[c] ? model.accuracy[c]->margin : std::nullopt;
    std::string text = format_margin(margin);
    if (margin) text += margin_svg(*margin);
    out +=
        fmt::format("<td class=\"num margin\" data-sort=\"{}\">{}</td>", number_sort(margin), text);
  }
  return out;
}

// A time, or a speedup (E2E ones with their interval and the unstable mark).
std::string timing_td(const JoinedResults& joined, const JoinedModel& model,
                      const TimingColumn& column) {
  std::optional<double> value = timing_value(joined, model, column);
  if (column.role != TimingRole::kSpeedup)
    return td_number(format_timing(column, value, ""), value);
  const auto& cell = timing_cell(model, column);
  if (!cell || !column.metric->has_interval) {
    return speedup_cell(value, std::nullopt, std::nullopt, "");
  }
  return speedup_cell(value, cell->speedup_ci_low, cell->speedup_ci_high,
                      cell->unstable ? joined.unstable_threshold : "");
}

// The E2E speedup now / in the baseline, with why it counts as a regression in its title.
std::string baseline_ratio_td(const std::optional<SpeedupChange>& speedup) {
  if (!speedup) return td_number("-", std::nullopt);
  std::string text = speedup->ratio ? format_ratio(speedup->ratio, "\u00d7") : "failed";
  std::string title = speedup->why.empty() ? "" : escape_html(speedup->why);
  return fmt::format("<td class=\"num{}\" data-sort=\"{}\" title=\"{}\">{}</td>",
                     speedup->regressed ? " regressed" : "", number_sort(speedup->ratio), title,
                     text);
}

// Each series' compile latency, memory ratio and, given a baseline, its E2E ratio.
std::string series_cells(const JoinedModel& model, const ModelChange* change) {
  std::string out;
  for (std::size_t s = 0; s < model.performance.size(); ++s) {
    const auto& cell = model.performance[s];
    std::optional<double> compile = cell ? cell->compilation_latency_s : std::nullopt;
    std::optional<double> compression = cell ? cell->compression_ratio : std::nullopt;
    out += td_number(compile ? fmt::format("{:.2f}", *compile) : "-", compile);
    out += td_number(format_ratio(compression, "\u00d7"), compression);
    if (change) out += baseline_ratio_td(change->e2e[s]);
  }
  return out;
}

std::string models_table(const JoinedResults& joined, const ReportOptions& options) {
  std::vector<TimingColumn> timings = timing_columns(joined);
  std::string out =
      "<div class=\"table-wrap\"><table class=\"sortable\" id=\"models\">\n<thead><tr>";
  for (const auto& column : models_table_columns(joined, options, timings)) {
    out += header_cell(column);
  }
  out += "</tr></thead>\n<tbody>\n";
  for (std::size_t m = 0; m < joined.models.size(); ++m) {
    const JoinedModel& model = joined.models[m];
    const ModelChange* change = options.baseline ? &options.baseline->models[m] : nullptr;
    std::string name = escape_html(model.name);
    out += fmt::format("<tr data-model=\"{}\"{}>", name,
                       change && change->regressed() ? " class=\"regressed\"" : "");
    out += td_number(std::to_string(m + 1), static_cast<double>(m + 1));
    out += "<td class=\"model\">" + name + "</td>";
    out += accuracy_cells(model, change);
    for (const auto& column : timings) out += timing_td(joined, model, column);
    out += series_cells(model, change) + "</tr>\n";
  }
  return out + "</tbody></table></div>\n";
}

std::string failures_table(const JoinedResults& joined) {
  std::string rows;
  auto add = [&](const std::string& model, const std::string& where, const std::string& status,
                 const std::string& reason) {
    rows += fmt::format(
        "<tr data-model=\"{0}\"><td>{0}</td><td>{1}</td><td class=\"status status-{2}\" "
        "data-status=\"{3}\">{3}</td><td class=\"reason\">{4}</td></tr>\n",
        escape_html(model), escape_html(where), css_token(status), escape_html(status),
        escape_html(reason));
  };
  for (const auto& model : joined.models) {
    for (std::size_t c = 0; c < model.accuracy.size(); ++c) {
      const auto& cell = model.accuracy[c];
      if (cell && !cell->passed() && cell->status != "skipped") {
        add(model.name, joined.accuracy_columns[c].header(), cell->status, cell->reason);
      }
    }
    for (std::size_t s = 0; s < model.performance.size(); ++s) {
      const auto& cell = model.performance[s];
      if (cell && !cell->passed() && cell->status != "skipped") {
        add(model.name, joined.performance_series[s].label + " performance", cell->status,
            cell->reason);
      }
    }
  }
  if (rows.empty()) return "<p class=\"muted\">None.</p>\n";
  return "<div class=\"table-wrap\"><table class=\"failures\"><thead><tr><th>model_name</th>"
         "<th>where</th><th>status</th><th>reason</th></tr></thead><tbody>\n" +
         rows + "</tbody></table></div>\n";
}

std::string regressions_list(const JoinedResults& joined, const BaselineComparison& comparison) {
  std::string items;
  for (const auto& change : comparison.models) {
    std::vector<std::string> what;
    for (std::size_t c = 0; c < change.accuracy.size(); ++c) {
      const auto& accuracy = change.accuracy[c];
      if (accuracy && accuracy->regressed) {
        what.push_back(
            escape_html(fmt::format("{} {} \u2192 {}", joined.accuracy_columns[c].header(),
                                    accuracy->before, accuracy->after)));
      }
    }
    for (std::size_t s = 0; s < change.e2e.size(); ++s) {
      for (const auto* speedup : {&change.e2e[s], &change.op[s]}) {
        if (!*speedup || !(*speedup)->regressed) continue;
        what.push_back(escape_html(
            fmt::format("{} {} speedup {} {} \u2192 {} ({})", joined.performance_series[s].label,
                        speedup == &change.e2e[s] ? "E2E" : "OP",
                        speedup_baseline(joined.performance_series[s]),
                        format_speedup((*speedup)->before, {}, {}, "\u00d7"),
                        format_speedup((*speedup)->after, {}, {}, "\u00d7"), (*speedup)->why)));
      }
    }
    if (!what.empty()) {
      items += fmt::format("<li data-model=\"{0}\"><strong>{0}</strong>: {1}</li>\n",
                           escape_html(change.name), join(what, "; "));
    }
  }
  if (items.empty()) return "<p class=\"muted\">None.</p>\n";
  return "<ul class=\"regressions\">\n" + items + "</ul>\n";
}

// The latency matrices (latency_matrix.h): models x backends, the fastest marked per model.
// Hooks: <table class="matrix">, cells <td data-backend=... data-fastest="1">.
// The markdown legend's lines as a list (its **bold** marks as bold).
std::string html_legend(const JoinedResults& joined) {
  std::string out = "<ul class=\"muted\">\n";
  for (const auto& line :
       split(latency_matrix_legend(any_compares_with_torch_compile(joined)), '\n')) {
    std::string item = escape_html(line.rfind("- ", 0) == 0 ? line.substr(2) : line);
    const auto bold = item.find("**bold**");
    if (bold != std::string::npos) item.replace(bold, 8, "<b>bold</b>");
    out += "<li>" + item + "</li>\n";
  }
  return out + "</ul>\n";
}

std::string latency_matrices(const JoinedResults& joined) {
  std::string out;
  for (const auto& matrix : joined.latency_matrices) {
    const bool compare = matrix.compares_with_torch_compile();
    out += "<h3>" + escape_html(matrix.title()) +
           "</h3>\n<div class=\"table-wrap\"><table class=\"matrix\"><thead><tr><th>model</th>";
    for (const auto& backend : matrix.backends) out += "<th>" + escape_html(backend) + "</th>";
    out += compare ? "<th>zoobench/torch.compile</th><th>per eager</th><th>kernels</th></tr>"
                     "</thead><tbody>\n"
                   : "</tr></thead><tbody>\n";
    for (const auto& row : matrix.rows) {
      out += "<tr data-model=\"" + escape_html(row.model) + "\"><td>" + escape_html(row.model) +
             "</td>";
      for (std::size_t b = 0; b < matrix.backends.size(); ++b) {
        const MatrixCell& cell = row.cells[b];
        const bool fastest = row.fastest == b;
        std::string text = cell.latency_ms ? format_ms(cell.latency_ms)
                                           : (cell.status.empty() ? "-" : cell.status);
        if (cell.unstable) text += "\u2020";
        if (cell.accuracy_failed()) text += " \u2717";
        // The marks (unstable, accuracy failed) follow the number: sorting reads data-sort.
        const std::string sort_key =
            cell.latency_ms ? fmt::format(" data-sort=\"{}\"", *cell.latency_ms) : "";
        out += fmt::format(
            "<td class=\"num{}\" data-backend=\"{}\"{}{}>{}</td>", fastest ? " fastest" : "",
            escape_html(matrix.backends[b]), fastest ? " data-fastest=\"1\"" : "", sort_key,
            fastest ? "<strong>" + escape_html(text) + "</strong>" : escape_html(text));
      }
      if (compare) {
        for (const auto& ratio :
             {row.zoobench_vs_torch_compile, row.zoobench_vs_torch_compile_per_eager,
              row.zoobench_vs_torch_compile_kernels})
          out += "<td class=\"num\">" + escape_html(format_ratio(ratio, "\u00d7")) + "</td>";
      }
      out += "</tr>\n";
    }
    if (compare) {
      out += "<tr class=\"geomean\"><td>geomean vs torch.compile</td>";
      for (const auto& value : matrix.geomean_vs_torch_compile) {
        out += "<td class=\"num\">" + escape_html(format_ratio(value, "\u00d7")) + "</td>";
      }
      for (const auto& ratio : {matrix.geomean_zoobench_vs_torch_compile,
                                matrix.geomean_zoobench_vs_torch_compile_per_eager,
                                matrix.geomean_zoobench_vs_torch_compile_kernels})
        out += "<td class=\"num\">" + escape_html(format_ratio(ratio, "\u00d7")) + "</td>";
      out += "</tr>\n";
    }
    out += "</tbody></table></div>\n";
    if (compare) {
      out += "<p class=\"muted\">" + escape_html(matrix.comparison_sentence()) + "</p>\n";
    }
  }
  return out;
}

std::string code_list(const std::vector<std::string>& paths) {
  std::vector<std::string> items;
  for (const auto& path : paths) items.push_back("<code>" + escape_html(path) + "</code>");
  return join(items, ", ");
}

}  // namespace

std::string render_html(const JoinedResults& joined, const ReportOptions& options) {
  ReportSummary summary = summarize(joined);
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n<main>\n<header>\n<h1>{}</h1>\n"
      "<p class=\"meta\">{}</p>\n",
      escape_html(options.title), kStyle, escape_html(options.title),
      escape_html(describe_run(joined)));
  if (!options.sources.empty())
    out += "<p class=\"sources\">Sources: " + code_list(options.sources) + "</p>\n";
  if (!options.baseline_sources.empty()) {
    out += "<p class=\"sources\">Baseline: " + code_list(options.baseline_sources) + "</p>\n";
  }
  out += "</header>\n" + cards(joined, summary, options);
  if (!joined.performance_series.empty()) {
    out +=
        "<section id=\"speedups\">\n<h2>Speedup per model</h2>\n" + charts(joined) + "</section>\n";
  }
  out +=
      "<section id=\"results\">\n<h2>Models</h2>\n<p class=\"muted\">Times in ms per iteration "
      "(E2E: end to end; OP: device kernel time); speedups are eager / compiled with the 95% "
      "confidence interval below, their digits as many as the interval allows (two where it is "
      "wider than \u00b15%, else three), the eager each is measured against under its column's "
      "name; margin is the worst tensor's error / allowed error (below 1 passes). Click a column "
      "to sort.</p>\n";
  if (!joined.performance_series.empty())
    out += "<p class=\"muted\">" + escape_html(speedup_baselines_sentence(joined)) + "</p>\n";
  out += models_table(joined, options) + "</section>\n";
  if (!joined.latency_matrices.empty()) {
    out += "<section id=\"matrix\">\n<h2>Latency matrix</h2>\n" + html_legend(joined) +
           latency_matrices(joined) + "</section>\n";
  }
  out += "<section id=\"failures\">\n<h2>Failures</h2>\n" + failures_table(joined) + "</section>\n";
  if (options.baseline) {
    out += "<section id=\"regressions\">\n<h2>Regressions vs baseline</h2>\n" +
           regressions_list(joined, *options.baseline) + "</section>\n";
  }
  if (!joined.warnings.empty()) {
    out += "<section id=\"notes\">\n<h2>Notes</h2>\n<ul>\n";
    for (const auto& warning : joined.warnings) out += "<li>" + escape_html(warning) + "</li>\n";
    out += "</ul>\n</section>\n";
  }
  out += "<footer><p>" + escape_html(unstable_footnote(joined)) + "</p>" +
         (joined.performance_series.empty() ? "" : "<p>" + escape_html(kGeomeanBandNote) + "</p>") +
         "<p>Generated by zoobench report.</p></footer>\n</main>\n<script>" + kScript +
         "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace zoobench::report
