// Failure classification.
#include "zoobench/results/failure.h"

#include "zoobench/util/characters.h"

namespace zoobench {

bool looks_like_out_of_memory(const std::string& message) {
  const std::string lower = lower_case(message);
  return lower.find("out of memory") != std::string::npos ||
         lower.find("can't allocate memory") != std::string::npos ||
         lower.find("bad_alloc") != std::string::npos ||
         lower.find("cudaerrormemoryallocation") != std::string::npos;
}

Status status_for_failure(Phase phase, const std::string& message) {
  const bool oom = looks_like_out_of_memory(message);
  switch (phase) {
    case Phase::kLoad: return oom ? Status::kOOM : Status::kModelFailToLoad;
    case Phase::kEagerFirstRun: return oom ? Status::kEager1stRunOOM : Status::kEager1stRunFail;
    case Phase::kEagerSecondRun: return oom ? Status::kEager2ndRunOOM : Status::kEager2ndRunFail;
    case Phase::kCompiled: return oom ? Status::kOOM : Status::kFailToRun;
  }
  return Status::kInfraError;
}

}  // namespace zoobench
