// `zoobench compare RESULTS --expected FILE`: the CI gate over accuracy statuses, as upstream's
// benchmarks/dynamo/check_accuracy.py (PASS / XFAIL / FAIL / IMPROVED / MISSING_EXPECTED), and
// over the dynamo counters the expected file has (graph_breaks, calls_captured), as upstream's
// check_graph_breaks.py; exit 1, as both, when a non-flaky model regressed or improved, has more
// or fewer graph breaks or >5% fewer calls captured, or when a model of the results is not in
// FILE (--allow-improved: improvements alone exit 0). Models of FILE with no result (another
// partition's) are noted, not gated, as upstream. FILE may be one of upstream's
// ci_expected_accuracy files as they are.
// `zoobench compare RESULTS --upstream FILES`: the same models run by upstream's harness, side by
// side with zoobench's verdicts and speedups (report/upstream_agreement.h).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>

#include "cli/command.h"
#include "zoobench/report/expected.h"
#include "zoobench/report/upstream_agreement.h"
#include "zoobench/report/upstream_twins.h"
#include "zoobench/results/csv.h"
#include "zoobench/results/result_files.h"
#include "zoobench/results/sink.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/files.h"
#include "zoobench/util/output_guard.h"
#include "zoobench/util/text.h"

namespace zoobench::cli {
namespace {

struct CompareArgs {
  std::vector<std::string> results;
  std::vector<std::string> upstream;  // --upstream: upstream's CSVs of the same models
  std::string markdown;               // with --upstream: write the table here too
  std::string expected;
  std::vector<std::string> flaky, flaky_yamls;
  bool fail_on_improved = false;  // the default now; kept so that scripts that pass it still run
  bool allow_improved = false;
  bool update_expected = false;
};

// Each model once: the upstream-format twin of a zoobench file beside it
// (--output-format upstream) is left out, as report and merge leave it out.
std::vector<ResultRow> load_accuracy_rows(const std::vector<std::string>& paths, const char* role) {
  const std::vector<std::string> files = expand_result_paths(paths);
  for (const auto& path : files) check_result_json_depth(path);
  std::vector<ResultRow> rows;
  for (const ResultFile& file : report::load_results_without_twins(files, "compare")) {
    if (file.kind != ExperimentKind::kAccuracy) {
      throw UsageError(
          std::string(role) + " " + file.path +
          " holds performance results; compare checks accuracy statuses (as upstream's "
          "check_accuracy.py): pass the *_accuracy.csv or its JSON");
    }
    rows.insert(rows.end(), file.rows.begin(), file.rows.end());
  }
  return rows;
}

// "<where>: unknown status ..."; `where` may be empty, the caller putting the place first.
std::string unknown_status_message(const std::string& where, const std::string& status) {
  return fmt::format("{}: unknown status '{}'; the known statuses are {}", where, status,
                     known_status_names());
}

// Why an expected file's cell cannot gate, or "" when it can: every status is one zoobench
// knows (a misspelt one, "passed", would never equal the actual status, so the model would
// count as IMPROVED or FAIL for a typo), every counter the gate compares a whole number or empty
// (upstream's files leave a counter empty where it has none).
std::string why_expected_cell_invalid(const std::string& column, const std::string& value) {
  if (value.empty()) return "";
  if (column == columns::kAccuracy.key()) {
    return parse_status(value) ? "" : unknown_status_message("", value);
  }
  const auto& counters = report::gated_counter_columns();
  if (std::find(counters.begin(), counters.end(), column) != counters.end() &&
      !report::parse_counter_cell(value)) {
    return fmt::format(": {} '{}' is not a whole number (a count, or empty for none)", column,
                       value);
  }
  return "";
}

// A CSV is checked record by record, to name the line; a JSON record by record.
void require_valid_expected_cells(const std::string& path, const std::vector<ResultRow>& rows) {
  if (std::filesystem::path(path).extension() != ".csv") {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      for (const auto& [column, value] : rows[i].cells) {
        const std::string why = why_expected_cell_invalid(column, value);
        if (!why.empty()) throw UsageError(fmt::format("{} (record {}){}", path, i + 1, why));
      }
    }
    return;
  }
  const std::vector<CsvRecord> records = split_csv_records(read_text_file(path));
  if (records.empty()) return;
  const std::vector<std::string>& header = records.front().cells;
  for (std::size_t r = 1; r < records.size(); ++r) {
    for (std::size_t c = 0; c < header.size() && c < records[r].cells.size(); ++c) {
      const std::string why = why_expected_cell_invalid(trim(header[c]), records[r].cells[c]);
      if (!why.empty()) throw UsageError(fmt::format("{}:{}{}", path, records[r].line, why));
    }
  }
}

// An expected file that names none of the results' models (only a header, another suite's)
// would make every model IMPROVED and pass the gate without checking anything.
void require_shared_models(const std::vector<ResultRow>& actual,
                           const std::vector<ResultRow>& expected, const std::string& path) {
  if (actual.empty()) return;
  std::set<std::string> models;
  for (const auto& row : actual) models.insert(cell(row, columns::kName));
  for (const auto& row : expected) {
    if (models.count(cell(row, columns::kName))) return;
  }
  std::vector<std::string> some(models.begin(), models.end());
  if (some.size() > 5) some.resize(5);
  throw UsageError(fmt::format(
      "expected file {} names none of the {} models in the results ({}{}): it has {} rows; "
      "create it from a good run with --update-expected",
      path, models.size(), join(some, ", "), models.size() > some.size() ? ", ..." : "",
      expected.size()));
}

std::vector<ResultRow> load_all_rows(const std::vector<std::string>& paths) {
  std::vector<ResultRow> rows;
  for (const ResultFile& file :
       report::load_results_without_twins(expand_result_paths(paths), "compare")) {
    rows.insert(rows.end(), file.rows.begin(), file.rows.end());
  }
  return rows;
}

// --update-expected writes `name,accuracy,graph_breaks` over the expected file: never over one of
// the results it reads (a 33-column results file replaced by two columns is lost work).
void refuse_overwriting_results(const CompareArgs& args) {
  refuse_output_over_inputs(args.expected, expand_result_paths(args.results),
                            "--update-expected: --expected");
}

// --upstream: the agreement table of zoobench's rows and upstream's. A report: exit 0.
int run_upstream_agreement(const CompareArgs& args) {
  std::vector<std::string> inputs = expand_result_paths(args.results);
  for (const auto& path : expand_result_paths(args.upstream)) inputs.push_back(path);
  refuse_output_over_inputs(args.markdown, inputs, "--markdown");
  const report::UpstreamAgreement agreement =
      report::compare_with_upstream(load_all_rows(args.results), load_all_rows(args.upstream));
  if (agreement.models.empty()) throw UsageError("the files name no models");
  const std::string table = report::format_upstream_agreement(agreement);
  std::cout << table;
  if (!args.markdown.empty()) {
    write_file_atomically(args.markdown, table);
    std::cout << "written to " << args.markdown << "\n";
  }
  return kExitOk;
}

int run_compare(const CompareArgs& args) {
  if (args.upstream.empty() == args.expected.empty())
    throw UsageError(
        "compare needs one of --expected FILE (the CI gate) or --upstream FILES "
        "(agreement with upstream's harness)");
  if (!args.upstream.empty()) return run_upstream_agreement(args);
  std::vector<ResultRow> actual = load_accuracy_rows(args.results, "results file");
  std::set<std::string> flaky(args.flaky.begin(), args.flaky.end());
  for (const auto& yaml : args.flaky_yamls) {
    for (const auto& name : report::read_flaky_models(yaml)) flaky.insert(name);
  }
  if (args.update_expected) refuse_overwriting_results(args);
  bool have_expected = std::filesystem::exists(args.expected);
  if (!have_expected && !args.update_expected) {
    throw UsageError("expected file " + args.expected +
                     " does not exist: create it from a good run with "
                     "`zoobench compare RESULTS --expected " +
                     args.expected + " --update-expected`");
  }
  int status = kExitOk;
  if (have_expected) {
    std::vector<ResultRow> expected = load_accuracy_rows({args.expected}, "expected file");
    // A file about to be rewritten from this run need not be a valid baseline.
    if (!args.update_expected) {
      require_valid_expected_cells(args.expected, expected);
      report::require_one_expectation_per_model(expected, args.expected);
      require_shared_models(actual, expected, args.expected);
    }
    report::ExpectedComparison comparison = report::compare_with_expected(actual, expected, flaky);
    std::cout << report::format_expected_comparison(comparison, args.expected, args.allow_improved);
    if (comparison.gate_fails(args.allow_improved)) status = kExitFailed;
  }
  if (args.update_expected) {
    write_file_atomically(args.expected, report::expected_csv_from(actual));
    std::cout << "updated " << args.expected << " from this run (" << actual.size() << " rows)\n";
    return kExitOk;
  }
  return status;
}

void setup_compare(CLI::App& app, int& exit_status) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* command = app.add_subcommand(
      "compare",
      "Gate on accuracy statuses and graph breaks against an expected file (upstream's "
      "check_accuracy.py and check_graph_breaks.py)");
  command
      ->add_option("results", args->results,
                   "accuracy results: CSV or JSON files, or folders of them")
      ->required();
  command->add_option(
      "--expected", args->expected,
      "expected statuses: a CSV with name,accuracy[,graph_breaks[,calls_captured,...]] "
      "(upstream's ci_expected_accuracy format, blank lines and empty cells allowed) or a "
      "results file; graph_breaks and calls_captured gate where both sides have them");
  command
      ->add_option("--upstream", args->upstream,
                   "upstream's accuracy/performance CSVs of the same models: the agreement table "
                   "(statuses, speedups against Python eager and their ratio)")
      ->expected(1, -1);
  command->add_option("--markdown", args->markdown, "with --upstream: also write the table here");
  command->add_option("--flaky", args->flaky,
                      "a flaky model: reported, never fails the gate (repeatable)");
  command->add_option(
      "--flaky-from-yaml", args->flaky_yamls,
      "a suite yaml whose `zoobench: flaky: [names]` lists flaky models (repeatable)");
  auto* fail_on_improved = command->add_flag(
      "--fail-on-improved", args->fail_on_improved,
      "fail when a model's status or graph breaks improved, as upstream does, so the expected "
      "file is updated (the default; kept for the scripts that pass it)");
  command
      ->add_flag("--allow-improved", args->allow_improved,
                 "an improvement (status or graph breaks) alone does not fail the gate; it is "
                 "still reported")
      ->excludes(fail_on_improved);
  command->add_flag("--update-expected", args->update_expected,
                    "rewrite the expected file from these results as name,accuracy,graph_breaks "
                    "(exit 0)");
  command->callback([args, &exit_status] { exit_status = run_compare(*args); });
}

}  // namespace

ZOOBENCH_COMMAND(compare, setup_compare);

}  // namespace zoobench::cli
