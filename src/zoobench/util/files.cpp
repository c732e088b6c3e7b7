// File reading and atomic replacement.
#include "zoobench/util/files.h"

#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace zoobench {

std::string read_text_file(const std::string& path, std::uintmax_t max_bytes) {
  // O_NONBLOCK: opening a FIFO without a writer returns at once, and fstat then refuses it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw std::runtime_error("cannot read " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw std::runtime_error("cannot read " + path + ": not a regular file");
  }
  if (static_cast<std::uintmax_t>(st.st_size) > max_bytes) {
    ::close(fd);
    throw std::runtime_error("cannot read " + path + ": " + std::to_string(st.st_size) +
                             " bytes, more than the " + std::to_string(max_bytes) +
                             " such a file may hold");
  }
  std::string bytes;
  bytes.reserve(static_cast<std::size_t>(st.st_size));  // a model's artifact is gigabytes
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      throw std::runtime_error("cannot read " + path + ": " + std::strerror(error));
    }
    if (n == 0) break;
    bytes.append(buffer, static_cast<std::size_t>(n));
    if (bytes.size() > max_bytes) {  // it grew while being read
      ::close(fd);
      throw std::runtime_error("cannot read " + path + ": more than " +
                               std::to_string(max_bytes) + " bytes");
    }
  }
  ::close(fd);
  return bytes;
}

int write_fully(int fd, const std::string& bytes) {
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    written += static_cast<std::size_t>(n);
  }
  return 0;
}

int try_write_file_atomically(const std::string& path, const std::string& contents,
                              std::string& failed_path) {
  std::filesystem::path target(path);
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path());
  const std::string temporary = path + ".tmp" + std::to_string(::getpid());
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    // Nothing was created: what is there (a folder of that name?) is not ours to remove.
    failed_path = temporary;
    return errno;
  }
  int error = write_fully(fd, contents);
  if (error == 0 && ::fsync(fd) != 0) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && ::rename(temporary.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    // A full disk would otherwise keep the part written, under a name no one cleans up.
    ::unlink(temporary.c_str());
    failed_path = path;
  }
  return error;
}

void write_file_atomically(const std::string& path, const std::string& contents) {
  std::string failed;
  if (const int error = try_write_file_atomically(path, contents, failed); error != 0) {
    throw std::runtime_error(failed == path ? "cannot write " + path + ": " + std::strerror(error)
                                            : "cannot write " + path + ": cannot create " +
                                                  failed + ": " + std::strerror(error));
  }
}

namespace {
int remove_entry(const char* path, const struct stat*, int type, struct FTW*) {
  // FTW_DEPTH visits a folder after its contents: rmdir then finds it empty.
  return (type == FTW_DP ? ::rmdir(path) : ::unlink(path)) == 0 ? 0 : errno;
}
}  // namespace

bool remove_tree(const std::string& path, std::string* error) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) return true;
  } else {
    const int code = ::nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    if (code == 0) return true;
    errno = code > 0 ? code : errno;
  }
  if (error != nullptr) *error = "cannot remove " + path + ": " + std::strerror(errno);
  return false;
}

PrivateFileCopy::PrivateFileCopy(const std::string& bytes, const std::string& file_name) {
  const char* tmpdir = std::getenv("TMPDIR");
  std::string pattern = std::string(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp") +
                        "/zoobench-verified-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("cannot make a private folder for a copy of " + file_name + " (" +
                             pattern + "): " + std::strerror(errno));
  }
  folder_ = pattern;
  path_ = folder_ + "/" + file_name;
  const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  int error = fd < 0 ? errno : write_fully(fd, bytes);
  if (fd >= 0 && ::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) {
    remove_tree(folder_);
    throw std::runtime_error("cannot write " + path_ + ": " + std::strerror(error));
  }
}

PrivateFileCopy::~PrivateFileCopy() { remove_tree(folder_); }

}  // namespace zoobench
