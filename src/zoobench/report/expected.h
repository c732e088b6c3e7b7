// The CI gate: compare a run's accuracy statuses with an expected file, with the semantics of
// upstream's benchmarks/dynamo/check_accuracy.py so an expected-CSV workflow carries over.
//
// Per actual row: the same status as expected is PASS (expected `pass`) or XFAIL (an expected
// failure still fails); a different status is IMPROVED when it is now `pass`, else FAIL. As
// upstream, only `pass` is a pass: `pass_due_to_skip` where `pass` was expected is a FAIL (the
// accuracy is no longer checked). A model with no expected row is MISSING_EXPECTED and fails,
// even when it passes (the file must name every model it gates). IMPROVED fails the gate too, as
// upstream's, so that the expected file is updated; allow_improved lets it pass. An expected row
// with no actual row is MISSING and does not gate: upstream looks at the results' models only,
// which a CI shard (a partition) needs; the printout notes them. Flaky models are reported and
// never fail the gate, except MISSING_EXPECTED (as upstream).
//
// Beside the statuses, the dynamo counters, as upstream's benchmarks/dynamo/check_graph_breaks.py:
// where the expected row has `graph_breaks` (and `calls_captured`, upstream's newer 5-column
// files) and the result has the same counter, graph_breaks must be equal (more: FAIL, fewer:
// IMPROVED) and calls_captured may not drop by more than 5% (COVERAGE_DROP_TOL; any increase
// passes). The counter verdicts gate as the status verdicts do.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "zoobench/results/rows.h"

namespace zoobench::report {

// kMissing: expected, no result (not gated); kMissingExpected: a result the file does not name.
enum class Verdict { kPass, kXfail, kFail, kImproved, kMissing, kMissingExpected };

// "PASS", "XFAIL", "FAIL", "IMPROVED", "MISSING", "MISSING_EXPECTED"
std::string_view verdict_name(Verdict verdict);

struct ExpectedCheck {
  std::string model;
  // The device/mode/backend/dtype of the row when the results hold more than one per model.
  std::string where;
  std::string actual;    // "" for MISSING
  std::string expected;  // "" when the model is not in the expected file
  Verdict verdict = Verdict::kPass;
  bool flaky = false;
  // Upstream's label: PASS, XFAIL, FAIL, IMPROVED, MISSING, MISSING_EXPECTED, or PASS_BUT_FLAKY /
  // FAIL_BUT_FLAKY for a flaky model whose status changed.
  std::string label() const;
};

// One dynamo counter of one model against its expected value (check_graph_breaks.py's rules).
struct CounterCheck {
  std::string model;
  std::string where;    // as ExpectedCheck's
  std::string counter;  // the column: "graph_breaks" or "calls_captured"
  int64_t actual = 0;
  int64_t expected = 0;
  Verdict verdict = Verdict::kPass;  // kPass, kFail or kImproved (graph_breaks fewer)
  bool flaky = false;
  // Upstream's label: PASS, FAIL, IMPROVED, or FAIL_BUT_FLAKY / IMPROVED_BUT_FLAKY.
  std::string label() const;
};

// The counters the gate compares, in the order they are checked and printed: graph_breaks
// (exact, lower is better) and calls_captured (a drop beyond kCallsCapturedDropTolerance fails).
const std::vector<std::string>& gated_counter_columns();
inline constexpr double kCallsCapturedDropTolerance = 0.05;  // upstream's COVERAGE_DROP_TOL

// A counter cell as a whole number: "3" (or "3.0", as pandas writes a column that had a NaN);
// nullopt for an empty cell or anything else.
std::optional<int64_t> parse_counter_cell(const std::string& text);

// A row's counter: its cell, else (zoobench's JSON results) detail.dynamo_stats; nullopt when
// the row has neither.
std::optional<int64_t> counter_of(const ResultRow& row, const std::string& counter);

struct ExpectedComparison {
  std::vector<ExpectedCheck> checks;  // actual rows in their order, then the missing ones
  // The counters of models whose status is `pass` on both sides and whose cells are filled on
  // both sides; in the order of `checks`, then of gated_counter_columns().
  std::vector<CounterCheck> counter_checks;
  // By counter: models whose expected row has the counter and whose result (passing on both
  // sides) has none, so it was not compared (a TorchScript backend, zoobench's CSV that carries
  // no calls_captured).
  std::map<std::string, int> counters_not_compared;
  // Checks labelled with this verdict (a flaky model whose status changed has its own label and
  // is counted by flaky_changes instead).
  int count(Verdict verdict) const;
  int counter_count(Verdict verdict) const;  // the same over counter_checks
  // Flaky models whose status or counters changed.
  int flaky_changes() const;
  // True, as check_accuracy.py exits 1, when a model is MISSING_EXPECTED or a non-flaky one is
  // FAIL or IMPROVED, or one of its counters FAIL or IMPROVED; with allow_improved, IMPROVED
  // alone passes. MISSING never fails it.
  bool gate_fails(bool allow_improved = false) const;
};

// An expected file that names a model twice for the same device, mode, backend, dtype and
// input layout cannot say what the model should do (a run was failed by the row it did not
// match): UsageError naming the model and both lines, as upstream's files have one row each.
void require_one_expectation_per_model(const std::vector<ResultRow>& expected,
                                       const std::string& path);

// `actual` and `expected` are accuracy rows. An expected row matches an actual row by name and
// by whichever of dev, mode, backend, dtype the expected row fills in (upstream's expected
// files have only name, accuracy and counters).
ExpectedComparison compare_with_expected(const std::vector<ResultRow>& actual,
                                         const std::vector<ResultRow>& expected,
                                         const std::set<std::string>& flaky);

// Upstream's printout: one line per model of the results (check_accuracy.py's), one per compared
// counter (check_graph_breaks.py's), then what regressed, improved or is not in the expected
// file and how to update it, a note of the expected models with no result, then a count line.
std::string format_expected_comparison(const ExpectedComparison& comparison,
                                       const std::string& expected_path, bool allow_improved);

// The expected file a run establishes, one upstream's checkers read: name,accuracy,graph_breaks
// (graph_breaks 0 where the result has none, as upstream's update_expected.py's fillna(0)), plus
// dev/mode/backend/dtype where the run has more than one of them; sorted by name.
std::string expected_csv_from(const std::vector<ResultRow>& actual);

// Flaky models from a suite yaml's `zoobench: flaky: [names]`; none when the key is absent.
std::vector<std::string> read_flaky_models(const std::string& yaml_path);

}  // namespace zoobench::report
