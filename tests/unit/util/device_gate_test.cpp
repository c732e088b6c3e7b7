// The device gate between model pipelines: shared holds coexist, a timed section waits for them
// and then has the device alone, no shared hold starts while a section waits (its turn), and
// the Python side's drop and take of a hold through the descriptors works as zoobench's own.
// Two DeviceGate objects on one path open the files twice, so their flock holds conflict as two
// processes' do.
#include "zoobench/util/device_gate.h"

#include <gtest/gtest.h>
#include <sys/file.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "testing/testing.h"

namespace zoobench {
namespace {

using namespace std::chrono_literals;

// Whether `done` becomes true within `wait`.
bool becomes_true(const std::atomic<bool>& done, std::chrono::milliseconds wait) {
  const auto until = std::chrono::steady_clock::now() + wait;
  while (std::chrono::steady_clock::now() < until) {
    if (done.load()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return done.load();
}

class DeviceGateTest : public ::testing::Test {
 protected:
  zoobench::testing::ScratchDir dir;
  std::string path() const { return dir.file(".device-gate-cuda.lock"); }
};

TEST_F(DeviceGateTest, SharedHoldsCoexistAndATimedSectionWaitsForThem) {
  DeviceGate first(path()), second(path()), timer(path());
  auto one = std::make_unique<DeviceGate::Shared>(first);
  auto two = std::make_unique<DeviceGate::Shared>(second);  // does not wait for the first
  std::atomic<bool> timing{false};
  std::thread section([&] {
    DeviceGate::Exclusive alone(timer);
    timing = true;
  });
  EXPECT_FALSE(becomes_true(timing, 200ms)) << "a timed section ran beside shared holds";
  one.reset();
  EXPECT_FALSE(becomes_true(timing, 100ms)) << "a timed section ran beside a shared hold";
  two.reset();
  EXPECT_TRUE(becomes_true(timing, 2000ms));
  section.join();
}

TEST_F(DeviceGateTest, NoSharedHoldStartsWhileATimedSectionWaits) {
  DeviceGate pipeline(path()), timer(path()), latecomer(path());
  auto held = std::make_unique<DeviceGate::Shared>(pipeline);
  std::atomic<bool> timing{false}, timing_done{false}, late_started{false}, late_saw_timing{false};
  std::thread section([&] {
    DeviceGate::Exclusive alone(timer);
    timing = true;
    std::this_thread::sleep_for(100ms);
    timing_done = true;
  });
  std::this_thread::sleep_for(100ms);  // the section now waits, holding its turn
  std::thread late([&] {
    DeviceGate::Shared share(latecomer);
    late_saw_timing = timing_done.load();
    late_started = true;
  });
  EXPECT_FALSE(becomes_true(late_started, 200ms))
      << "a new shared hold started while a timed section waited for its turn";
  held.reset();
  section.join();
  late.join();
  EXPECT_TRUE(timing.load());
  EXPECT_TRUE(late_saw_timing.load()) << "the new hold started before the timed section ended";
}

TEST_F(DeviceGateTest, ATimedSectionOfAProcessThatHoldsTheDeviceSharedDoesNotWaitOnItself) {
  DeviceGate gate(path()), other(path());
  std::atomic<bool> other_timing{false};
  std::thread second;
  {
    DeviceGate::Shared share(gate);
    { DeviceGate::Exclusive alone(gate); }  // would wait for ever on its own share
    // The share is back once the section ends: another section waits for it.
    second = std::thread([&] {
      DeviceGate::Exclusive alone(other);
      other_timing = true;
    });
    EXPECT_FALSE(becomes_true(other_timing, 200ms)) << "the share was not taken back";
  }
  EXPECT_TRUE(becomes_true(other_timing, 2000ms));
  second.join();
}

TEST_F(DeviceGateTest, ThePythonSidesDropAndTakeThroughTheDescriptorsLetASectionIn) {
  DeviceGate model(path()), timer(path());
  DeviceGate::Shared share(model);
  const auto descriptors = model.shared_descriptors();
  ASSERT_TRUE(descriptors.has_value());
  const auto [device_fd, turn_fd] = *descriptors;
  // tools/zoo_compile/device_gate.py's drop: a compile starts.
  ASSERT_EQ(::flock(device_fd, LOCK_UN), 0);
  std::atomic<bool> timing{false}, section_over{false};
  std::thread section([&] {
    DeviceGate::Exclusive alone(timer);
    timing = true;
    std::this_thread::sleep_for(50ms);
    section_over = true;
  });
  EXPECT_TRUE(becomes_true(timing, 2000ms)) << "a section waited for a compile off the device";
  // Its take (the turn shared, the device shared, the turn let go) waits for the section.
  ASSERT_EQ(::flock(turn_fd, LOCK_SH), 0);
  ASSERT_EQ(::flock(device_fd, LOCK_SH), 0);
  ASSERT_EQ(::flock(turn_fd, LOCK_UN), 0);
  EXPECT_TRUE(section_over.load()) << "the hold came back while the section ran";
  section.join();
}

TEST_F(DeviceGateTest, NoDescriptorsWithoutASharedHoldOrWithoutAPath) {
  DeviceGate gate(path()), none;
  EXPECT_FALSE(gate.shared_descriptors().has_value());
  {
    DeviceGate::Exclusive alone(gate);
    EXPECT_FALSE(gate.shared_descriptors().has_value());
  }
  DeviceGate::Shared share(none);
  EXPECT_FALSE(none.enabled());
  EXPECT_FALSE(none.shared_descriptors().has_value());
  DeviceGate::Exclusive alone(none);  // never blocks
}

}  // namespace
}  // namespace zoobench
