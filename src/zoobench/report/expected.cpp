// The expected-results gate.
#include "zoobench/report/expected.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "zoobench/results/csv.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/text.h"

namespace zoobench::report {
namespace {

constexpr std::array<const char*, 4> kKeyColumns = {"dev", "mode", "backend", "dtype"};

// Upstream's column (its accuracy CSVs and newer expected files); zoobench's own CSV has no such
// column, its JSON results keep it in detail.dynamo_stats.
constexpr const char* kCallsCaptured = "calls_captured";

// Which key columns take more than one value among `rows`.
std::vector<const char*> varying_key_columns(const std::vector<ResultRow>& rows) {
  std::vector<const char*> out;
  for (const char* column : kKeyColumns) {
    for (const auto& row : rows) {
      if (cell(row, column) != cell(rows.front(), column)) {
        out.push_back(column);
        break;
      }
    }
  }
  return out;
}

// How many key columns the expected row pins down, or -1 when it does not match `actual`.
int match_specificity(const ResultRow& expected, const ResultRow& actual) {
  if (cell(expected, columns::kName) != cell(actual, columns::kName)) return -1;
  int pinned = 0;
  for (const char* column : kKeyColumns) {
    const std::string& want = cell(expected, column);
    if (want.empty()) continue;
    if (want != cell(actual, column)) return -1;
    ++pinned;
  }
  return pinned;
}

// The expected row (with a status) that matches `actual` most specifically, or -1.
int best_expected_row(const std::vector<ResultRow>& expected, const ResultRow& actual) {
  int best = -1, best_specificity = -1;
  for (std::size_t e = 0; e < expected.size(); ++e) {
    if (cell(expected[e], "accuracy").empty()) continue;
    int specificity = match_specificity(expected[e], actual);
    if (specificity > best_specificity) {
      best = static_cast<int>(e);
      best_specificity = specificity;
    }
  }
  return best;
}

std::string where_of(const ResultRow& row, const std::vector<const char*>& columns) {
  std::vector<std::string> parts;
  for (const char* column : columns) {
    if (!cell(row, column).empty()) parts.push_back(cell(row, column));
  }
  return join(parts, " ");
}

Verdict status_verdict(const std::string& actual, const std::string& expected) {
  if (expected.empty()) return Verdict::kMissingExpected;
  if (actual == expected) return expected == "pass" ? Verdict::kPass : Verdict::kXfail;
  return actual == "pass" ? Verdict::kImproved : Verdict::kFail;
}

// check_graph_breaks.py's two rules: "exact_lower" for graph_breaks, "drop_threshold" for
// calls_captured (a drop past the tolerance fails; equal, small drops and increases pass).
Verdict counter_verdict(const std::string& counter, int64_t actual, int64_t expected) {
  if (counter == kCallsCaptured) {
    return static_cast<double>(actual) <
                   static_cast<double>(expected) * (1 - kCallsCapturedDropTolerance)
               ? Verdict::kFail
               : Verdict::kPass;
  }
  if (actual == expected) return Verdict::kPass;
  return actual > expected ? Verdict::kFail : Verdict::kImproved;
}

// The counters of one model. Which rows: only those whose status is `pass` on both sides, and
// only cells filled on both sides. Upstream's classic check_graph_breaks.py compares every row,
// failures included (their counters are the 0s that common.py's output_csv pads a failed row
// with); its newer versions skip a model dynamo did not run (EAGER_FAILED) and an empty (NaN)
// cell. We go further and skip any status other than `pass`: a changed status is already the
// status verdict's FAIL or IMPROVED, and zoobench's counts on a failed row are whatever was
// counted before the failure, a different window from upstream's, so comparing them would gate
// on noise rather than on graph breaks.
void add_counter_checks(const ExpectedCheck& check, const ResultRow& actual,
                        const ResultRow& expected, ExpectedComparison& out) {
  if (check.actual != "pass" || check.expected != "pass") return;
  for (const std::string& counter : gated_counter_columns()) {
    const std::optional<int64_t> want = counter_of(expected, counter);
    if (!want) continue;
    const std::optional<int64_t> got = counter_of(actual, counter);
    if (!got) {
      ++out.counters_not_compared[counter];
      continue;
    }
    CounterCheck counter_check;
    counter_check.model = check.model;
    counter_check.where = check.where;
    counter_check.counter = counter;
    counter_check.actual = *got;
    counter_check.expected = *want;
    counter_check.verdict = counter_verdict(counter, *got, *want);
    counter_check.flaky = check.flaky;
    out.counter_checks.push_back(std::move(counter_check));
  }
}

}  // namespace

const std::vector<std::string>& gated_counter_columns() {
  static const std::vector<std::string> kColumns = {columns::kGraphBreaks.key(), kCallsCaptured};
  return kColumns;
}

std::optional<int64_t> parse_counter_cell(const std::string& text) {
  const std::string value = trim(text);
  if (value.empty()) return std::nullopt;
  try {
    std::size_t used = 0;
    const double number = std::stod(value, &used);
    // Whole, non-negative and exact in a double: a count, as "3" or pandas' "3.0".
    if (used != value.size() || number < 0 || number != std::floor(number) || number > 1e15) {
      return std::nullopt;
    }
    return static_cast<int64_t>(number);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<int64_t> counter_of(const ResultRow& row, const std::string& counter) {
  if (std::optional<int64_t> value = parse_counter_cell(cell(row, counter))) return value;
  const auto stats = row.detail.find("dynamo_stats");
  if (stats == row.detail.end() || !stats->is_object()) return std::nullopt;
  const auto value = stats->find(counter);
  if (value == stats->end() || !value->is_number_integer()) return std::nullopt;
  return value->get<int64_t>();
}

std::string_view verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::kPass:
      return "PASS";
    case Verdict::kXfail:
      return "XFAIL";
    case Verdict::kFail:
      return "FAIL";
    case Verdict::kImproved:
      return "IMPROVED";
    case Verdict::kMissing:
      return "MISSING";
    case Verdict::kMissingExpected:
      return "MISSING_EXPECTED";
  }
  return "FAIL";
}

std::string ExpectedCheck::label() const {
  // As check_accuracy.py: a flaky model's changed status has its own label; a model missing on
  // either side does not (MISSING_EXPECTED fails whether flaky or not, MISSING never does).
  if (flaky && verdict == Verdict::kImproved) return "PASS_BUT_FLAKY";
  if (flaky && verdict == Verdict::kFail) return "FAIL_BUT_FLAKY";
  return std::string(verdict_name(verdict));
}

std::string CounterCheck::label() const {
  if (!flaky || verdict == Verdict::kPass) return std::string(verdict_name(verdict));
  return std::string(verdict_name(verdict)) + "_BUT_FLAKY";
}

int ExpectedComparison::count(Verdict verdict) const {
  return static_cast<int>(std::count_if(checks.begin(), checks.end(), [&](const ExpectedCheck& c) {
    return c.label() == verdict_name(verdict);
  }));
}

int ExpectedComparison::counter_count(Verdict verdict) const {
  return static_cast<int>(
      std::count_if(counter_checks.begin(), counter_checks.end(),
                    [&](const CounterCheck& c) { return c.label() == verdict_name(verdict); }));
}

int ExpectedComparison::flaky_changes() const {
  return static_cast<int>(
      std::count_if(checks.begin(), checks.end(),
                    [](const ExpectedCheck& c) { return c.label() != verdict_name(c.verdict); }) +
      std::count_if(counter_checks.begin(), counter_checks.end(),
                    [](const CounterCheck& c) { return c.label() != verdict_name(c.verdict); }));
}

bool ExpectedComparison::gate_fails(bool allow_improved) const {
  return count(Verdict::kFail) > 0 || count(Verdict::kMissingExpected) > 0 ||
         counter_count(Verdict::kFail) > 0 ||
         (!allow_improved &&
          (count(Verdict::kImproved) > 0 || counter_count(Verdict::kImproved) > 0));
}

void require_one_expectation_per_model(const std::vector<ResultRow>& expected,
                                       const std::string& path) {
  std::map<std::vector<std::string>, std::size_t> first;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const ResultRow& row = expected[i];
    std::vector<std::string> key = {cell(row, columns::kName)};
    for (const char* column : {"dev", "mode", "backend", "dtype", "input_layout"})
      key.push_back(cell(row, column));
    const auto [seen, added] = first.emplace(key, i);
    if (added) continue;
    // Rows are lines 2, 3, ... of a CSV (after its header).
    throw UsageError(fmt::format(
        "{}: {} is named twice (rows {} and {}) for the same device, mode, backend and dtype: "
        "keep one expected status per model",
        path, key[0], seen->second + 1, i + 1));
  }
}

