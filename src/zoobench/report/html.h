// The HTML report: one self-contained file (inline CSS, inline SVG charts, a few lines of inline
// script; nothing fetched) with summary cards, speedup charts per backend, accuracy status per
// model and device, the accuracy margin, failures, the change against a baseline and a
// sortable table. Every text from the results is escaped.
//
// Hooks for tests and tools: bars are <rect class="bar e2e|op" data-model=...>, status cells
// <td class="status status-<status>" data-status="<status>">, table rows <tr data-model=...>,
// sortable headers <th data-key="<markdown column name>">. Opening the file with
// #sort=<key>[&order=desc] sorts the table by that column.
#pragma once

#include <string>

#include "zoobench/report/joined_results.h"
#include "zoobench/report/markdown.h"

namespace zoobench::report {

std::string render_html(const JoinedResults& joined, const ReportOptions& options = {});

}  // namespace zoobench::report
