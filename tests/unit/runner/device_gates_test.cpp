// Where the device gates are (runner/device_gates.h): a GPU's is the machine's, the same for
// two runs writing into different folders, so their timed sections and model runs exclude each
// other; the CPU's stays beside the run's results.
#include "zoobench/runner/device_gates.h"

#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "testing/testing.h"
#include "zoobench/util/device_gate.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/lock_file.h"

namespace zoobench {
namespace {

namespace fs = std::filesystem;

class DeviceGatesTest : public ::testing::Test {
 protected:
  void SetUp() override { ::setenv("ZOOBENCH_DEVICE_GATE_DIR", gates().c_str(), 1); }
  void TearDown() override { ::unsetenv("ZOOBENCH_DEVICE_GATE_DIR"); }
  std::string gates() const { return dir.file("machine-gates"); }
  std::string run(const char* name) const { return dir.file(name); }
  zoobench::testing::ScratchDir dir;
};

TEST_F(DeviceGatesTest, TheCpusGateIsTheRunsOwn) {
  EXPECT_EQ(device_gate_path("cpu", run("a"), nullptr),
            (fs::path(run("a")) / ".device-gate-cpu.lock").string());
  EXPECT_NE(device_gate_path("cpu", run("a"), nullptr), device_gate_path("cpu", run("b"), nullptr));
  EXPECT_FALSE(fs::exists(gates())) << "a CPU run made the machine's GPU gate folder";
}

TEST_F(DeviceGatesTest, AGpusGateIsTheMachinesNamedAfterTheGpu) {
  const std::string gpu1 = device_gate_path("cuda:1", run("a"), nullptr);
  EXPECT_EQ(gpu1, (fs::path(gates()) / "gpu-1.lock").string());
  // Two runs in other folders, one addressing the GPU through CUDA_VISIBLE_DEVICES.
  EXPECT_EQ(device_gate_path("cuda:0", run("b"), "1"), gpu1);
  EXPECT_EQ(device_gate_path("cuda:1", run("c"), "4, 1"), gpu1);
  // "cuda" is torch's cuda:0; other GPUs have other gates.
  EXPECT_EQ(device_gate_path("cuda", run("a"), nullptr), device_gate_path("cuda:0", run("b"), ""));
  EXPECT_NE(device_gate_path("cuda:0", run("a"), nullptr), gpu1);
  EXPECT_EQ(device_gate_path("cuda:0", run("a"), "GPU-8f2a"),
            (fs::path(gates()) / "gpu-GPU-8f2a.lock").string());
  EXPECT_EQ(device_gate_path("cuda:0", run("a"), "MIG-GPU-8f2a/1/0"),
            (fs::path(gates()) / "gpu-MIG-GPU-8f2a_1_0.lock").string());
}

TEST_F(DeviceGatesTest, TheMachinesFolderIsMadeOpenToEveryUser) {
  device_gate_path("cuda:0", run("a"), nullptr);
  struct stat info {};
  ASSERT_EQ(::stat(gates().c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 01777);
}

TEST_F(DeviceGatesTest, ARunsModelsHoldingTheGpuKeepAnotherRunsTimingOff) {
  DeviceGate first_run(device_gate_path("cuda:0", run("a"), nullptr));
  const std::string second_runs_path = device_gate_path("cuda:0", run("b"), nullptr);
  const int fd = open_lock_file(second_runs_path);
  {
    DeviceGate::Shared on_device(first_run);
    // What the other run's timed section takes (util/device_gate.cpp), without waiting.
    EXPECT_FALSE(take_lock(fd, LOCK_EX | LOCK_NB, second_runs_path))
        << "another run's timed section could start beside this run's model";
  }
  EXPECT_TRUE(take_lock(fd, LOCK_EX | LOCK_NB, second_runs_path));
  ::close(fd);
}

TEST_F(DeviceGatesTest, AFolderThatCannotBeMadeSaysWhatToSet) {
  std::ofstream(run("a-file")) << "not a folder";
  ::setenv("ZOOBENCH_DEVICE_GATE_DIR", (run("a-file") + "/gates").c_str(), 1);
  try {
    device_gate_path("cuda:0", run("a"), nullptr);
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("ZOOBENCH_DEVICE_GATE_DIR"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace zoobench
