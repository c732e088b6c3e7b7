// Markdown rendering of the joined results.
#include "zoobench/report/markdown.h"

#include <fmt/format.h>

#include <algorithm>

#include "zoobench/report/number_format.h"
#include "zoobench/util/characters.h"
#include "zoobench/util/text.h"

namespace zoobench::report {
namespace {

// Columns as wide as their widest cell, so the table also reads as plain text in a terminal.
std::string escape_cell(const std::string& text);

struct MarkdownTable {
  std::vector<std::string> headers;
  std::vector<bool> numeric;  // right-aligned
  std::vector<std::vector<std::string>> rows;

  // Headers carry backends and references read from the rows: escaped as cells are.
  void add_column(const std::string& header, bool is_numeric) {
    headers.push_back(escape_cell(header));
    numeric.push_back(is_numeric);
  }
  std::string render() const;
};

// Display width: UTF-8 continuation bytes take no column (the † and → marks).
std::size_t display_width(const std::string& text) {
  std::size_t width = 0;
  for (unsigned char c : text) width += (c & 0xC0) != 0x80 ? 1 : 0;
  return width;
}

// A cell's text as literal text: model names and reasons come from files people exchange, so
// `<script>`, `<img onerror=...>` and `[x](javascript:...)` must not become HTML or links in a
// viewer (backslash escapes are CommonMark's), and control characters (terminal escapes) go.
std::string escape_cell(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    // `](` is what makes an inline link; a lone bracket (output[0]) stays as it reads.
    const bool link_paren = c == '(' && i > 0 && text[i - 1] == ']';
    if (c == '|' || c == '<' || c == '>' || c == '&' || c == '`' || link_paren) {
      out += '\\';
      out += c;
    } else if (is_control_character(c)) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string MarkdownTable::render() const {
  std::vector<std::size_t> widths(headers.size(), 3);
  auto measure = [&](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], display_width(cells[i]));
    }
  };
  measure(headers);
  for (const auto& row : rows) measure(row);
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out = "|";
    for (std::size_t i = 0; i < widths.size(); ++i) {
      const std::string cell = i < cells.size() ? cells[i] : "";
      std::string padding(widths[i] - display_width(cell), ' ');
      out += " " + (numeric[i] ? padding + cell : cell + padding) + " |";
    }
    return out + "\n";
  };
  std::string out = line(headers);
  out += "|";
  for (std::size_t i = 0; i < widths.size(); ++i) {
    out += numeric[i] ? " " + std::string(widths[i] - 1, '-') + ": |"
                      : " " + std::string(widths[i], '-') + " |";
  }
  out += "\n";
  for (const auto& row : rows) out += line(row);
  return out;
}

bool any_unstable(const JoinedResults& joined) {
  for (const auto& model : joined.models) {
    for (const auto& cell : model.performance) {
      if (cell && cell->unstable) return true;
    }
  }
  return false;
}

std::string code_list(const std::vector<std::string>& items) {
  std::vector<std::string> quoted;
  for (const auto& item : items) quoted.push_back("`" + item + "`");
  return join(quoted, ", ");
}

std::string status_change(const AccuracyChange& change) {
  if (change.before == change.after) return change.after;
  return change.before + " \u2192 " + change.after;
}

