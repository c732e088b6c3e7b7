// A child process with its own process group (so a timeout or an interrupt can stop it and
// everything it started), its output appended to a log file, and a deadline.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <optional>
#include <string>
#include <vector>

namespace zoobench {

struct ChildOutcome {
  enum class Kind {
    kExited,
    kSignaled,
    kTimedOut,
    kInterrupted,
    kFailedToStart
  } kind = Kind::kExited;
  int exit_code = 0;  // kExited
  int signal = 0;     // kSignaled
  double seconds = 0;
  std::string error;       // kFailedToStart
  int64_t log_offset = 0;  // the log's size before the child started: what follows is its own
  // kTimedOut: the child exited by itself, but after its deadline (between two polls). Which of
  // its rows came in time is unknown, so none of them counts.
  bool exited_late = false;
};

// "SIGSEGV", "SIGABRT", ... (or "signal N").
std::string signal_name(int signal);

// Runs `argv` (argv[0] is the program path) to completion or until `timeout_s` passes or
// `interrupt` becomes true; then the whole process group gets SIGTERM, and SIGKILL after a
// grace period. stdout and stderr go to `log_path` (appended). A non-empty `cpus` pins the
// child to those CPUs before it executes, as taskset does, so everything that sizes itself by
// the CPUs it may use at load time (OpenMP's thread pool) sees only them. A child that dies of
// SIGTERM or SIGINT while `interrupt` is (or within a second becomes) true was interrupted with
// this process, as Slurm's scancel and a terminal's Ctrl-C do it: kInterrupted, not kSignaled.
ChildOutcome run_child(const std::vector<std::string>& argv, const std::string& log_path,
                       double timeout_s, const std::atomic<bool>& interrupt,
                       const std::vector<std::string>& extra_environment = {},
                       const std::vector<int>& cpus = {});

// The path of the running executable (/proc/self/exe).
std::string current_executable();

}  // namespace zoobench
