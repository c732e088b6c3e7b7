// The device gate of a run: several model pipelines share one device, each model's runs on it
// hold it shared, and a timed section holds it alone. Two advisory locks (flock) on files beside
// the run's results, shared between processes:
//   <path>       held shared by every run on the device, exclusively by a timed section;
//   <path>.turn  a timed section's turn: held exclusively by a section waiting for or holding
//                the device, so that no new shared hold starts meanwhile (flock itself would let
//                a stream of shared holders keep a waiting section out for ever).
// A shared hold takes <path>.turn shared, then <path> shared, then lets the turn go. The Python
// side of the torch.compile backends drops and takes again this process's shared hold around a
// compile (tools/zoo_compile/device_gate.py) through the same descriptors, with the same steps.
// The descriptors are not inherited by child processes (O_CLOEXEC).
#pragma once

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace zoobench {

class DeviceGate {
 public:
  // An empty path: a gate that never blocks (a run with one pipeline and no export beside it).
  // Throws std::runtime_error naming the file when it cannot be opened.
  explicit DeviceGate(const std::string& path = "");
  ~DeviceGate();
  DeviceGate(const DeviceGate&) = delete;
  DeviceGate& operator=(const DeviceGate&) = delete;

  // Held while the object lives; the holds of one gate nest (threads and scopes of one process
  // count as one holder).
  class Shared {
   public:
    explicit Shared(DeviceGate& gate);
    ~Shared();
    Shared(const Shared&) = delete;
    Shared& operator=(const Shared&) = delete;

   private:
    DeviceGate& gate_;
  };

  // The device alone. A shared hold of this process is dropped while it lasts and taken again
  // after (asking for the device alone while holding it shared would wait on itself).
  class Exclusive {
   public:
    explicit Exclusive(DeviceGate& gate);
    ~Exclusive();
    Exclusive(const Exclusive&) = delete;
    Exclusive& operator=(const Exclusive&) = delete;
    // When the device became this process's alone (wall clock, for the rows).
    std::chrono::system_clock::time_point since() const { return since_; }

   private:
    DeviceGate& gate_;
    std::chrono::system_clock::time_point since_;
  };

  bool enabled() const { return device_fd_ >= 0; }
  const std::string& path() const { return path_; }
  // (device descriptor, turn descriptor) while this process holds the device shared and not
  // alone, for the Python side to drop the hold across a compile; nullopt otherwise.
  std::optional<std::pair<int, int>> shared_descriptors() const;

 private:
  void take_shared_locked();
  void drop_shared_locked();

  std::string path_;
  int device_fd_ = -1, turn_fd_ = -1;
  int shared_ = 0;  // nested shared holds
  bool exclusive_ = false;
  mutable std::mutex mutex_;
};

// The gate of this process: configured once (a model's process from --timing-lock, a run's
// parent for its exports); unconfigured, a gate that never blocks.
DeviceGate& process_device_gate();
void configure_process_device_gate(const std::string& path);

}  // namespace zoobench