std::string baseline_section(const JoinedResults& joined, const ReportOptions& options) {
  const BaselineComparison& comparison = *options.baseline;
  std::string out = "## Compared with baseline\n\n";
  if (!options.baseline_sources.empty()) {
    out += "Baseline: " + code_list(options.baseline_sources) + ". ";
  }
  out += fmt::format(
      "Speedup ratios are now / baseline. A regression is a pass that now fails, a performance "
      "run that now fails, or a speedup more than {:.0f}% lower (outside both confidence "
      "intervals where they are known).\n\n",
      comparison.threshold * 100.0);

  MarkdownTable table;
  table.add_column("model_name", false);
  for (const auto& column : joined.accuracy_columns) table.add_column(column.header(), false);
  for (const auto& series : joined.performance_series) {
    table.add_column(series.label + "_E2E_vs_baseline", true);
    table.add_column(series.label + "_OP_vs_baseline", true);
  }
  table.add_column("verdict", false);
  std::vector<std::string> regressions;
  for (const auto& change : comparison.models) {
    std::vector<std::string> row = {escape_cell(change.name)};
    std::vector<std::string> what_regressed;
    bool any = false;
    for (std::size_t c = 0; c < change.accuracy.size(); ++c) {
      const auto& accuracy = change.accuracy[c];
      any = any || accuracy.has_value();
      row.push_back(accuracy ? status_change(*accuracy) : "-");
      if (accuracy && accuracy->regressed) {
        what_regressed.push_back(joined.accuracy_columns[c].header() + " " +
                                 status_change(*accuracy));
      }
    }
    for (std::size_t s = 0; s < change.e2e.size(); ++s) {
      for (const auto* speedup : {&change.e2e[s], &change.op[s]}) {
        any = any || speedup->has_value();
        std::string text = *speedup ? format_ratio((*speedup)->ratio) : "-";
        if (*speedup && (*speedup)->regressed) {
          text = "**" + (text == "-" ? std::string("failed") : text) + "**";
          const char* metric = speedup == &change.e2e[s] ? "E2E" : "OP";
          what_regressed.push_back(fmt::format(
              "{} {} speedup {} {} \u2192 {} ({})", joined.performance_series[s].label, metric,
              speedup_baseline(joined.performance_series[s]), format_speedup((*speedup)->before),
              format_speedup((*speedup)->after), (*speedup)->why));
        }
        row.push_back(text);
      }
    }
    if (!any) continue;
    row.push_back(change.regressed() ? "regressed" : change.improved() ? "improved" : "");
    table.rows.push_back(row);
    if (!what_regressed.empty()) {
      regressions.push_back("- **" + escape_cell(change.name) +
                            "**: " + escape_cell(join(what_regressed, "; ")));
    }
  }
  out += table.rows.empty() ? "No model of this run is in the baseline.\n" : table.render();
  out += "\n## Regressions\n\n";
  out += regressions.empty() ? "None.\n" : join(regressions, "\n") + "\n";
  return out;
}

}  // namespace

std::string unstable_footnote(const JoinedResults& joined) {
  return std::string(kUnstableMark) +
         " unstable: the spread of the eager or compiled samples (1.4826 MAD / median) exceeded " +
         joined.unstable_threshold + "; the speedup may not reproduce.";
}

std::string markdown_results_table(const JoinedResults& joined) {
  MarkdownTable table;
  table.add_column("index", true);
  table.add_column("model_name", false);
  for (const auto& column : joined.accuracy_columns) table.add_column(column.header(), false);
  std::vector<TimingColumn> timings = timing_columns(joined);
  for (const auto& column : timings) table.add_column(column.header, true);
  for (std::size_t m = 0; m < joined.models.size(); ++m) {
    const JoinedModel& model = joined.models[m];
    std::vector<std::string> row = {std::to_string(m + 1), escape_cell(model.name)};
    for (const auto& cell : model.accuracy) row.push_back(cell ? escape_cell(cell->status) : "-");
    for (const auto& column : timings) {
      std::optional<double> value = timing_value(joined, model, column);
      const auto& cell = timing_cell(model, column);
      std::string text = format_timing(column, value, "x", cell);
      if (column.role == TimingRole::kSpeedup && column.metric->has_interval && cell &&
          cell->unstable && value) {
        text += kUnstableMark;
      }
      row.push_back(text);
    }
    table.rows.push_back(std::move(row));
  }
  return table.render();
}

