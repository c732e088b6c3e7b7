// Helpers for zoobench's tests: scratch folders, the repository's paths, and running the
// reference Python (the real torch/torchvision) to produce expected values.
#pragma once

#include <sys/resource.h>

#include <cstdint>
#include <string>
#include <vector>

namespace zoobench::testing {

// A fresh empty folder under the build tree, named after the running test; removed on
// destruction unless ZOOBENCH_KEEP_TEST_FILES is set.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string repo_root();
std::string binary_dir();
// The python interpreter that has torch (Debian's /usr/bin/python3 here).
std::string python();

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs `command` through /bin/sh and captures its output.
CommandResult run_command(const std::string& command);

// Runs a Python snippet with the reference interpreter; fails the current test (and returns
// the output) when it exits non-zero.
CommandResult run_python(const std::string& code);

// The kernel's own list of the CPUs this process may use, in taskset's syntax ("0-1"), from
// /proc/self/status; empty when it has none. Independent of zoobench's util/cpu_affinity.
std::string cpus_allowed_list();

// While it lives, files of this process may grow to `bytes` and no further: a write beyond
// fails with EFBIG as one on a full disk fails with ENOSPC, with no root or tmpfs needed.
// SIGXFSZ, which would kill the test, is ignored meanwhile. Lowering the soft limit and raising
// it back needs no privilege.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(std::uintmax_t bytes);
  ~FileSizeLimit();
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  struct rlimit saved_ {};
  void (*previous_handler_)(int) = nullptr;
};

// The files under `folder` (and its subfolders) whose names hold ".tmp": what an atomic write
// that failed would leave behind.
std::vector<std::string> temporary_files(const std::string& folder);

}  // namespace zoobench::testing
