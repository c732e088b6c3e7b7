// `zoobench report RESULTS... [--markdown FILE] [--html FILE] [--baseline FILE...]`: result files
// from one or more runs joined by model and written as the markdown table (stdout when no
// output is named, or when FILE is `-`) and/or the self-contained HTML report. The
// upstream-format twin of a zoobench file read beside it is left out (report/upstream_twins.h).
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "zoobench/report/baseline.h"
#include "zoobench/report/html.h"
#include "zoobench/report/markdown.h"
#include "zoobench/report/upstream_twins.h"
#include "zoobench/results/result_files.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/files.h"
#include "zoobench/util/log.h"
#include "zoobench/util/output_guard.h"

namespace zoobench::cli {
namespace {

struct ReportArgs {
  std::vector<std::string> results, baseline;
  std::string markdown, html;
  std::string title = "zoobench report";
  double threshold = 0.05;
  bool allow_regressions = false;
};

// `-` names standard output, as for most tools that write a file.
constexpr const char* kStandardOutput = "-";

// The rows of the files `paths` name, each model once (a twin left out); `sources` gets the
// files read.
std::vector<ResultRow> load_rows(const std::vector<std::string>& paths,
                                 std::vector<std::string>& sources) {
  std::vector<ResultRow> rows;
  sources.clear();
  for (auto& file : report::load_results_without_twins(paths, "report")) {
    sources.push_back(file.path);
    rows.insert(rows.end(), file.rows.begin(), file.rows.end());
  }
  return rows;
}

// Where a report went goes to stderr while the other report is on stdout, which it would spoil.
void write_output(const std::string& path, const std::string& contents, const char* what,
                  bool stdout_taken) {
  if (path == kStandardOutput) {
    std::cout << contents << std::flush;
    return;
  }
  std::filesystem::path target(path);
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path());
  write_file_atomically(path, contents);
  (stdout_taken ? std::cerr : std::cout) << what << " report: " << path << "\n";
}

// With --baseline, a regression fails the command (a CI gate), unless --allow-regressions.
int regression_status(const report::ReportOptions& options, bool allow_regressions) {
  if (!options.baseline) return kExitOk;
  const int regressions = options.baseline->regressions();
  if (regressions == 0) return kExitOk;
  std::cerr << "zoobench report: " << regressions << " model(s) regressed against the baseline"
            << (allow_regressions ? " (--allow-regressions: exit 0)" : " (exit 1)") << "\n";
  return allow_regressions ? kExitOk : kExitFailed;
}

int run_report(const ReportArgs& args) {
  if (!(args.threshold > 0 && args.threshold < 1)) {  // NaN too
    throw UsageError(
        "--regression-threshold must be a fraction between 0 and 1 (0.05 = 5% slower)");
  }
  if (args.markdown == kStandardOutput && args.html == kStandardOutput)
    throw UsageError("--markdown - and --html - both name standard output: write one to a file");
  const std::vector<std::string> inputs = expand_result_paths(args.results);
  std::vector<std::string> every_input = inputs;
  for (const auto& path : expand_result_paths(args.baseline)) every_input.push_back(path);
  refuse_output_over_inputs(args.markdown, every_input, "--markdown");
  refuse_output_over_inputs(args.html, every_input, "--html");
  report::ReportOptions options;
  options.title = args.title;
  report::JoinedResults joined = report::join_results(load_rows(inputs, options.sources));
  for (const auto& warning : joined.warnings) log::warn("report: {}", warning);
  if (joined.models.empty()) log::warn("report: the result files hold no rows");
  if (!args.baseline.empty()) {
    report::JoinedResults baseline = report::join_results(
        load_rows(expand_result_paths(args.baseline), options.baseline_sources));
    options.baseline = report::compare_with_baseline(joined, baseline, args.threshold);
  }
  if (!args.markdown.empty() && !args.html.empty() && args.html != kStandardOutput) {
    // The markdown links the HTML report (its chart) by a path that holds where both are read.
    const auto from = std::filesystem::absolute(args.markdown).parent_path();
    options.html_link = std::filesystem::absolute(args.html).lexically_relative(from).string();
  }
  if (args.markdown.empty() && args.html.empty()) {
    std::cout << report::render_markdown(joined, options);
  } else {
    const bool stdout_taken = args.markdown == kStandardOutput || args.html == kStandardOutput;
    if (!args.markdown.empty()) {
      write_output(args.markdown, report::render_markdown(joined, options), "markdown",
                   stdout_taken);
    }
    if (!args.html.empty())
      write_output(args.html, report::render_html(joined, options), "html", stdout_taken);
  }
  return regression_status(options, args.allow_regressions);
}

void setup_report(CLI::App& app, int& exit_status) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* command = app.add_subcommand(
      "report",
      "Accuracy and performance results as the Ascend suite's markdown table and an HTML report");
  command
      ->add_option(
          "results", args->results,
          "accuracy/performance CSV or JSON files (ours or upstream's), or folders of them")
      ->required();
  command->add_option("--markdown", args->markdown,
                      "write the markdown report here (default, or '-': stdout)");
  command->add_option("--html", args->html,
                      "write the self-contained HTML report here ('-': stdout)");
  command
      ->add_option("--baseline", args->baseline,
                   "result files of an earlier run: show the change per model, flag regressions")
      ->expected(1, -1);
  command->add_option(
      "--regression-threshold", args->threshold,
      "a speedup this fraction lower than the baseline's is a regression (default 0.05)");
  command->add_flag("--allow-regressions", args->allow_regressions,
                    "with --baseline, exit 0 even when a model regressed (default: exit 1)");
  command->add_option("--title", args->title, "the report's title");
  command->callback([args, &exit_status] { exit_status = run_report(*args); });
}

}  // namespace

ZOOBENCH_COMMAND(report, setup_report);

}  // namespace zoobench::cli