ExpectedComparison compare_with_expected(const std::vector<ResultRow>& actual,
                                         const std::vector<ResultRow>& expected,
                                         const std::set<std::string>& flaky) {
  ExpectedComparison comparison;
  std::vector<bool> matched(expected.size(), false);
  std::vector<const char*> varying =
      actual.empty() ? std::vector<const char*>{} : varying_key_columns(actual);
  for (const auto& row : actual) {
    const int best = best_expected_row(expected, row);
    ExpectedCheck check;
    check.model = cell(row, columns::kName);
    check.where = where_of(row, varying);
    check.actual = cell(row, columns::kAccuracy);
    check.flaky = flaky.count(check.model) > 0;
    if (best >= 0) {
      matched[best] = true;
      check.expected = cell(expected[best], "accuracy");
    }
    check.verdict = status_verdict(check.actual, check.expected);
    if (best >= 0) add_counter_checks(check, row, expected[best], comparison);
    comparison.checks.push_back(std::move(check));
  }
  std::vector<const char*> expected_varying =
      expected.empty() ? std::vector<const char*>{} : varying_key_columns(expected);
  for (std::size_t e = 0; e < expected.size(); ++e) {
    if (matched[e] || cell(expected[e], "accuracy").empty()) continue;
    ExpectedCheck check;
    check.model = cell(expected[e], "name");
    check.where = where_of(expected[e], expected_varying);
    check.expected = cell(expected[e], "accuracy");
    check.verdict = Verdict::kMissing;
    check.flaky = flaky.count(check.model) > 0;
    comparison.checks.push_back(std::move(check));
  }
  return comparison;
}

