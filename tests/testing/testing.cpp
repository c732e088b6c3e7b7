// Scratch folders and subprocess helpers for the tests.
#include "testing/testing.h"

#include "zoobench/util/files.h"

#include <gtest/gtest.h>

#include <array>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

namespace zoobench::testing {

ScratchDir::ScratchDir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : "scratch";
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  path_ = binary_dir() + "/test-scratch/" + name + "." + std::to_string(::getpid());
  std::string error;
  if (!remove_tree(path_, &error)) throw std::runtime_error(error);
  std::filesystem::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  if (std::getenv("ZOOBENCH_KEEP_TEST_FILES") == nullptr) {
    remove_tree(path_);
  }
}

std::string repo_root() { return ZOOBENCH_REPO_ROOT; }
std::string binary_dir() { return ZOOBENCH_BINARY_DIR; }
std::string python() { return ZOOBENCH_TEST_PYTHON; }

CommandResult run_command(const std::string& command) {
  CommandResult result;
  std::string full = command + " 2>&1";
  FILE* pipe = ::popen(full.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer;
  std::size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), n);
  int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

CommandResult run_python(const std::string& code) {
  char path_template[] = "/tmp/zoobench-test-XXXXXX.py";
  int fd = ::mkstemps(path_template, 3);
  if (fd < 0) {
    ADD_FAILURE() << "cannot create a temporary python file";
    return {};
  }
  ::close(fd);
  {
    std::ofstream out(path_template);
    out << code;
  }
  CommandResult result = run_command(python() + " " + path_template);
  std::remove(path_template);
  EXPECT_EQ(result.exit_code, 0) << "reference python failed:\n" << result.output;
  return result;
}

std::string cpus_allowed_list() {
  std::ifstream status("/proc/self/status");
  const std::string key = "Cpus_allowed_list:";
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const auto start = line.find_first_not_of(" \t", key.size());
    return start == std::string::npos ? "" : line.substr(start);
  }
  return "";
}

FileSizeLimit::FileSizeLimit(std::uintmax_t bytes) {
  ::getrlimit(RLIMIT_FSIZE, &saved_);
  previous_handler_ = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit limited = saved_;
  limited.rlim_cur = static_cast<rlim_t>(bytes);
  ::setrlimit(RLIMIT_FSIZE, &limited);
}

FileSizeLimit::~FileSizeLimit() {
  ::setrlimit(RLIMIT_FSIZE, &saved_);
  std::signal(SIGXFSZ, previous_handler_);
}

std::vector<std::string> temporary_files(const std::string& folder) {
  std::vector<std::string> found;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(folder)) {
    if (entry.path().filename().string().find(".tmp") != std::string::npos)
      found.push_back(entry.path().string());
  }
  return found;
}

}  // namespace zoobench::testing
