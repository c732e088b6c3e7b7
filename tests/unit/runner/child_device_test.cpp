// How suite workers pin a child process to its GPU (runner/child_device.h).
#include "zoobench/runner/child_device.h"

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

}  // namespace
}  // namespace zoobench
