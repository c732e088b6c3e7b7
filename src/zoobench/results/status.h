// The outcome vocabulary of a model run: upstream's statuses plus `crash`, as DESIGN.md lists.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace zoobench {

enum class Status {
  kPass,
  kPassDueToSkip,
  kFailAccuracy,
  kFailToRun,
  kEager1stRunFail,
  kEager2ndRunFail,
  kEagerTwoRunsDiffer,
  kEager1stRunOOM,
  kEager2ndRunOOM,
  // Upstream's status when the model's eager validation run at load fails (common.py's
  // validate_model). Known so that upstream's expected files (ci_expected_accuracy) can be read;
  // zoobench itself never writes it: its eager failures are the eager_1st/2nd_run_* statuses.
  kEagerFailToRun,
  kOOM,
  kModelFailToLoad,
  kTimeout,
  kInfraError,
  kCrash,    // killed by a signal; the signal is in the row's reason
  kSkipped,  // never written by a run; `zoobench list` and reports use it
};

std::string_view status_name(Status status);
std::optional<Status> parse_status(std::string_view name);
// Every status name, comma-separated: what an error about an unknown status lists.
std::string known_status_names();

// pass and pass_due_to_skip: what a gate counts as passing.
bool is_passing(Status status);

}  // namespace zoobench
