// `zoobench compare RESULTS --expected FILE`: the CI gate over accuracy statuses, as upstream's
// benchmarks/dynamo/check_accuracy.py (PASS / XFAIL / FAIL / IMPROVED, plus MISSING); exit 1 when
// a non-flaky model regressed or is missing.
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>

#include "cli/command.h"
#include "zoobench/report/expected.h"
#include "zoobench/report/result_files.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/files.h"

namespace zoobench::cli {
namespace {

struct CompareArgs {
  std::vector<std::string> results;
  std::string expected;
  std::vector<std::string> flaky, flaky_yamls;
  bool fail_on_improved = false;
  bool update_expected = false;
};

std::vector<ResultRow> load_accuracy_rows(const std::vector<std::string>& paths, const char* role) {
  std::vector<ResultRow> rows;
  for (const auto& path : report::expand_result_paths(paths)) {
    report::ResultFile file = report::load_result_file(path);
    if (file.kind != ExperimentKind::kAccuracy) {
      throw UsageError(
          std::string(role) + " " + path +
          " holds performance results; compare checks accuracy statuses (as upstream's "
          "check_accuracy.py): pass the *_accuracy.csv or its JSON");
    }
    rows.insert(rows.end(), file.rows.begin(), file.rows.end());
  }
  return rows;
}

int run_compare(const CompareArgs& args) {
  std::vector<ResultRow> actual = load_accuracy_rows(args.results, "results file");
  std::set<std::string> flaky(args.flaky.begin(), args.flaky.end());
  for (const auto& yaml : args.flaky_yamls) {
    for (const auto& name : report::read_flaky_models(yaml)) flaky.insert(name);
  }
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
    report::ExpectedComparison comparison = report::compare_with_expected(actual, expected, flaky);
    std::cout << report::format_expected_comparison(comparison, args.expected,
                                                    args.fail_on_improved);
    if (comparison.gate_fails(args.fail_on_improved)) status = kExitFailed;
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
      "Gate on accuracy statuses against an expected file (upstream's check_accuracy.py)");
  command
      ->add_option("results", args->results,
                   "accuracy results: CSV or JSON files, or folders of them")
      ->required();
  command
      ->add_option(
          "--expected", args->expected,
          "expected statuses: a CSV with name,accuracy (upstream's format) or a results file")
      ->required();
  command->add_option("--flaky", args->flaky,
                      "a flaky model: reported, never fails the gate (repeatable)");
  command->add_option(
      "--flaky-from-yaml", args->flaky_yamls,
      "a suite yaml whose `zoobench: flaky: [names]` lists flaky models (repeatable)");
  command->add_flag(
      "--fail-on-improved", args->fail_on_improved,
      "also fail when a model improved, as upstream does, so the expected file is updated");
  command->add_flag("--update-expected", args->update_expected,
                    "rewrite the expected file from these results (exit 0)");
  command->callback([args, &exit_status] { exit_status = run_compare(*args); });
}

}  // namespace

ZOOBENCH_COMMAND(compare, setup_compare);

}  // namespace zoobench::cli
