// The expected-results gate.
#include "zoobench/report/expected.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>

#include "zoobench/results/csv.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/text.h"

namespace zoobench::report {
namespace {

constexpr std::array<const char*, 4> kKeyColumns = {"dev", "mode", "backend", "dtype"};

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

std::string where_of(const ResultRow& row, const std::vector<const char*>& columns) {
  std::vector<std::string> parts;
  for (const char* column : columns) {
    if (!cell(row, column).empty()) parts.push_back(cell(row, column));
  }
  return join(parts, " ");
}

}  // namespace

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
  }
  return "FAIL";
}

std::string ExpectedCheck::label() const {
  if (!flaky || verdict == Verdict::kPass || verdict == Verdict::kXfail) {
    return std::string(verdict_name(verdict));
  }
  switch (verdict) {
    case Verdict::kImproved:
      return "PASS_BUT_FLAKY";
    case Verdict::kMissing:
      return "MISSING_BUT_FLAKY";
    default:
      return "FAIL_BUT_FLAKY";
  }
}

int ExpectedComparison::count(Verdict verdict) const {
  return static_cast<int>(std::count_if(checks.begin(), checks.end(), [&](const ExpectedCheck& c) {
    return c.label() == verdict_name(verdict);
  }));
}

int ExpectedComparison::flaky_changes() const {
  return static_cast<int>(std::count_if(checks.begin(), checks.end(), [](const ExpectedCheck& c) {
    return c.label() != verdict_name(c.verdict);
  }));
}

bool ExpectedComparison::gate_fails(bool fail_on_improved) const {
  return count(Verdict::kFail) > 0 || count(Verdict::kMissing) > 0 ||
         (fail_on_improved && count(Verdict::kImproved) > 0);
}

ExpectedComparison compare_with_expected(const std::vector<ResultRow>& actual,
                                         const std::vector<ResultRow>& expected,
                                         const std::set<std::string>& flaky) {
  ExpectedComparison comparison;
  std::vector<bool> matched(expected.size(), false);
  std::vector<const char*> varying =
      actual.empty() ? std::vector<const char*>{} : varying_key_columns(actual);
  for (const auto& row : actual) {
    int best = -1, best_specificity = -1;
    for (std::size_t e = 0; e < expected.size(); ++e) {
      if (cell(expected[e], "accuracy").empty()) continue;
      int specificity = match_specificity(expected[e], row);
      if (specificity > best_specificity) {
        best = static_cast<int>(e);
        best_specificity = specificity;
      }
    }
    ExpectedCheck check;
    check.model = cell(row, columns::kName);
    check.where = where_of(row, varying);
    check.actual = cell(row, columns::kAccuracy);
    check.flaky = flaky.count(check.model) > 0;
    if (best >= 0) {
      matched[best] = true;
      check.expected = cell(expected[best], "accuracy");
    }
    if (check.actual == check.expected) {
      check.verdict = check.expected == "pass" ? Verdict::kPass : Verdict::kXfail;
    } else if (check.actual != "pass") {
      check.verdict = Verdict::kFail;
    } else {
      check.verdict = Verdict::kImproved;
    }
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

std::string format_expected_comparison(const ExpectedComparison& comparison,
                                       const std::string& expected_path, bool fail_on_improved) {
  std::string out;
  std::vector<std::string> failed, improved, missing;
  for (const auto& check : comparison.checks) {
    std::string model = check.where.empty() ? check.model : check.model + " (" + check.where + ")";
    std::string label = check.label();
    if (check.verdict == Verdict::kPass || check.verdict == Verdict::kXfail) {
      out += fmt::format("{:34}  {}\n", model, label);
      continue;
    }
    std::string expected = check.expected.empty() ? "(not in the expected file)" : check.expected;
    std::string actual =
        check.verdict == Verdict::kMissing ? "(no row in the results)" : check.actual;
    out +=
        fmt::format("{:34}  {:9} accuracy={}, expected={}\n", model, label + ":", actual, expected);
    if (check.flaky) continue;
    if (check.verdict == Verdict::kFail) failed.push_back(model);
    if (check.verdict == Verdict::kImproved) improved.push_back(model);
    if (check.verdict == Verdict::kMissing) missing.push_back(model);
  }
  if (!failed.empty()) {
    out += fmt::format("\nError: {} models have accuracy status regressed:\n    {}\n",
                       failed.size(), join(failed, " "));
  }
  if (!missing.empty()) {
    out += fmt::format("\nError: {} models are expected but have no row in the results:\n    {}\n",
                       missing.size(), join(missing, " "));
  }
  if (!improved.empty()) {
    out += fmt::format("\nImprovement: {} models have accuracy status improved:\n    {}\n",
                       improved.size(), join(improved, " "));
  }
  if (!failed.empty() || !improved.empty() || !missing.empty()) {
    out += fmt::format(
        "\nIf this change is expected, you can update `{0}` to reflect the new baseline: run\n"
        "`zoobench compare RESULTS --expected {0} --update-expected` and commit the file.\n",
        expected_path);
  }
  out += fmt::format("\ncompare: {} PASS, {} XFAIL, {} FAIL, {} IMPROVED, {} MISSING",
                     comparison.count(Verdict::kPass), comparison.count(Verdict::kXfail),
                     comparison.count(Verdict::kFail), comparison.count(Verdict::kImproved),
                     comparison.count(Verdict::kMissing));
  int flaky = comparison.flaky_changes();
  if (flaky > 0) out += fmt::format(", {} flaky (reported, not gating)", flaky);
  out += comparison.gate_fails(fail_on_improved) ? " -> gate FAILED\n" : " -> gate passed\n";
  return out;
}

std::string expected_csv_from(const std::vector<ResultRow>& actual) {
  std::vector<const char*> varying =
      actual.empty() ? std::vector<const char*>{} : varying_key_columns(actual);
  std::vector<std::string> header = {"name", "accuracy"};
  for (const char* column : varying) header.emplace_back(column);
  std::vector<std::vector<std::string>> rows;
  for (const auto& row : actual) {
    std::vector<std::string> line = {cell(row, columns::kName), cell(row, columns::kAccuracy)};
    for (const char* column : varying) line.push_back(cell(row, column));
    rows.push_back(std::move(line));
  }
  // By model, then device/mode/...: the status is not part of the order.
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    if (a[0] != b[0]) return a[0] < b[0];
    return std::vector<std::string>(a.begin() + 2, a.end()) <
           std::vector<std::string>(b.begin() + 2, b.end());
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
