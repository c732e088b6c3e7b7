#include "zoobench/util/lock_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace zoobench {

int open_lock_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  // Another user's lock file (a GPU's gate is the machine's: runner/device_gates.h): flock
  // holds it through a descriptor opened for reading as well.
  if (fd < 0 && errno == EACCES) fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    throw std::runtime_error("cannot open the lock file " + path + ": " + std::strerror(errno));
  return fd;
}

bool take_lock(int fd, int operation, const std::string& path) {
  while (::flock(fd, operation) != 0) {
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK && (operation & LOCK_NB) != 0) return false;
    throw std::runtime_error("cannot lock " + path + ": " + std::strerror(errno));
  }
  return true;
}

}  // namespace zoobench
