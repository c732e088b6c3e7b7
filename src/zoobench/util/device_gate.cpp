// flock's shared and exclusive holds, with a turn that keeps new shared holds out while a timed
// section waits.
#include "zoobench/util/device_gate.h"

#include <sys/file.h>
#include <unistd.h>

#include <memory>

#include "zoobench/util/lock_file.h"

namespace zoobench {

DeviceGate::DeviceGate(const std::string& path) : path_(path) {
  if (path.empty()) return;
  device_fd_ = open_lock_file(path);
  try {
    turn_fd_ = open_lock_file(path + ".turn");
  } catch (...) {
    ::close(device_fd_);
    device_fd_ = -1;
    throw;
  }
}

DeviceGate::~DeviceGate() {
  // Closing releases the holds; an explicit unlock also releases them for a descriptor that a
  // forked process still shares.
  for (int fd : {device_fd_, turn_fd_}) {
    if (fd < 0) continue;
    ::flock(fd, LOCK_UN);
    ::close(fd);
  }
}

void DeviceGate::take_shared_locked() {
  take_lock(turn_fd_, LOCK_SH, path_ + ".turn");
  take_lock(device_fd_, LOCK_SH, path_);
  take_lock(turn_fd_, LOCK_UN, path_ + ".turn");
}

void DeviceGate::drop_shared_locked() { take_lock(device_fd_, LOCK_UN, path_); }

std::optional<std::pair<int, int>> DeviceGate::shared_descriptors() const {
  std::lock_guard<std::mutex> guard(mutex_);
  if (!enabled() || shared_ == 0 || exclusive_) return std::nullopt;
  return std::make_pair(device_fd_, turn_fd_);
}

DeviceGate::Shared::Shared(DeviceGate& gate) : gate_(gate) {
  if (!gate_.enabled()) return;
  std::lock_guard<std::mutex> guard(gate_.mutex_);
  // Inside this process's own timed section the device is already this process's. Counted once
  // held, so a hold that could not be taken is not let go by the destructor.
  if (gate_.shared_ == 0 && !gate_.exclusive_) gate_.take_shared_locked();
  ++gate_.shared_;
}

DeviceGate::Shared::~Shared() {
  if (!gate_.enabled()) return;
  std::lock_guard<std::mutex> guard(gate_.mutex_);
  if (--gate_.shared_ == 0 && !gate_.exclusive_) gate_.drop_shared_locked();
}

DeviceGate::Exclusive::Exclusive(DeviceGate& gate) : gate_(gate) {
  if (gate_.enabled()) {
    std::lock_guard<std::mutex> guard(gate_.mutex_);
    if (gate_.exclusive_) throw std::logic_error("a timed section inside another one");
    if (gate_.shared_ > 0) gate_.drop_shared_locked();
    take_lock(gate_.turn_fd_, LOCK_EX, gate_.path_ + ".turn");
    take_lock(gate_.device_fd_, LOCK_EX, gate_.path_);
    gate_.exclusive_ = true;
  }
  since_ = std::chrono::system_clock::now();
}

DeviceGate::Exclusive::~Exclusive() {
  if (!gate_.enabled()) return;
  std::lock_guard<std::mutex> guard(gate_.mutex_);
  gate_.exclusive_ = false;
  ::flock(gate_.device_fd_, LOCK_UN);
  if (gate_.shared_ > 0) {
    // Back to a shared hold: converting the turn from exclusive to shared keeps other sections
    // out until this process holds the device shared again.
    ::flock(gate_.turn_fd_, LOCK_SH);
    ::flock(gate_.device_fd_, LOCK_SH);
  }
  ::flock(gate_.turn_fd_, LOCK_UN);
}

namespace {
std::unique_ptr<DeviceGate>& process_gate_slot() {
  static std::unique_ptr<DeviceGate> gate = std::make_unique<DeviceGate>();
  return gate;
}
}  // namespace

DeviceGate& process_device_gate() { return *process_gate_slot(); }

void configure_process_device_gate(const std::string& path) {
  process_gate_slot() = std::make_unique<DeviceGate>(path);
}

}  // namespace zoobench