namespace {

// "pass rate 50.0% (1/2)", with each column's count when there are several.
std::string pass_rate_text(const JoinedResults& joined, const ReportSummary& summary) {
  std::string pass = "pass rate ";
  auto fraction = summary.overall.fraction();
  pass += fraction ? format_percent(*fraction) : "-";
  pass += fmt::format(" ({}/{}", summary.overall.passed, summary.overall.total);
  if (joined.accuracy_columns.size() > 1) {
    for (std::size_t c = 0; c < joined.accuracy_columns.size(); ++c) {
      pass += fmt::format("{} {} {}/{}", c == 0 ? ";" : ",", joined.accuracy_columns[c].label,
                          summary.per_column[c].passed, summary.per_column[c].total);
    }
  }
  return pass + ")";
}

}  // namespace

namespace {

// A geomean speedup with the digits its band allows, the band, and the unstable mark where a
// model in it was unstable: "1.0x† [0.80x, 1.3x]".
std::string geomean_speedup_text(const SeriesSummary& series) {
  if (!series.geomean_speedup) return "-";
  std::string text = format_speedup(series.geomean_speedup);
  if (const auto& band = series.geomean_speedup_band) {
    text = format_speedup(series.geomean_speedup, band->low, band->high);
    if (series.geomean_unstable) text += kUnstableMark;
    return text + " [" +
           format_speedup_interval(series.geomean_speedup, band->low, band->high, "x", ", ") + "]";
  }
  return series.geomean_unstable ? text + kUnstableMark : text;
}

}  // namespace

std::string markdown_summary_line(const JoinedResults& joined, const ReportSummary& summary) {
  std::vector<std::string> parts;
  if (!joined.accuracy_columns.empty()) parts.push_back(pass_rate_text(joined, summary));
  auto geomean = [](const std::string& what, const std::string& text, int models,
                    const std::string& baseline) {
    if (text == "-") return fmt::format("geomean {} -", what);
    return fmt::format("geomean {} {} over {} model{} {}", what, text, models,
                       models == 1 ? "" : "s", baseline);
  };
  for (std::size_t s = 0; s < joined.performance_series.size(); ++s) {
    const SeriesSummary& series = summary.per_series[s];
    const PerformanceSeries& which = joined.performance_series[s];
    const std::string baseline = speedup_baseline(which);
    parts.push_back(geomean(speedup_column(joined, which, "E2E"), geomean_speedup_text(series),
                            series.models_with_speedup, baseline));
    parts.push_back(geomean(speedup_column(joined, which, "OP"),
                            format_speedup(series.geomean_op_speedup),
                            series.models_with_op_speedup, baseline));
  }
  if (parts.empty()) return "Summary: no results.";
  return "Summary: " + join(parts, " · ");
}

std::string markdown_table(const std::vector<std::string>& headers,
                           const std::vector<std::vector<std::string>>& rows) {
  MarkdownTable table;
  for (const auto& header : headers) table.add_column(header, false);
  for (const auto& row : rows) {
    std::vector<std::string> escaped;
    for (const auto& text : row) escaped.push_back(escape_cell(text));
    table.rows.push_back(std::move(escaped));
  }
  return table.render();
}

std::string markdown_failures_table(const JoinedResults& joined) {
  MarkdownTable table;
  for (const char* header : {"model_name", "where", "status", "reason"})
    table.add_column(header, false);
  for (const auto& model : joined.models) {
    for (std::size_t c = 0; c < model.accuracy.size(); ++c) {
      const auto& cell = model.accuracy[c];
      if (!cell || cell->passed() || cell->status == "skipped") continue;
      table.rows.push_back({escape_cell(model.name), joined.accuracy_columns[c].header(),
                            escape_cell(cell->status), escape_cell(cell->reason)});
    }
    for (std::size_t s = 0; s < model.performance.size(); ++s) {
      const auto& cell = model.performance[s];
      if (!cell || cell->passed() || cell->status == "skipped") continue;
      table.rows.push_back({escape_cell(model.name),
                            joined.performance_series[s].label + " performance",
                            escape_cell(cell->status), escape_cell(cell->reason)});
    }
  }
  return table.rows.empty() ? "" : table.render();
}

