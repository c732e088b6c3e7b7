// The run's gate: see run_gate.h.
#include "zoobench/runner/run_gate.h"

#include <fmt/format.h>

#include <map>

#include "zoobench/report/expected.h"
#include "zoobench/util/text.h"

namespace zoobench {
namespace {

constexpr std::size_t kNamesShown = 8;

bool row_fails(const ResultRow& row) {
  return row.kind == ExperimentKind::kAccuracy ? !is_passing(row.status())
                                               : row.status() != Status::kPass;
}

// "a (fail_to_run), b (timeout), ... and 3 more"
std::string some(const std::vector<std::string>& items) {
  std::vector<std::string> shown(items.begin(),
                                 items.begin() + std::min(items.size(), kNamesShown));
  std::string out = join(shown, ", ");
  if (items.size() > shown.size()) out += fmt::format(" and {} more", items.size() - shown.size());
  return out;
}

std::string described(const ResultRow& row) {
  return fmt::format("{} {} ({})", cell(row, columns::kName),
                     std::string(experiment_name(row.kind)), std::string(status_name(row.status())));
}

RunGate gate_without_expected(const std::vector<ResultRow>& rows) {
  RunGate gate;
  std::vector<std::string> failures;
  for (const auto& row : rows) {
    if (row_fails(row)) failures.push_back(described(row));
  }
  gate.failed = static_cast<int>(failures.size());
  if (gate.failed > 0)
    gate.message = fmt::format("{} of {} rows failed: {}", gate.failed, rows.size(), some(failures));
  return gate;
}

}  // namespace

namespace {

// What each accuracy check of the run means for the gate: `failures` and `improvements` by
// name, `known` failures counted.
void judge_checks(const report::ExpectedComparison& comparison, const std::string& expected_path,
                  RunGate& gate, std::vector<std::string>& failures,
                  std::vector<std::string>& improvements) {
  for (const auto& check : comparison.checks) {
    const std::string what = check.model + (check.where.empty() ? "" : " " + check.where);
    switch (check.verdict) {
      case report::Verdict::kFail:
      case report::Verdict::kMissing:
        failures.push_back(fmt::format("{} (expected {}, now {})", what, check.expected,
                                       check.actual.empty() ? "no row" : check.actual));
        break;
      case report::Verdict::kMissingExpected:
        failures.push_back(fmt::format("{} (MISSING_EXPECTED: not in {}, now {})", what,
                                       expected_path, check.actual));
        break;
      case report::Verdict::kImproved:
        improvements.push_back(what);
        break;
      case report::Verdict::kXfail:
        ++gate.known;
        break;
      case report::Verdict::kPass:
        break;
    }
  }
}

}  // namespace

RunGate gate_run(const std::vector<ResultRow>& rows, const std::set<std::string>& models,
                 const std::vector<ResultRow>& expected, const std::string& expected_path) {
  if (expected.empty()) return gate_without_expected(rows);
  // Only the models this run set out to run: an expected file of the whole list gates a run of
  // part of it (--only, a partition) without calling the others missing. One of the run's own
  // models with no accuracy row was lost by the run and fails it: `zoobench compare` cannot tell
  // a partition's results from such a loss and only notes it, as upstream's check_accuracy.py.
  std::vector<ResultRow> accuracy, of_run;
  for (const auto& row : rows)
    if (row.kind == ExperimentKind::kAccuracy) accuracy.push_back(row);
  for (const auto& row : expected)
    if (models.count(cell(row, columns::kName))) of_run.push_back(row);
  const report::ExpectedComparison comparison =
      report::compare_with_expected(accuracy, of_run, /*flaky=*/{});
  RunGate gate;
  std::vector<std::string> failures, improvements;
  judge_checks(comparison, expected_path, gate, failures, improvements);
  std::map<std::string, bool> expected_to_fail;  // by model: its accuracy was expected to fail
  for (const auto& row : expected)
    expected_to_fail[cell(row, columns::kName)] = cell(row, columns::kAccuracy) != "pass";
  // A performance row fails the run unless the model's accuracy was expected to fail (it cannot
  // be timed either, as upstream's runner counts it).
  for (const auto& row : rows) {
    if (row.kind != ExperimentKind::kPerformance || !row_fails(row)) continue;
    if (expected_to_fail[cell(row, columns::kName)]) {
      ++gate.known;
    } else {
      failures.push_back(described(row));
    }
  }
  gate.failed = static_cast<int>(failures.size());
  gate.improved = static_cast<int>(improvements.size());
  std::vector<std::string> parts;
  if (gate.failed > 0)
    parts.push_back(fmt::format("{} not as {} expects: {}", gate.failed, expected_path, some(failures)));
  if (gate.known > 0) parts.push_back(fmt::format("{} known failure(s), as expected", gate.known));
  if (gate.improved > 0)
    parts.push_back(fmt::format(
        "{} improved: {} (an improvement fails the run until the expected file records it, as "
        "upstream's check_accuracy.py: update {} with `zoobench compare RESULTS --expected {} "
        "--update-expected`)",
        gate.improved, some(improvements), expected_path, expected_path));
  if (gate.fails()) gate.message = join(parts, "; ");
  return gate;
}

}  // namespace zoobench
