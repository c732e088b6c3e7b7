// The CI gate: compare a run's accuracy statuses with an expected file, with the semantics of
// upstream's benchmarks/dynamo/check_accuracy.py so an expected-CSV workflow carries over.
//
// Per actual row: the same status as expected is PASS (expected `pass`) or XFAIL (an expected
// failure still fails); a different status is IMPROVED when it is now `pass`, else FAIL. As
// upstream, only `pass` is a pass: `pass_due_to_skip` where `pass` was expected is a FAIL (the
// accuracy is no longer checked). A model with no expected row is IMPROVED when it passes and
// FAIL otherwise. Ours beyond upstream: an expected row with no actual row is MISSING; and, as
// the CLI documents, IMPROVED alone does not fail the gate unless asked (upstream fails on it to
// force the expected file to be updated). Flaky models are reported and never fail the gate.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "zoobench/results/rows.h"

namespace zoobench::report {

enum class Verdict { kPass, kXfail, kFail, kImproved, kMissing };

std::string_view verdict_name(Verdict verdict);  // "PASS", "XFAIL", "FAIL", "IMPROVED", "MISSING"

struct ExpectedCheck {
  std::string model;
  // The device/mode/backend/dtype of the row when the results hold more than one per model.
  std::string where;
  std::string actual;    // "" for MISSING
  std::string expected;  // "" when the model is not in the expected file
  Verdict verdict = Verdict::kPass;
  bool flaky = false;
  // Upstream's label: PASS, XFAIL, FAIL, IMPROVED, MISSING, or PASS_BUT_FLAKY / FAIL_BUT_FLAKY /
  // MISSING_BUT_FLAKY for a flaky model whose status changed.
  std::string label() const;
};

struct ExpectedComparison {
  std::vector<ExpectedCheck> checks;  // actual rows in their order, then the missing ones
  // Checks labelled with this verdict (a flaky model whose status changed has its own label and
  // is counted by flaky_changes instead).
  int count(Verdict verdict) const;
  int flaky_changes() const;
  // True when a non-flaky model is FAIL or MISSING (or IMPROVED, with fail_on_improved).
  bool gate_fails(bool fail_on_improved = false) const;
};

// `actual` and `expected` are accuracy rows. An expected row matches an actual row by name and
// by whichever of dev, mode, backend, dtype the expected row fills in (upstream's expected
// files have only name and accuracy).
ExpectedComparison compare_with_expected(const std::vector<ResultRow>& actual,
                                         const std::vector<ResultRow>& expected,
                                         const std::set<std::string>& flaky);

// Upstream's printout: one line per model, then what regressed, improved or is missing and how
// to update the expected file, then a count line.
std::string format_expected_comparison(const ExpectedComparison& comparison,
                                       const std::string& expected_path, bool fail_on_improved);

// The expected file a run establishes: name,accuracy (plus dev/mode/backend/dtype where the
// run has more than one of them), sorted by name.
std::string expected_csv_from(const std::vector<ResultRow>& actual);

// Flaky models from a suite yaml's `zoobench: flaky: [names]`; none when the key is absent.
std::vector<std::string> read_flaky_models(const std::string& yaml_path);

}  // namespace zoobench::report
