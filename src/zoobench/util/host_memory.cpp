// glibc malloc settings for measurement runs (see host_memory.h).
#include "zoobench/util/host_memory.h"

#include <malloc.h>

namespace zoobench {

bool keep_freed_host_memory() {
  // 32 MiB is glibc's largest mmap threshold on 64-bit (DEFAULT_MMAP_THRESHOLD_MAX); setting it
  // also turns off the dynamic threshold. The trim threshold keeps freed heap memory mapped.
  constexpr int kMmapThreshold = 32 << 20;
  constexpr int kTrimThreshold = 1 << 30;
  const bool mmap_ok = ::mallopt(M_MMAP_THRESHOLD, kMmapThreshold) == 1;
  const bool trim_ok = ::mallopt(M_TRIM_THRESHOLD, kTrimThreshold) == 1;
  return mmap_ok && trim_ok;
}

}  // namespace zoobench