namespace {

// The models named in the summary, by what happened to them (flaky ones are left out, but for
// missing_expected, which gates them too).
struct Outcomes {
  std::vector<std::string> failed, improved, missing_expected, not_in_results;
  std::vector<std::string> counters_failed, counters_improved;
};

constexpr std::size_t kNamesInNote = 10;

std::string display_name(const std::string& model, const std::string& where) {
  return where.empty() ? model : model + " (" + where + ")";
}

void add_once(std::vector<std::string>& names, const std::string& name) {
  if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
}

// check_accuracy.py's lines: one per model of the results (an expected model with no result
// is only counted, for the note).
std::string status_lines(const ExpectedComparison& comparison, Outcomes& outcomes) {
  std::string out;
  for (const auto& check : comparison.checks) {
    std::string model = display_name(check.model, check.where);
    if (check.verdict == Verdict::kMissing) {
      outcomes.not_in_results.push_back(model);
      continue;
    }
    std::string label = check.label();
    if (check.verdict == Verdict::kPass || check.verdict == Verdict::kXfail) {
      out += fmt::format("{:34}  {}\n", model, label);
      continue;
    }
    std::string expected = check.expected.empty() ? "(not in the expected file)" : check.expected;
    out += fmt::format("{:34}  {:9} accuracy={}, expected={}\n", model, label + ":", check.actual,
                       expected);
    if (check.verdict == Verdict::kMissingExpected) outcomes.missing_expected.push_back(model);
    if (check.flaky) continue;
    if (check.verdict == Verdict::kFail) outcomes.failed.push_back(model);
    if (check.verdict == Verdict::kImproved) outcomes.improved.push_back(model);
  }
  return out;
}

// One model's counter lines, as the newest check_graph_breaks.py prints them: one PASS line
// (with the values) when every counter passed, else one line per counter that did not.
std::string model_counter_lines(std::vector<CounterCheck>::const_iterator first,
                                std::vector<CounterCheck>::const_iterator last,
                                Outcomes& outcomes) {
  const std::string model = display_name(first->model, first->where);
  std::string out;
  std::vector<std::string> values;
  for (auto check = first; check != last; ++check) {
    values.push_back(fmt::format("{}={}", check->counter, check->actual));
    if (check->verdict == Verdict::kPass) continue;
    out += fmt::format("{:34}  {:19} {}={}, expected={}\n", model, check->label() + ":",
                       check->counter, check->actual, check->expected);
    if (check->flaky) continue;
    add_once(
        check->verdict == Verdict::kFail ? outcomes.counters_failed : outcomes.counters_improved,
        model);
  }
  if (out.empty()) out = fmt::format("{:34}  {:19} {}\n", model, "PASS", join(values, ", "));
  return out;
}

// check_graph_breaks.py's lines: one or more per model, then what could not be compared.
std::string counter_lines(const ExpectedComparison& comparison, Outcomes& outcomes) {
  if (comparison.counter_checks.empty() && comparison.counters_not_compared.empty()) return "";
  std::string out = fmt::format(
      "\nDynamo counters (as check_graph_breaks.py; models that pass on both sides; graph_breaks "
      "exact, calls_captured may drop {:g}%):\n",
      kCallsCapturedDropTolerance * 100);
  const auto& checks = comparison.counter_checks;
  for (auto first = checks.begin(); first != checks.end();) {
    auto last = std::find_if(first, checks.end(), [&](const CounterCheck& c) {
      return c.model != first->model || c.where != first->where;
    });
    out += model_counter_lines(first, last, outcomes);
    first = last;
  }
  for (const auto& [counter, models] : comparison.counters_not_compared) {
    out += fmt::format(
        "{} not compared for {} models: the expected file has it, the results do not (empty for "
        "backends without dynamo; calls_captured is in zoobench's JSON results and "
        "--output-format upstream CSVs, not in its own CSV)\n",
        counter, models);
  }
  return out;
}

// "\nError: 2 models have ...:\n    a b\n"
void add_named(std::string& out, const char* kind, const char* what,
               const std::vector<std::string>& models) {
  if (!models.empty())
    out +=
        fmt::format("\n{}: {} models {}:\n    {}\n", kind, models.size(), what, join(models, " "));
}

// Upstream ignores expected models with no result (a CI shard has a part of them); a note says
// how many, and names the first few.
std::string not_in_results_note(const std::vector<std::string>& models) {
  if (models.empty()) return "";
  std::vector<std::string> shown(models.begin(),
                                 models.begin() + std::min(models.size(), kNamesInNote));
  std::string names = join(shown, " ");
  if (models.size() > shown.size())
    names += fmt::format(" ... and {} more", models.size() - shown.size());
  return fmt::format(
      "\nNote: {} models of the expected file have no row in the results (another partition's, "
      "or not run): not checked, as upstream's check_accuracy.py:\n    {}\n"
      "(--update-expected writes the file from these results alone: give it every partition's "
      "results, or `zoobench merge` them first.)\n",
      models.size(), names);
}

std::string count_line(const ExpectedComparison& comparison, bool allow_improved) {
  std::string out =
      fmt::format("\ncompare: {} PASS, {} XFAIL, {} FAIL, {} IMPROVED, {} MISSING_EXPECTED",
                  comparison.count(Verdict::kPass), comparison.count(Verdict::kXfail),
                  comparison.count(Verdict::kFail), comparison.count(Verdict::kImproved),
                  comparison.count(Verdict::kMissingExpected));
  if (comparison.count(Verdict::kMissing) > 0)
    out += fmt::format(" ({} expected with no result, not gating)",
                       comparison.count(Verdict::kMissing));
  if (!comparison.counter_checks.empty()) {
    out += fmt::format(
        "; counters: {} PASS, {} FAIL, {} IMPROVED", comparison.counter_count(Verdict::kPass),
        comparison.counter_count(Verdict::kFail), comparison.counter_count(Verdict::kImproved));
  }
  int flaky = comparison.flaky_changes();
  if (flaky > 0) out += fmt::format(", {} flaky (reported, not gating)", flaky);
  out += comparison.gate_fails(allow_improved) ? " -> gate FAILED\n" : " -> gate passed\n";
  return out;
}

// Why improvements gate (or, with --allow-improved, do not).
std::string improved_line(const Outcomes& outcomes, bool allow_improved) {
  if (outcomes.improved.empty() && outcomes.counters_improved.empty()) return "";
  return allow_improved
             ? "\nImprovements do not fail the gate (--allow-improved).\n"
             : "\nImprovements fail the gate, as upstream's check_accuracy.py, until the expected "
               "file records them (--allow-improved to pass the gate on them).\n";
}

}  // namespace

