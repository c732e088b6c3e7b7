// The locks of a zoo that several runs and exporters share (docs/formats.md, "A zoo shared by
// several runs"), all advisory (flock) on files under <zoo>/.locks/ that nobody deletes:
//   .locks/<suite>/<model>.export.lock  exclusive while the exporter makes the model's folder;
//   .locks/<suite>/<model>.use.lock     shared by every run while one of its jobs may read it;
//   index.json.lock                     around each read-modify-write of index.json (exporter).
// Eviction (--zoo-max-gb) deletes a model's folder only with both of its locks taken exclusively
// without waiting: never while another process exports it or any run uses it.
#pragma once

#include <string>

namespace zoobench {

// A shared hold of a model's use lock, released when destroyed. An empty zoo_dir holds nothing;
// nor does a zoo where the lock file cannot be made (one this user may only read).
class ModelUseLock {
 public:
  ModelUseLock() = default;
  ModelUseLock(const std::string& zoo_dir, const std::string& suite, const std::string& model);
  ModelUseLock(ModelUseLock&& other) noexcept;
  ModelUseLock& operator=(ModelUseLock&& other) noexcept;
  ModelUseLock(const ModelUseLock&) = delete;
  ModelUseLock& operator=(const ModelUseLock&) = delete;
  ~ModelUseLock();
  bool held() const { return fd_ >= 0; }

 private:
  void release();
  int fd_ = -1;
};

enum class EvictOutcome { kDeleted, kInUse, kFailed };

// Deletes <zoo>/<suite>/<model> when no process exports or uses the model (both locks taken
// exclusively without waiting); kInUse leaves it. `error` says why on kFailed.
EvictOutcome evict_model_folder(const std::string& zoo_dir, const std::string& suite,
                                const std::string& model, std::string* error = nullptr);

// The lock file of `model`'s `what` ("use" or "export"), its folder created.
std::string model_lock_path(const std::string& zoo_dir, const std::string& suite,
                            const std::string& model, const std::string& what);

}  // namespace zoobench
