// The markdown report: the Ascend suite's table (index, model_name, accuracy per device,
// eager_E2E, <backend>_E2E, E2E_speed_up_rate, eager_OP, <backend>_OP, OP_speed_up_rate), a
// summary line, the failures with their reasons and, given a baseline, the change per model.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "zoobench/report/baseline.h"
#include "zoobench/report/joined_results.h"
#include "zoobench/report/summary.h"
#include "zoobench/report/timing_columns.h"
#include "zoobench/results/rows.h"

namespace zoobench::report {

struct ReportOptions {
  std::string title = "zoobench report";
  std::vector<std::string> sources;            // the result files, listed under the title
  std::optional<BaselineComparison> baseline;  // compare_with_baseline(current, baseline)
  std::vector<std::string> baseline_sources;
  std::string html_link;  // the HTML report, relative to the markdown file ("": none written)
};

// The whole document: title, run description and sources; the summary; the latency matrix; one
// compact table per backend (the wide Ascend table is in the CSV and the HTML report); failures;
// baseline sections.
std::string render_markdown(const JoinedResults& joined, const ReportOptions& options = {});

// What `zoobench run --accuracy --performance` prints at the end: the table, the summary line,
// the unstable footnote and the failures of this run's rows, without a document title.
std::string format_ascend_table(const std::vector<ResultRow>& rows);

// A plain table of text cells (escaped, left-aligned, padded), for summaries other commands print.
std::string markdown_table(const std::vector<std::string>& headers,
                           const std::vector<std::vector<std::string>>& rows);

// One compact table per backend (model, accuracy, eager and compiled ms, speedup with its
// interval, kernel speedup), each under its own heading; an accuracy-only run gets one table.
std::string markdown_backend_tables(const JoinedResults& joined);

// What a run with several backends prints at the end: the latency matrix of its rows.
std::string format_latency_matrix(const std::vector<ResultRow>& rows);

// The pieces, for the run-end table and for tests.
// One table per matrix, with its title as a heading line ("" when there is none).
std::string markdown_latency_matrices(const JoinedResults& joined);
std::string markdown_results_table(const JoinedResults& joined);
std::string markdown_summary_line(const JoinedResults& joined, const ReportSummary& summary);
std::string markdown_failures_table(const JoinedResults& joined);  // "" when nothing failed

// How to read a latency matrix: one "- " line per mark or column that needs one (the ratio
// columns only where zoobench's backends are compared with torch.compile's).
bool any_compares_with_torch_compile(const JoinedResults& joined);
std::string latency_matrix_legend(bool compares_with_torch_compile);

// What a geomean speedup's band is (summary.h's geomean_band), and its mark, for under the
// geomeans of both reports.
inline constexpr const char* kGeomeanBandNote =
    "band: the geomean of the models' 95% interval ends (where every model has one): the "
    "geomean's interval were every model's error to go the same way, so never narrower than "
    "its own; \u2020 on a geomean: a model in it is unstable.";

// What marks an unstable measurement, and the footnote that explains it.
inline constexpr const char* kUnstableMark = "\u2020";
std::string unstable_footnote(const JoinedResults& joined);

}  // namespace zoobench::report