namespace {

std::string matrix_cell(const MatrixCell& cell, bool fastest) {
  if (!cell.latency_ms) return cell.status.empty() ? "-" : cell.status;
  std::string text = format_ms(cell.latency_ms);
  if (fastest) text = "**" + text + "**";
  if (cell.unstable) text += "\u2020";
  if (cell.accuracy_failed()) text += " \u2717";
  return text;
}

std::string markdown_latency_matrix(const LatencyMatrix& matrix) {
  MarkdownTable table;
  table.add_column("model", false);
  for (const auto& backend : matrix.backends) table.add_column(backend, true);
  table.add_column("fastest", false);
  const bool compare = matrix.compares_with_torch_compile();
  if (compare) {
    table.add_column("zoobench/torch.compile", true);
    table.add_column("per eager", true);
    table.add_column("kernels", true);
  }
  for (const auto& row : matrix.rows) {
    std::vector<std::string> cells = {escape_cell(row.model)};
    for (std::size_t b = 0; b < matrix.backends.size(); ++b) {
      cells.push_back(escape_cell(matrix_cell(row.cells[b], row.fastest == b)));
    }
    cells.push_back(row.fastest ? matrix.backends[*row.fastest] : "-");
    if (compare) {
      cells.push_back(format_ratio(row.zoobench_vs_torch_compile));
      cells.push_back(format_ratio(row.zoobench_vs_torch_compile_per_eager));
      cells.push_back(format_ratio(row.zoobench_vs_torch_compile_kernels));
    }
    table.rows.push_back(std::move(cells));
  }
  if (compare) {
    std::vector<std::string> cells = {"geomean vs torch.compile"};
    for (const auto& value : matrix.geomean_vs_torch_compile) cells.push_back(format_ratio(value));
    cells.push_back("");
    cells.push_back(format_ratio(matrix.geomean_zoobench_vs_torch_compile));
    cells.push_back(format_ratio(matrix.geomean_zoobench_vs_torch_compile_per_eager));
    cells.push_back(format_ratio(matrix.geomean_zoobench_vs_torch_compile_kernels));
    table.rows.push_back(std::move(cells));
  }
  std::string out = table.render();
  if (compare) out += "\n" + matrix.comparison_sentence() + "\n";
  return out;
}

}  // namespace

std::string markdown_latency_matrices(const JoinedResults& joined) {
  std::string out;
  for (const auto& matrix : joined.latency_matrices) {
    if (!out.empty()) out += "\n";
    out += "### " + matrix.title() + "\n\n" + markdown_latency_matrix(matrix);
  }
  return out;
}

std::string format_latency_matrix(const std::vector<ResultRow>& rows) {
  JoinedResults joined = join_results(rows);
  std::string out = markdown_latency_matrices(joined);
  if (!out.empty())
    out += "\n" + latency_matrix_legend(any_compares_with_torch_compile(joined)) + "\n";
  std::string failures = markdown_failures_table(joined);
  if (!failures.empty()) out += "\nFailures:\n\n" + failures;
  return out;
}

bool any_compares_with_torch_compile(const JoinedResults& joined) {
  return std::any_of(joined.latency_matrices.begin(), joined.latency_matrices.end(),
                     [](const LatencyMatrix& m) { return m.compares_with_torch_compile(); });
}

std::string latency_matrix_legend(bool compares_with_torch_compile) {
  std::string out =
      "- latency: ms per iteration, the compiled side's median; **bold**: the fastest backend "
      "whose accuracy did not fail\n"
      "- \u2020: unstable (its samples' spread, 1.4826 MAD / median, exceeded the row's "
      "threshold); \u2717: its accuracy check failed";
  if (!compares_with_torch_compile) return out;
  return out +
         "\n- zoobench/torch.compile: zoobench's fastest / torch.compile's fastest (below 1: "
         "zoobench is faster)\n"
         "- per eager: the same ratio, each latency over the eager reference timed in its own "
         "process\n"
         "- kernels: the same ratio of device kernel time (near 1 with a latency ratio below 1: "
         "the lead is host time)";
}

