// Failure classification.
#include "zoobench/results/failure.h"

#include <cstdlib>

#include "zoobench/util/characters.h"

namespace zoobench {
namespace {

// The bytes of "<number> <unit>" at the start of `text` ("19.43 GiB"), or 0.
double size_at(const std::string& text) {
  char* end = nullptr;
  const double number = std::strtod(text.c_str(), &end);
  if (end == text.c_str()) return 0.0;
  const std::string unit = text.substr(static_cast<std::size_t>(end - text.c_str()), 4);
  if (unit == " GiB") return number * (1LL << 30);
  if (unit == " MiB") return number * (1LL << 20);
  if (unit == " KiB") return number * (1LL << 10);
  return 0.0;
}

}  // namespace

bool looks_like_out_of_memory(const std::string& message) {
  const std::string lower = lower_case(message);
  return lower.find("out of memory") != std::string::npos ||
         lower.find("can't allocate memory") != std::string::npos ||
         lower.find("bad_alloc") != std::string::npos ||
         lower.find("cudaerrormemoryallocation") != std::string::npos;
}

double memory_of_other_processes(const std::string& message) {
  // PyTorch's wording (c10/cuda/CUDACachingAllocator.cpp): "Process <pid> has <size> memory in
  // use" for each other process; "this process has" is lower case and not counted.
  double bytes = 0.0;
  const std::string marker = "Process ";
  for (auto at = message.find(marker); at != std::string::npos; at = message.find(marker, at + 1)) {
    std::size_t cursor = at + marker.size();
    const std::size_t digits = message.find_first_not_of("0123456789", cursor);
    if (digits == cursor || digits == std::string::npos) continue;
    if (message.compare(digits, 5, " has ") != 0) continue;
    bytes += size_at(message.substr(digits + 5, 32));
  }
  return bytes;
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
