// Turning an exception into a status: which phase failed, and whether it was memory.
#pragma once

#include <string>

#include "zoobench/results/status.h"

namespace zoobench {

// True for device or host allocation failures: CUDA's "out of memory", c10's
// "DefaultCPUAllocator: can't allocate memory", std::bad_alloc ("bad_alloc").
bool looks_like_out_of_memory(const std::string& message);

// The GPU memory other processes held when PyTorch's CUDA allocator ran out, in bytes, as its
// message lists them ("Process 8689 has 19.43 GiB memory in use"; the failing process's own is
// "this process has ..."): 0 when the message names none (CUDA's bare "out of memory" names
// nobody).
double memory_of_other_processes(const std::string& message);

enum class Phase { kLoad, kEagerFirstRun, kEagerSecondRun, kCompiled };

// The upstream status for a failure in `phase` (OOM variants where the message says so).
Status status_for_failure(Phase phase, const std::string& message);

}  // namespace zoobench