namespace {

std::string speedup_text(const PerformanceCell& cell) {
  if (!cell.speedup) return cell.passed() ? "-" : escape_cell(cell.status);
  return format_speedup(cell.speedup, cell.speedup_ci_low, cell.speedup_ci_high) +
         (cell.unstable ? kUnstableMark : "");
}

std::string interval_text(const PerformanceCell& cell) {
  return format_speedup_interval(cell.speedup, cell.speedup_ci_low, cell.speedup_ci_high);
}

// One backend's rows: accuracy, both latencies, the speedup with its interval, kernel speedup.
std::string markdown_backend_table(const JoinedResults& joined, std::size_t s) {
  // The accuracy column of the same device, mode, dtype and backend, if the run checked it.
  const int accuracy = find_key(joined.accuracy_columns, joined.performance_series[s].key);
  const bool kernels = std::any_of(joined.models.begin(), joined.models.end(), [&](const auto& m) {
    return m.performance[s] && m.performance[s]->op_speedup;
  });
  MarkdownTable table;
  table.add_column("model", false);
  if (accuracy >= 0) table.add_column("accuracy", false);
  table.add_column("eager ms", true);
  table.add_column("ms", true);
  table.add_column("speedup " + speedup_baseline(joined.performance_series[s]), true);
  table.add_column("95% interval", true);
  if (kernels) table.add_column("kernels", true);
  for (const auto& model : joined.models) {
    const auto& cell = model.performance[s];
    const auto* checked = accuracy >= 0 ? &model.accuracy[accuracy] : nullptr;
    if (!cell && !(checked && *checked)) continue;
    std::vector<std::string> row = {escape_cell(model.name)};
    if (checked) row.push_back(*checked ? escape_cell((*checked)->status) : "-");
    row.push_back(cell ? format_ms(cell->eager_ms) : "-");
    row.push_back(cell ? format_ms(cell->compiled_ms) : "-");
    row.push_back(cell ? speedup_text(*cell) : "-");
    row.push_back(cell ? interval_text(*cell) : "-");
    if (kernels) row.push_back(cell ? format_speedup(cell->op_speedup) : "-");
    table.rows.push_back(std::move(row));
  }
  return table.render();
}

}  // namespace

std::string markdown_backend_tables(const JoinedResults& joined) {
  if (joined.performance_series.empty()) {
    // Accuracy only: one narrow table, a column per device and backend.
    return joined.accuracy_columns.empty() ? ""
                                           : "\n## Accuracy\n\n" + markdown_results_table(joined);
  }
  std::string out;
  for (std::size_t s = 0; s < joined.performance_series.size(); ++s) {
    out += "\n## " + escape_cell(joined.performance_series[s].label) + "\n\n" +
           markdown_backend_table(joined, s);
  }
  return out +
         "\nms: per iteration, medians; speedup: eager / compiled, with the 95% bootstrap "
         "interval over paired samples, its digits as many as the interval allows (two where it "
         "is wider than \u00b15%, else three); the eager it is measured against is in its title "
         "(Python eager: the model's Python module; TorchScript eager: eval.pt in the "
         "TorchScript interpreter); kernels: the same ratio of device kernel time.\n";
}

std::string format_ascend_table(const std::vector<ResultRow>& rows) {
  JoinedResults joined = join_results(rows);
  std::string out = markdown_results_table(joined);
  // The lines under the table carry labels, thresholds and references read from the rows:
  // escaped as the cells are.
  out += "\n" + escape_cell(markdown_summary_line(joined, summarize(joined))) + "\n";
  if (!joined.performance_series.empty())
    out += "\n" + escape_cell(speedup_baselines_sentence(joined)) + "\n";
  if (any_unstable(joined)) out += "\n" + escape_cell(unstable_footnote(joined)) + "\n";
  std::string failures = markdown_failures_table(joined);
  if (!failures.empty()) out += "\nFailures:\n\n" + failures;
  return out;
}

