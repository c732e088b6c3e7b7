#include "zoobench/bisect/check_outcome.h"

#include "zoobench/util/errors.h"

namespace zoobench {

std::string CheckOutcome::summary() const {
  return max_abs.empty() ? status : status + ", max_abs " + max_abs;
}

std::string CheckOutcome::why_failed() const {
  return passed() || reason.empty() ? "" : " (" + first_line(reason) + ")";
}

nlohmann::json check_outcome_json(const CheckOutcome& outcome) {
  return {{"status", outcome.status},
          {"max_abs", outcome.max_abs},
          {"reason", outcome.reason},
          {"log", outcome.log},
          {"seconds", outcome.seconds}};
}

}  // namespace zoobench
