// How suite workers pin a child process to its GPU (runner/child_device.h).
#include "zoobench/runner/child_device.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "zoobench/util/errors.h"

namespace zoobench {
namespace {

TEST(ChildDevice, CpuAndUnindexedCudaPassThrough) {
  for (const char* device : {"cpu", "cuda"}) {
    const ChildDevice child = child_device_for(device, nullptr);
    EXPECT_EQ(child.device, device);
    EXPECT_FALSE(child.pinned());
  }
  EXPECT_FALSE(child_device_for("cpu", "0,1").pinned());
}

TEST(ChildDevice, IndexedCudaIsPinnedAndSeenAsCudaZero) {
  const ChildDevice child = child_device_for("cuda:1", nullptr);
  EXPECT_EQ(child.device, "cuda:0");
  EXPECT_EQ(child.environment, std::vector<std::string>{"CUDA_VISIBLE_DEVICES=1"});
  // An empty CUDA_VISIBLE_DEVICES is treated as unset.
  EXPECT_EQ(child_device_for("cuda:3", "").environment,
            std::vector<std::string>{"CUDA_VISIBLE_DEVICES=3"});
}

TEST(ChildDevice, IndexesTheParentsVisibleList) {
  EXPECT_EQ(child_device_for("cuda:1", "4, 6").environment,
            std::vector<std::string>{"CUDA_VISIBLE_DEVICES=6"});
  EXPECT_EQ(child_device_for("cuda:0", "GPU-8f2a,GPU-11c0").environment,
            std::vector<std::string>{"CUDA_VISIBLE_DEVICES=GPU-8f2a"});
}

TEST(ChildDevice, DeviceBeyondTheVisibleListIsAUsageError) {
  try {
    child_device_for("cuda:2", "4,6");
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("cuda:2"), std::string::npos) << message;
    EXPECT_NE(message.find("CUDA_VISIBLE_DEVICES=4,6"), std::string::npos) << message;
    EXPECT_NE(message.find("cuda:0 to cuda:1"), std::string::npos) << message;
  }
}

// A device named twice, or one this machine does not have, is refused before any model starts
// (`--devices cpu,cpu` ran two timed workers on the same CPUs; `cpu:7` and `cuda:3` were taken).
TEST(DeviceList, DevicesThatDoNotExistOrRepeatAreRefusedWithWhatToDo) {
  auto refusal = [](const std::vector<std::string>& devices, bool affinity, const char* visible,
                    int gpus) -> std::string {
    try {
      check_device_list(devices, affinity, visible, gpus);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(refusal({"cpu"}, false, nullptr, 0), "");
  EXPECT_EQ(refusal({"cuda:0", "cuda:1"}, false, nullptr, 2), "");
  // The CPU twice: only with --cpu-affinity, which gives each worker its own CPUs.
  EXPECT_EQ(refusal({"cpu", "cpu"}, true, nullptr, 0), "");
  EXPECT_THAT(refusal({"cpu", "cpu"}, false, nullptr, 0),
              ::testing::AllOf(::testing::HasSubstr("names the CPU 2 times"),
                               ::testing::HasSubstr("--cpu-affinity"),
                               ::testing::HasSubstr("--accuracy-workers")));
  EXPECT_THAT(refusal({"cpu", "cpu:0"}, false, nullptr, 0), ::testing::HasSubstr("2 times"));
  // A GPU twice, whatever the spelling, even with --cpu-affinity.
  EXPECT_THAT(refusal({"cuda", "cuda:0"}, true, nullptr, 1),
              ::testing::HasSubstr("names cuda:0 2 times"));
  // Devices that are not there.
  EXPECT_THAT(refusal({"cpu:7"}, false, nullptr, 0),
              ::testing::AllOf(::testing::HasSubstr("one CPU device"),
                               ::testing::HasSubstr("--cpu-affinity 7")));
  EXPECT_THAT(refusal({"cuda:3"}, false, nullptr, 2),
              ::testing::HasSubstr("this machine has 2 GPU(s) (cuda:0 to cuda:1)"));
  EXPECT_THAT(refusal({"cuda"}, false, nullptr, 0), ::testing::HasSubstr("no GPU is visible"));
  EXPECT_THAT(refusal({"cuda:2"}, false, "4,6", 8),
              ::testing::HasSubstr("CUDA_VISIBLE_DEVICES=4,6"));
}

}  // namespace
}  // namespace zoobench
