#include "zoobench/util/crash_report.h"

#include <dirent.h>
#include <execinfo.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>

#include "zoobench/util/log.h"
#include "zoobench/util/symbolizer.h"
#include "zoobench/util/text.h"

namespace zoobench::crash_report {
namespace {

constexpr std::size_t kTextSize = 256;
char g_subject[kTextSize] = "";
char g_phase[kTextSize] = "";
std::mutex g_phase_mutex;  // writers only; the handler reads without it (a torn read is harmless)
std::chrono::steady_clock::time_point g_phase_start = std::chrono::steady_clock::now();

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

void copy_text(char* destination, const std::string& text) {
  const std::size_t n = std::min(text.size(), kTextSize - 1);
  std::memcpy(destination, text.data(), n);
  destination[n] = '\0';
}

// Only async-signal-safe calls from here on (write, backtrace after its warm-up, signal, raise),
// but for naming the frames (on_fatal_signal says how that is bounded).
void write_text(const char* text) {
  std::size_t left = std::strlen(text);
  while (left > 0) {
    const ssize_t written = ::write(STDERR_FILENO, text, left);
    if (written <= 0) return;
    text += written;
    left -= static_cast<std::size_t>(written);
  }
}

void write_hex(std::uintptr_t value) {
  char text[2 + 2 * sizeof(value) + 1];
  char* end = text + sizeof(text) - 1;
  *end = '\0';
  char* p = end;
  do {
    *--p = "0123456789abcdef"[value & 0xf];
    value >>= 4;
  } while (value != 0);
  *--p = 'x';
  *--p = '0';
  write_text(p);
}

// Where a SIGSEGV or SIGBUS happened. A jump to an address that holds no code (a null or freed
// function pointer: the pc is the faulting address) leaves the unwinder nothing to walk, so the
// backtrace ends at the signal frame; the return address on top of the stack still names the
// caller. A faulting address next to the stack pointer is a stack overflow.
void write_fault_site(const siginfo_t* info, const void* context) {
  const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
  write_text("\n  faulting address: ");
  write_hex(address);
#if defined(__x86_64__)
  const auto& registers = static_cast<const ucontext_t*>(context)->uc_mcontext.gregs;
  const auto pc = static_cast<std::uintptr_t>(registers[REG_RIP]);
  const auto sp = static_cast<std::uintptr_t>(registers[REG_RSP]);
  write_text(", pc ");
  write_hex(pc);
  if (address + 65536 > sp && address < sp + 65536) write_text(" (next to the stack pointer: a stack overflow?)");
  if (pc == address && sp != 0) {
    write_text(" (a jump to no code: a call through a null or freed function pointer?)\n  called from:\n");
    void* caller = *reinterpret_cast<void* const*>(sp);
    ::backtrace_symbols_fd(&caller, 1, STDERR_FILENO);
    return;
  }
#else
  (void)context;
#endif
  write_text("\n");
}

constexpr int kMaxFrames = 64;
constexpr unsigned kSymbolizeSeconds = 5;
void* g_frames[kMaxFrames];
int g_frame_count = 0;
volatile sig_atomic_t g_fatal_signal = 0;

// The report ends as the process would have without it: killed by the same signal (a suite's
// parent and exit statuses tell crashes, timeouts and stops apart by it).
[[noreturn]] void die_of(int signal) {
  ::signal(signal, SIG_DFL);
  sigset_t unblock;
  sigemptyset(&unblock);
  sigaddset(&unblock, signal);
  ::pthread_sigmask(SIG_UNBLOCK, &unblock, nullptr);
  ::raise(signal);
  ::_exit(128 + signal);
}

void on_symbolizer_stuck(int) {
  write_text("    (naming the frames took over 5 s; the frames as they are:)\n");
  ::backtrace_symbols_fd(g_frames, g_frame_count, STDERR_FILENO);
  die_of(g_fatal_signal);
}

void signal_handler(int signal, void (*handler)(int)) {
  struct sigaction action {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  ::sigaction(signal, &action, nullptr);
}

void on_fatal_signal(int signal, siginfo_t* info, void* context) {
  write_text("\n");
  write_text(signal == SIGTERM ? kStopLinePrefix : kLinePrefix);
  const char* name = known_signal_name(signal);
  write_text(name != nullptr ? name : "a fatal signal");
  if (g_phase[0] != '\0') {
    write_text(" during ");
    write_text(g_phase);
  }
  if (g_subject[0] != '\0') {
    write_text("\n  model: ");
    write_text(g_subject);
  }
  if ((signal == SIGSEGV || signal == SIGBUS) && info != nullptr) {
    write_fault_site(info, context);
  } else {
    write_text("\n");
  }
  write_text("  native backtrace (most recent call first):\n");
  g_fatal_signal = signal;
  g_frame_count = ::backtrace(g_frames, kMaxFrames);
  // Naming the frames allocates (the demangler), which can deadlock when the crash was inside
  // malloc: an alarm bounds it, and then the frames are written raw.
  signal_handler(SIGALRM, on_symbolizer_stuck);
  ::alarm(kSymbolizeSeconds);
  symbolizer::write_frames(g_frames, g_frame_count, STDERR_FILENO);
  ::alarm(0);
  die_of(signal);
}

void handle(int signal) {
  struct sigaction action {};
  action.sa_sigaction = on_fatal_signal;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  ::sigaction(signal, &action, nullptr);
}

}  // namespace

void install() {
  // backtrace() loads libgcc on its first call, which may allocate: not inside a handler.
  void* warm_up[1];
  ::backtrace(warm_up, 1);
  symbolizer::prepare();
  static char alternate_stack[1 << 16];
  stack_t stack{};
  stack.ss_sp = alternate_stack;
  stack.ss_size = sizeof(alternate_stack);
  ::sigaltstack(&stack, nullptr);
  for (int signal : kSignals) handle(signal);
}

// A worker that runs past its --timeout is stopped with SIGTERM and, 5 s later, SIGKILL: the row
// said only "no result after 300s", and a hang (densenet121 under jit on the H200) could not be
// placed. The phase is what the row needs; the frames are for the person reading the log.
void report_termination() {
  symbolizer::prepare();
  handle(SIGTERM);
}

void set_subject(const std::string& subject) {
  std::lock_guard<std::mutex> lock(g_phase_mutex);
  copy_text(g_subject, subject);
}

namespace {
// The phase, for the parent's progress: written whole to a file beside it, then renamed over
// the one the parent reads, which never sees half a line.
void publish_phase(const std::string& phase) {
  static const char* path = std::getenv(kPhaseFileVariable);
  if (path == nullptr || *path == '\0' || phase.empty()) return;
  const std::string staged = std::string(path) + ".next";
  {
    std::ofstream out(staged, std::ios::trunc);
    const double now =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    out << std::fixed << now << '\t' << phase << '\n';
    if (!out) return;
  }
  std::rename(staged.c_str(), path);
}
}  // namespace

std::optional<PublishedPhase> read_published_phase(const std::string& path) {
  std::ifstream in(path);
  PublishedPhase published;
  if (!(in >> published.since_s) || !std::getline(in >> std::ws, published.phase))
    return std::nullopt;
  return published;
}

std::vector<std::string> other_processes_phases() {
  std::vector<std::string> out;
  const char* path = std::getenv(kPhaseFileVariable);
  if (path == nullptr || *path == '\0') return out;
  const std::string own(path);
  const auto slash = own.rfind('/');
  const std::string folder = slash == std::string::npos ? "." : own.substr(0, slash);
  const std::string own_name = slash == std::string::npos ? own : own.substr(slash + 1);
  // opendir, not std::filesystem's iterators (util/files.h says why).
  DIR* dir = ::opendir(folder.c_str());
  if (dir == nullptr) return out;
  const std::string suffix = ".phase";
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (name == own_name || name.size() <= suffix.size() || !ends_with(name, suffix)) continue;
    if (auto published = read_published_phase(folder + "/" + name))
      out.push_back(name.substr(0, name.size() - suffix.size()) + ": " + published->phase);
  }
  ::closedir(dir);
  std::sort(out.begin(), out.end());
  return out;
}

void set_phase(const std::string& phase) {
  publish_phase(phase);
  std::string finished;
  double seconds = 0;
  {
    std::lock_guard<std::mutex> lock(g_phase_mutex);
    const auto now = std::chrono::steady_clock::now();
    finished = g_phase;
    seconds = std::chrono::duration<double>(now - g_phase_start).count();
    g_phase_start = now;
    copy_text(g_phase, phase);
  }
  // Where a model's minutes go (loading, the float64 run, compiling, timing, profiling), in its
  // log: a model of the HuggingFace table took 3.5 minutes of the GPU over six backends, and
  // only the whole child's duration was known.
  if (!finished.empty() && seconds >= kLoggedPhaseSeconds) log::info("phase '{}' took {:.2f} s", finished, seconds);
}

PhaseScope::PhaseScope(const std::string& phase) {
  {
    std::lock_guard<std::mutex> lock(g_phase_mutex);
    previous_ = g_phase;
  }
  set_phase(phase);
}

PhaseScope::~PhaseScope() { set_phase(previous_); }

// clang-format off
const char* known_signal_name(int signal) {
  switch (signal) {
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGTRAP: return "SIGTRAP";
    case SIGPIPE: return "SIGPIPE";
    default: return nullptr;
  }
}
// clang-format on

std::string crash_line_from_log(const std::string& log_path, int64_t offset, const char* line_prefix) {
  std::ifstream log(log_path);
  log.seekg(offset);
  std::string line, found;
  const std::string prefix = line_prefix;
  while (std::getline(log, line)) {
    if (line.rfind(prefix, 0) == 0) found = line.substr(prefix.size());
  }
  return found;
}

}  // namespace zoobench::crash_report
