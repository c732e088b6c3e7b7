// `zoobench bisect`'s search: which optimization switches (backends/switches.h) must be off for
// a model that fails accuracy to pass. Delta debugging (Zeller and Hildebrandt's ddmin) over
// the switches that are on, not one at a time only: a fault may need two switches together.
// The search sees a step only through `RunStep` (the CLI's runs each in a child process like
// `zoobench run`'s, tests run fakes), so its logic is tested without models.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "zoobench/bisect/check_outcome.h"
#include "zoobench/bisect/compiler_bisector.h"
#include "zoobench/bisect/divergence.h"

namespace zoobench {

// One accuracy check with some switches off.
struct BisectStep : CheckOutcome {
  std::vector<std::string> disabled;
  std::string tolerance;  // the row's tolerance cell: the rule the model is judged by
};

enum class BisectVerdict {
  kNothingToBisect,           // passes with every switch on
  kFound,                     // turning `culprit` off makes it pass
  kFailsWithoutOptimization,  // fails with every switch off too
};
std::string verdict_name(BisectVerdict verdict);  // "nothing_to_bisect", "found", "fails_without_optimization"

struct BisectReport {
  std::string model, suite, backend, device, mode;
  std::vector<std::string> switches;  // the switches searched (on in the first step)
  // The switches the suite turns off for this model (zoobench.switches_off), off in every step
  // and not searched, and why; empty with --ignore-suite-switches.
  std::vector<std::string> suite_switches_off;
  std::string suite_switches_reason;
  BisectVerdict verdict = BisectVerdict::kNothingToBisect;
  // kFound, in `switches` order. culprit: the smallest set that must be on for it to fail
  // (with only these on, and what they need, it fails); two or more when a fault needs several
  // switches together. fix: the smallest set whose removal makes it pass (for a fault that
  // needs a pair, either one of the pair; for two separate faults, both).
  std::vector<std::string> culprit;
  std::vector<std::string> fix;
  std::vector<BisectStep> steps;      // in the order they ran; the first has every switch on
  // Where it first goes wrong with every switch on (run_bisect fills it; the switch search
  // alone leaves it kNotSearched).
  DivergenceReport divergence;
  // Inductor backends: what Inductor's own compiler bisector found (run_bisect fills it; for
  // every other backend it stays kNotApplicable).
  CompilerBisectorReport compiler_bisector;
};

using RunStep = std::function<BisectStep(const std::vector<std::string>& disabled)>;

// The smallest set D (1-minimal: no element can be left out) of `items` such that
// passes(D) holds, given passes(items). Each distinct subset is asked once.
std::vector<std::string> minimal_passing_subset(
    const std::vector<std::string>& items,
    const std::function<bool(const std::vector<std::string>&)>& passes);

// Runs the search: everything on; if it fails, everything off; if that passes, two ddmin
// searches over the same (cached) steps: the culprit (a switch on brings the ones it needs,
// `requires_switch`: switch -> the one it needs, so fold_frozen is found without freeze), and
// the fix, where a more specific set is preferred: a required switch replaced by one that
// needs it, if that passes too (freeze -> fold_frozen).
BisectReport bisect_switches(const std::vector<std::string>& switches,
                             const std::map<std::string, std::string>& requires_switch,
                             const RunStep& run_step);

// A few readable lines: the verdict, then each step (switches off -> status, max_abs), then
// the divergence search and the compiler bisector.
std::string format_bisect_report(const BisectReport& report);
nlohmann::json bisect_report_json(const BisectReport& report);

}  // namespace zoobench