namespace {

// The sources under the title: one inline, several as a list (a run has one file per backend).
std::string sources_block(const std::vector<std::string>& sources) {
  if (sources.empty()) return "";
  if (sources.size() == 1) return "\nSource: `" + sources[0] + "`\n";
  std::string out = "\nSources:\n\n";
  for (const auto& source : sources) out += "- `" + source + "`\n";
  return out;
}

// Each backend's geomean speedups over the models that have them, and its unstable rows.
std::string series_summary_table(const JoinedResults& joined, const ReportSummary& summary) {
  const bool kernels = std::any_of(summary.per_series.begin(), summary.per_series.end(),
                                   [](const SeriesSummary& s) { return s.geomean_op_speedup; });
  MarkdownTable table;
  table.add_column("backend", false);
  table.add_column("geomean speedup [band]", true);
  table.add_column("against", false);
  if (kernels) table.add_column("kernels", true);
  table.add_column("timed", true);
  table.add_column("unstable", true);
  table.add_column("failed", true);
  for (std::size_t s = 0; s < summary.per_series.size(); ++s) {
    const SeriesSummary& series = summary.per_series[s];
    std::vector<std::string> row = {
        escape_cell(joined.performance_series[s].label), geomean_speedup_text(series),
        escape_cell(eager_reference_name(joined.performance_series[s].eager_reference))};
    if (kernels) row.push_back(format_speedup(series.geomean_op_speedup));
    for (int count : {series.models, series.unstable, series.failed})
      row.push_back(std::to_string(count));
    table.rows.push_back(std::move(row));
  }
  return table.render();
}

// The summary, first: pass rate, each backend's geomean speedups, unstable rows, failures, and
// where the latency matrix compares zoobench with torch.compile, its verdict.
std::string summary_block(const JoinedResults& joined, const ReportOptions& options) {
  const ReportSummary summary = summarize(joined);
  std::string out = "\n## Summary\n\n";
  if (!joined.accuracy_columns.empty()) out += escape_cell(pass_rate_text(joined, summary)) + "\n";
  if (!joined.performance_series.empty()) out += "\n" + series_summary_table(joined, summary);
  if (std::any_of(summary.per_series.begin(), summary.per_series.end(), [](const SeriesSummary& s) {
        return s.geomean_speedup_band || s.geomean_unstable;
      })) {
    out += "\n" + std::string(kGeomeanBandNote) + "\n";
  }
  if (summary.unstable_rows() > 0) {
    out += fmt::format(
        "\n{} of {} timed rows are unstable ({}): the spread of their eager or compiled samples "
        "(1.4826 MAD / median) exceeded {}; their speedups may not reproduce.\n",
        summary.unstable_rows(), summary.timed_rows(), kUnstableMark,
        escape_cell(joined.unstable_threshold));
  }
  for (const auto& matrix : joined.latency_matrices) {
    if (matrix.compares_with_torch_compile())
      out += "\n" + escape_cell(matrix.comparison_sentence()) + "\n";
  }
  if (!options.html_link.empty()) {
    out += "\nThe speedup chart and the full table (every column, sortable): [" +
           escape_cell(options.html_link) + "](" + options.html_link + ")\n";
  }
  return out;
}

}  // namespace

std::string render_markdown(const JoinedResults& joined, const ReportOptions& options) {
  std::string out = "# " + options.title + "\n\n" + escape_cell(describe_run(joined)) + "\n";
  out += sources_block(options.sources);
  out += summary_block(joined, options);
  if (!joined.latency_matrices.empty()) {
    out += "\n## Latency matrix\n\n" +
           latency_matrix_legend(any_compares_with_torch_compile(joined)) + "\n\n" +
           markdown_latency_matrices(joined);
  }
  out += markdown_backend_tables(joined);
  std::string failures = markdown_failures_table(joined);
  out += "\n## Failures\n\n" + (failures.empty() ? std::string("None.\n") : failures);
  if (options.baseline) out += "\n" + baseline_section(joined, options);
  if (!joined.warnings.empty()) {
    out += "\n## Notes\n\n";
    for (const auto& warning : joined.warnings) out += "- " + escape_cell(warning) + "\n";
  }
  return out;
}

}  // namespace zoobench::report
