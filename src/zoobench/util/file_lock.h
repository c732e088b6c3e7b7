// An exclusive advisory lock (flock) on a file, held for the object's life, shared between
// processes: what keeps a model's timed section and an export from running at the same time.
// The file is opened without following a symbolic link, never truncated, and not inherited by
// child processes.
#pragma once

#include <string>

namespace zoobench {

class ExclusiveFileLock {
 public:
  // Blocks until the lock on `path` (created if missing) is held. An empty path holds nothing.
  // Throws std::runtime_error naming the file when it cannot be opened.
  explicit ExclusiveFileLock(const std::string& path);
  ExclusiveFileLock(const ExclusiveFileLock&) = delete;
  ExclusiveFileLock& operator=(const ExclusiveFileLock&) = delete;
  ~ExclusiveFileLock();

 private:
  int fd_ = -1;
};

}  // namespace zoobench
