// What a zoobench process was doing when a fatal signal killed it. A suite worker's parent sees
// only "killed by SIGSEGV"; with the report in the model's log (one line naming the model and the
// phase, then the native frames), the row can say where, and a person can start from the frames.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace zoobench::crash_report {

// Handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT, on their own stack (a stack overflow
// is reported too). The handler writes "zoobench crash: <SIGNAL> during <phase>", the model and
// the native backtrace to stderr, then restores the default action and raises the signal again, so the
// process still dies of it (exit statuses and parents see the same as without the report).
void install();

// Also reports SIGTERM, the signal a suite worker's parent stops it with at its --timeout:
// "zoobench stopped: SIGTERM during <phase>", the model and the native frames of the thread that
// took the signal, then death by SIGTERM as before. Only in a worker (a model's own process),
// whose phase is the model's: the parent handles SIGTERM itself (an interrupted run).
void report_termination();

// What the process works on (the model, backend, device, mode) and what it is doing (the phase),
// for the report. Copied into fixed buffers (255 bytes each) that the handler reads.
// set_phase also logs (info) how long the phase it ends lasted, when at least
// kLoggedPhaseSeconds, and, in a model's process whose parent named a file in
// kPhaseFileVariable, writes the phase there (a line: seconds since the epoch, tab, the phase)
// for the run's progress.
void set_subject(const std::string& subject);
void set_phase(const std::string& phase);
inline constexpr double kLoggedPhaseSeconds = 0.05;
inline constexpr const char* kPhaseFileVariable = "ZOOBENCH_PHASE_FILE";

// A phase file as set_phase writes it: the phase, and when it began (seconds since the Unix
// epoch); nullopt when the file is missing or not one.
struct PublishedPhase {
  std::string phase;
  double since_s = 0;
};
std::optional<PublishedPhase> read_published_phase(const std::string& path);

// What the run's other model processes are doing now, from their phase files beside this
// process's (one "<file name>: <phase>" each); none outside a run with a phase file. A timed
// section records it: the device is its alone, the CPUs others may be busy.
std::vector<std::string> other_processes_phases();

// Sets a phase for a scope and restores the previous one.
class PhaseScope {
 public:
  explicit PhaseScope(const std::string& phase);
  ~PhaseScope();
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

 private:
  std::string previous_;
};

inline constexpr const char* kLinePrefix = "zoobench crash: ";
inline constexpr const char* kStopLinePrefix = "zoobench stopped: ";  // report_termination's

// The report's first line without its prefix ("SIGSEGV during accuracy: jit run"), from the last
// report in a log file after byte `offset` (a log may hold earlier runs); empty when none.
// `prefix`: kLinePrefix (a crash) or kStopLinePrefix (a worker stopped at its timeout).
std::string crash_line_from_log(const std::string& log_path, int64_t offset = 0,
                                const char* prefix = kLinePrefix);

// "SIGSEGV", "SIGABRT", ... for the signals a crash row or report names; nullptr for others.
// A string literal, so the signal handler can use it.
const char* known_signal_name(int signal);

}  // namespace zoobench::crash_report
