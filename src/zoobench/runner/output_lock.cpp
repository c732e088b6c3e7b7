// flock on a file in the output folder. The descriptor is inherited by the run's model
// processes (no O_CLOEXEC), so the lock lasts while any process of the run lives, not just the
// parent; the kernel releases it when the last one exits, so a crash leaves no stale lock.
#include "zoobench/runner/output_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "zoobench/util/errors.h"
#include "zoobench/util/text.h"

namespace zoobench {

OutputLock OutputLock::acquire(const std::string& directory) {
  std::filesystem::create_directories(directory);
  const std::string path = (std::filesystem::path(directory) / ".zoobench.lock").string();
  // Never through a link (a planted .zoobench.lock -> some file would have that file truncated
  // to our pid), and only a regular file.
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW, 0644);
  if (fd < 0 && errno == ELOOP)
    throw UsageError(path + " is a symbolic link; zoobench writes its lock only into a file of " +
                     "its own: remove the link and run again");
  if (fd < 0) throw UsageError("cannot open " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw UsageError(path + " is not a regular file; remove it and run again");
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    char owner[32] = {};
    const ssize_t n = ::pread(fd, owner, sizeof(owner) - 1, 0);
    ::close(fd);
    if (error != EWOULDBLOCK) throw UsageError("cannot lock " + path + ": " + std::strerror(error));
    const std::string pid = n > 0 ? trim(std::string(owner, static_cast<std::size_t>(n))) : "?";
    throw UsageError("another zoobench run (pid " + pid + ") is writing to " + directory +
                     ": wait for it to end, or stop it (kill -INT " + pid +
                     " keeps its finished rows), then run again with --resume");
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    // The lock holds without the pid; a second run's message then says "pid ?".
  }
  return OutputLock(fd);
}

OutputLock::OutputLock(OutputLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

OutputLock::~OutputLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace zoobench
