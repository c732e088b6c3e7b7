// What one accuracy check of a bisect said, from the `zoobench run` child's accuracy row: the
// part a switch step (bisect.h), a submodule check (divergence.h) and a compiler-bisector check
// (compiler_bisector.h) share, with its one-line form and its JSON keys.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace zoobench {

struct CheckOutcome {
  std::string status;   // the row's accuracy status (pass, fail_accuracy, crash, timeout, ...)
  std::string max_abs;  // the row's max_abs cell ("" when it has none)
  std::string reason;
  std::string log;
  double seconds = 0;  // wall time of the check's child process, start to row
  // Only `pass` passes: a crash, a timeout or any other status is a failing check.
  bool passed() const { return status == "pass"; }
  // "fail_accuracy, max_abs 0.0706" (the status alone when there is no max_abs).
  std::string summary() const;
  // " (<the reason's first line>)" for a failing check that says why, else "".
  std::string why_failed() const;
};

// {status, max_abs, reason, log, seconds}: each record adds its own keys.
nlohmann::json check_outcome_json(const CheckOutcome& outcome);

}  // namespace zoobench