std::string format_expected_comparison(const ExpectedComparison& comparison,
                                       const std::string& expected_path, bool allow_improved) {
  Outcomes outcomes;
  std::string out = status_lines(comparison, outcomes);
  out += counter_lines(comparison, outcomes);
  add_named(out, "Error", "have accuracy status regressed", outcomes.failed);
  add_named(out, "Error", "have a result but no row in the expected file (MISSING_EXPECTED)",
            outcomes.missing_expected);
  add_named(out, "Error", "have new dynamo graph breaks or fewer calls captured",
            outcomes.counters_failed);
  add_named(out, "Improvement", "have accuracy status improved", outcomes.improved);
  add_named(out, "Improvement", "have fixed dynamo graph breaks", outcomes.counters_improved);
  out += improved_line(outcomes, allow_improved);
  if (!outcomes.failed.empty() || !outcomes.improved.empty() ||
      !outcomes.missing_expected.empty() || !outcomes.counters_failed.empty() ||
      !outcomes.counters_improved.empty()) {
    out += fmt::format(
        "\nIf this change is expected, you can update `{0}` to reflect the new baseline: run\n"
        "`zoobench compare RESULTS --expected {0} --update-expected` and commit the file.\n",
        expected_path);
  }
  out += not_in_results_note(outcomes.not_in_results);
  return out + count_line(comparison, allow_improved);
}

