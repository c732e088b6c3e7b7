// File reading and atomic replacement.
#include "zoobench/util/files.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <cerrno>
#include <cstring>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

namespace zoobench {

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void write_file_atomically(const std::string& path, const std::string& contents) {
  std::filesystem::path target(path);
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path());
  const std::string temporary = path + ".tmp" + std::to_string(::getpid());
  {
    std::FILE* out = std::fopen(temporary.c_str(), "wb");
    if (out == nullptr) throw std::runtime_error("cannot write " + temporary);
    bool ok = std::fwrite(contents.data(), 1, contents.size(), out) == contents.size();
    ok = std::fflush(out) == 0 && ok;
    ok = ::fsync(fileno(out)) == 0 && ok;
    ok = std::fclose(out) == 0 && ok;
    if (!ok) throw std::runtime_error("cannot write " + temporary + " (disk full?)");
  }
  std::filesystem::rename(temporary, target);
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

}  // namespace zoobench
