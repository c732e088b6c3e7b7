// `zoobench run`'s exit status as a CI gate. Upstream's harness exits 0 whatever its models do
// and leaves the verdict to check_accuracy.py; a zoobench run gives it itself: exit 1 when a row
// of the run failed. With an expected file (--expected, upstream's name,accuracy CSV, as
// `zoobench compare` reads it) the verdicts are check_accuracy.py's: a failure the file expects
// does not count (XFAIL); a new or changed failure, an improvement (until the file records it),
// a model of the run that the file does not name (MISSING_EXPECTED) and a model of the run with
// no row do.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "zoobench/results/rows.h"

namespace zoobench {

struct RunGate {
  int failed = 0;       // rows (or missing models, or models the expected file lacks) that fail it
  int known = 0;        // failing rows the expected file expects
  int improved = 0;     // models that pass where the expected file expects a failure: these fail it
  std::string message;  // what the terminal says about the gate; "" when nothing failed or improved
  bool fails() const { return failed > 0 || improved > 0; }
};

// `rows`: the rows this run wrote; `models`: the names of the models whose accuracy it set out
// to check (with an expected file, one of them without an accuracy row fails); `expected`:
// the expected file's rows (empty: no expected file), `expected_path` its name for the messages.
RunGate gate_run(const std::vector<ResultRow>& rows, const std::set<std::string>& models,
                 const std::vector<ResultRow>& expected, const std::string& expected_path);

}  // namespace zoobench
