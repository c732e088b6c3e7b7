// Status names exactly as upstream's CSVs spell them.
#include "zoobench/results/status.h"

#include <array>
#include <utility>

namespace zoobench {
namespace {

constexpr std::array<std::pair<Status, std::string_view>, 16> kNames = {{
    {Status::kPass, "pass"},
    {Status::kPassDueToSkip, "pass_due_to_skip"},
    {Status::kFailAccuracy, "fail_accuracy"},
    {Status::kFailToRun, "fail_to_run"},
    {Status::kEager1stRunFail, "eager_1st_run_fail"},
    {Status::kEager2ndRunFail, "eager_2nd_run_fail"},
    {Status::kEagerTwoRunsDiffer, "eager_two_runs_differ"},
    {Status::kEager1stRunOOM, "eager_1st_run_OOM"},
    {Status::kEager2ndRunOOM, "eager_2nd_run_OOM"},
    {Status::kEagerFailToRun, "eager_fail_to_run"},  // read, never written (status.h)
    {Status::kOOM, "OOM"},
    {Status::kModelFailToLoad, "model_fail_to_load"},
    {Status::kTimeout, "timeout"},
    {Status::kInfraError, "infra_error"},
    {Status::kCrash, "crash"},
    {Status::kSkipped, "skipped"},
}};

}  // namespace

std::string_view status_name(Status status) {
  for (const auto& [value, name] : kNames) {
    if (value == status) return name;
  }
  return "infra_error";
}

std::optional<Status> parse_status(std::string_view name) {
  for (const auto& [value, known] : kNames) {
    if (known == name) return value;
  }
  return std::nullopt;
}

std::string known_status_names() {
  std::string out;
  for (const auto& [value, name] : kNames) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

bool is_passing(Status status) {
  return status == Status::kPass || status == Status::kPassDueToSkip;
}

}  // namespace zoobench
