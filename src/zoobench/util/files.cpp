// File reading and atomic replacement.
#include "zoobench/util/files.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

namespace zoobench {

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::vector<char> read_binary_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return std::vector<char>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
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

}  // namespace zoobench
