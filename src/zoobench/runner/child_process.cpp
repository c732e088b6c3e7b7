// fork/exec with a process group, a deadline and log redirection.
#include "zoobench/runner/child_process.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <thread>

#include "zoobench/util/cpu_affinity.h"
#include "zoobench/util/crash_report.h"

namespace zoobench {
namespace {

constexpr double kGraceSeconds = 5.0;

void stop_group(pid_t pid, int& status, bool& reaped) {
  ::kill(-pid, SIGTERM);
  // A process paused by another model's timed section (util/pipeline_pause.h) takes the
  // SIGTERM only once continued.
  ::kill(-pid, SIGCONT);
  auto start = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() <
         kGraceSeconds) {
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      reaped = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // Whatever is left of the group (the child, or grandchildren it started) is killed.
  ::kill(-pid, SIGKILL);
  if (!reaped) {
    ::waitpid(pid, &status, 0);
    reaped = true;
  }
}

// Slurm's scancel and time limit, and a terminal's Ctrl-C, signal every process of the job,
// the model's as well as this one, in no set order: a model that died of SIGTERM or SIGINT while
// this process is being interrupted was interrupted with it, not crashed, and gets no row
// (--resume runs it again). This process's own signal may land a moment after the child's death.
bool interrupted_with_parent(int signal, const std::atomic<bool>& interrupt) {
  if (signal != SIGTERM && signal != SIGINT) return false;
  for (int waited_ms = 0; waited_ms < 1000 && !interrupt.load(); waited_ms += 20) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return interrupt.load();
}

}  // namespace

std::string signal_name(int signal) {
  if (const char* name = crash_report::known_signal_name(signal)) return name;
  return "signal " + std::to_string(signal);
}

std::string current_executable() {
  std::error_code error;
  auto path = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string("zoobench") : path.string();
}

namespace {

// What the forked child needs, made before fork: after it the child may not allocate.
struct ChildLaunch {
  std::vector<char*> args;
  cpu_set_t cpu_set;
  bool pin = false;
  std::string pin_failure;
  pid_t parent = 0;
  int log_fd = -1;
  sigset_t previous_mask;
  const std::vector<std::string>* extra_environment = nullptr;
};

// The child's side of fork: its own process group, output to the log, default signal
// handling, its CPUs, then the program. Never returns.
[[noreturn]] void exec_child(const ChildLaunch& launch) {
  ::setpgid(0, 0);
  // A parent killed outright (SIGKILL, OOM killer) cannot stop its children: the kernel does,
  // so no orphan goes on using the GPU beside a resumed run. The check after it closes the
  // race with a parent that died before prctl.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != launch.parent) ::_exit(137);
  ::dup2(launch.log_fd, STDOUT_FILENO);
  ::dup2(launch.log_fd, STDERR_FILENO);
  int null_fd = ::open("/dev/null", O_RDONLY);
  if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
  ::sigprocmask(SIG_SETMASK, &launch.previous_mask, nullptr);  // a pending SIGTERM now ends it
  for (const auto& assignment : *launch.extra_environment)
    ::putenv(const_cast<char*>(assignment.c_str()));
  if (launch.pin && ::sched_setaffinity(0, sizeof(launch.cpu_set), &launch.cpu_set) != 0) {
    const char* why = std::strerror(errno);
    [[maybe_unused]] auto written =
        ::write(STDERR_FILENO, launch.pin_failure.data(), launch.pin_failure.size());
    written = ::write(STDERR_FILENO, why, std::strlen(why));
    written = ::write(STDERR_FILENO, "\n", 1);
    ::_exit(127);
  }
  ::execv(launch.args[0], launch.args.data());
  std::fprintf(stderr, "zoobench: cannot execute %s: %s\n", launch.args[0], std::strerror(errno));
  ::_exit(127);
}

// Polls the child until it ends, the timeout passes or an interrupt comes; then classifies how
// it ended.
void wait_for_child(pid_t pid, std::chrono::steady_clock::time_point start, double timeout_s,
                    const std::atomic<bool>& interrupt, ChildOutcome& outcome) {
  int status = 0;
  bool reaped = false;
  while (!reaped) {
    if (::waitpid(pid, &status, WNOHANG) == pid) break;
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const bool interrupted = interrupt.load();
    if (interrupted || (timeout_s > 0 && elapsed > timeout_s)) {
      stop_group(pid, status, reaped);
      outcome.kind = interrupted ? ChildOutcome::Kind::kInterrupted : ChildOutcome::Kind::kTimedOut;
      outcome.seconds = elapsed;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // A model's process may have started helpers of its own (compiler workers): reap the group.
  ::kill(-pid, SIGKILL);
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (WIFSIGNALED(status) && interrupted_with_parent(WTERMSIG(status), interrupt)) {
    outcome.kind = ChildOutcome::Kind::kInterrupted;
  } else if (timeout_s > 0 && outcome.seconds > timeout_s) {
    // A child that finished between two polls, after its deadline, still ran out of time: the
    // timeout wins whatever the child's status (a tiny --timeout must not record passes).
    outcome.kind = ChildOutcome::Kind::kTimedOut;
    outcome.exited_late = true;
  } else if (WIFSIGNALED(status)) {
    outcome.kind = ChildOutcome::Kind::kSignaled;
    outcome.signal = WTERMSIG(status);
  } else {
    outcome.kind = ChildOutcome::Kind::kExited;
    outcome.exit_code = WEXITSTATUS(status);
  }
}

}  // namespace

ChildOutcome run_child(const std::vector<std::string>& argv, const std::string& log_path,
                       double timeout_s, const std::atomic<bool>& interrupt,
                       const std::vector<std::string>& extra_environment,
                       const std::vector<int>& cpus) {
  ChildOutcome outcome;
  auto start = std::chrono::steady_clock::now();
  if (std::filesystem::path(log_path).has_parent_path()) {
    std::filesystem::create_directories(std::filesystem::path(log_path).parent_path());
  }
  ChildLaunch launch;
  launch.log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (launch.log_fd < 0) {
    outcome.kind = ChildOutcome::Kind::kFailedToStart;
    outcome.error = "cannot open log " + log_path + ": " + std::strerror(errno);
    return outcome;
  }
  struct stat log_stat {};
  if (::fstat(launch.log_fd, &log_stat) == 0)
    outcome.log_offset = static_cast<int64_t>(log_stat.st_size);
  for (const auto& a : argv) launch.args.push_back(const_cast<char*>(a.c_str()));
  launch.args.push_back(nullptr);
  CPU_ZERO(&launch.cpu_set);
  for (int cpu : cpus) CPU_SET(cpu, &launch.cpu_set);
  launch.pin = !cpus.empty();
  launch.pin_failure = "zoobench: cannot run on CPUs " + format_cpu_list(cpus) + ": ";
  launch.parent = ::getpid();
  launch.extra_environment = &extra_environment;
  // SIGINT and SIGTERM stay blocked across fork until the child has reset their handlers: a
  // SIGTERM that reached the child earlier ran the parent's inherited handler (a flag) and was
  // lost, and the child then ran to the end past its timeout.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &stop_signals, &launch.previous_mask);
  pid_t pid = ::fork();
  if (pid == 0) exec_child(launch);
  ::pthread_sigmask(SIG_SETMASK, &launch.previous_mask, nullptr);
  ::close(launch.log_fd);
  if (pid < 0) {
    outcome.kind = ChildOutcome::Kind::kFailedToStart;
    outcome.error = std::string("fork failed: ") + std::strerror(errno);
    return outcome;
  }
  ::setpgid(pid, pid);  // also from the parent, so the group exists before any kill
  wait_for_child(pid, start, timeout_s, interrupt, outcome);
  return outcome;
}

}  // namespace zoobench