std::string expected_csv_from(const std::vector<ResultRow>& actual) {
  std::vector<const char*> varying =
      actual.empty() ? std::vector<const char*>{} : varying_key_columns(actual);
  // Upstream's three columns first: check_accuracy.py and check_graph_breaks.py read them by
  // name and ignore the rest.
  std::vector<std::string> header = {"name", "accuracy", columns::kGraphBreaks.key()};
  for (const char* column : varying) header.emplace_back(column);
  std::vector<std::vector<std::string>> rows;
  for (const auto& row : actual) {
    const std::optional<int64_t> graph_breaks = counter_of(row, columns::kGraphBreaks.key());
    std::vector<std::string> line = {cell(row, columns::kName), cell(row, columns::kAccuracy),
                                     std::to_string(graph_breaks.value_or(0))};
    for (const char* column : varying) line.push_back(cell(row, column));
    rows.push_back(std::move(line));
  }
  // By model, then device/mode/...: the status and counters are not part of the order.
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    if (a[0] != b[0]) return a[0] < b[0];
    return std::vector<std::string>(a.begin() + 3, a.end()) <
           std::vector<std::string>(b.begin() + 3, b.end());
  });
  std::string out = csv_line(header);
  for (const auto& row : rows) out += csv_line(row);
  return out;
}

std::vector<std::string> read_flaky_models(const std::string& yaml_path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(yaml_path);
  } catch (const YAML::Exception& e) {
    throw UsageError("cannot read flaky models from " + yaml_path + ": " + e.what() +
                     " (pass a suite yaml with `zoobench: flaky: [names]`)");
  }
  std::vector<std::string> names;
  if (!root.IsMap() || !root["zoobench"] || !root["zoobench"]["flaky"]) return names;
  YAML::Node flaky = root["zoobench"]["flaky"];
  if (flaky.IsNull()) return names;
  if (!flaky.IsSequence()) {
    throw UsageError(yaml_path + ": `zoobench: flaky:` must be a list of model names");
  }
  for (const auto& item : flaky) {
    if (!item.IsScalar())
      throw UsageError(yaml_path + ": `zoobench: flaky:` must list model names");
    names.push_back(item.as<std::string>());
  }
  return names;
}

}  // namespace zoobench::report
