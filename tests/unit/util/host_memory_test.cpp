// keep_freed_host_memory: blocks below 32 MiB come from malloc's heap, not from mmap, and
// freed memory stays with the process (glibc's own counters, mallinfo2, are the reference).
#include "zoobench/util/host_memory.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <cstring>

namespace zoobench {
namespace {

TEST(KeepFreedHostMemory, TensorSizedBlocksComeFromTheHeapAndStay) {
  ASSERT_TRUE(keep_freed_host_memory());
  constexpr std::size_t kBlock = 16 << 20;  // above glibc's default 128 kB mmap threshold
  const struct mallinfo2 before = ::mallinfo2();
  void* block = std::malloc(kBlock);
  ASSERT_NE(block, nullptr);
  std::memset(block, 1, kBlock);
  const struct mallinfo2 during = ::mallinfo2();
  EXPECT_EQ(during.hblks, before.hblks) << "the block was mmapped";
  std::free(block);
  const struct mallinfo2 after = ::mallinfo2();
  EXPECT_GE(after.arena + after.keepcost, kBlock) << "freed memory went back to the kernel";
  EXPECT_GE(after.fordblks, kBlock) << "the freed block is not kept for reuse";
}

}  // namespace
}  // namespace zoobench
