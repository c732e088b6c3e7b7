#include "zoobench/zoo/zoo_locks.h"

#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>

#include "zoobench/util/files.h"
#include "zoobench/util/lock_file.h"
#include "zoobench/util/log.h"

namespace fs = std::filesystem;

namespace zoobench {
namespace {

// An exclusive hold taken without waiting, released (and its file closed) when destroyed.
class ExclusiveTry {
 public:
  explicit ExclusiveTry(const std::string& path) : fd_(open_lock_file(path)) {
    taken_ = take_lock(fd_, LOCK_EX | LOCK_NB, path);
  }
  ~ExclusiveTry() {
    if (taken_) ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
  ExclusiveTry(const ExclusiveTry&) = delete;
  ExclusiveTry& operator=(const ExclusiveTry&) = delete;
  bool taken() const { return taken_; }

 private:
  int fd_;
  bool taken_ = false;
};

}  // namespace

std::string model_lock_path(const std::string& zoo_dir, const std::string& suite,
                            const std::string& model, const std::string& what) {
  const fs::path folder = fs::path(zoo_dir) / ".locks" / suite;
  fs::create_directories(folder);
  return (folder / (model + "." + what + ".lock")).string();
}

ModelUseLock::ModelUseLock(const std::string& zoo_dir, const std::string& suite,
                           const std::string& model) {
  if (zoo_dir.empty()) return;
  try {
    const std::string path = model_lock_path(zoo_dir, suite, model, "use");
    fd_ = open_lock_file(path);
    take_lock(fd_, LOCK_SH, path);  // waits only while an eviction deletes the folder
  } catch (const std::exception& e) {
    // A zoo this user may only read (a shared one, run with --no-export) is used without the
    // lock: no run that could evict from it has the right to either.
    log::debug("zoo: {}/{} used without its use lock: {}", suite, model, e.what());
    release();
  }
}

ModelUseLock::ModelUseLock(ModelUseLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

ModelUseLock& ModelUseLock::operator=(ModelUseLock&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

ModelUseLock::~ModelUseLock() { release(); }

void ModelUseLock::release() {
  if (fd_ < 0) return;
  ::flock(fd_, LOCK_UN);
  ::close(fd_);
  fd_ = -1;
}

EvictOutcome evict_model_folder(const std::string& zoo_dir, const std::string& suite,
                                const std::string& model, std::string* error) {
  try {
    // Export first, then use: the exporter holds only the export lock, a run only the use lock.
    ExclusiveTry exporting(model_lock_path(zoo_dir, suite, model, "export"));
    if (!exporting.taken()) return EvictOutcome::kInUse;
    ExclusiveTry using_it(model_lock_path(zoo_dir, suite, model, "use"));
    if (!using_it.taken()) return EvictOutcome::kInUse;
    const std::string folder = (fs::path(zoo_dir) / suite / model).string();
    return remove_tree(folder, error) ? EvictOutcome::kDeleted : EvictOutcome::kFailed;
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return EvictOutcome::kFailed;
  }
}

}  // namespace zoobench
