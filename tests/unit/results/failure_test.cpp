// Reading a failure's message (results/failure.h): whether it is memory, and how much of the GPU
// other processes held, against sums worked by hand from PyTorch's own messages.
#include "zoobench/results/failure.h"

#include <gtest/gtest.h>

namespace zoobench {
namespace {

constexpr double kGiB = 1LL << 30;
constexpr double kMiB = 1LL << 20;

TEST(Failure, MemoryOfOtherProcessesAddsUpTheProcessesPyTorchNames) {
  // timm_vision_transformer_large's eager step on an H100 (PyTorch 2.11): one other process,
  // listed before the failing process's own "this process has".
  const std::string one_other =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 34.00 MiB. GPU 0 has a total "
      "capacity of 79.18 GiB of which 32.50 MiB is free. Process 8689 has 9.21 GiB memory in use. "
      "Including non-PyTorch memory, this process has 69.92 GiB memory in use.";
  EXPECT_DOUBLE_EQ(memory_of_other_processes(one_other), 9.21 * kGiB);
  EXPECT_DOUBLE_EQ(memory_of_other_processes("Process 1 has 512.00 MiB memory in use. Process 2 "
                                             "has 1.50 GiB memory in use."),
                   512 * kMiB + 1.5 * kGiB);
  // None named: CUDA's bare message, the failing process alone, words that only look alike.
  EXPECT_EQ(memory_of_other_processes("CUDA error: out of memory"), 0.0);
  EXPECT_EQ(memory_of_other_processes("this process has 69.92 GiB memory in use."), 0.0);
  EXPECT_EQ(memory_of_other_processes("Process pool has 3 workers. Process 7 has gone."), 0.0);
  EXPECT_TRUE(looks_like_out_of_memory(one_other));
}

}  // namespace
}  // namespace zoobench
