#include "zoobench/util/symbolizer.h"

#include <execinfo.h>
#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "zoobench/util/files.h"

#if ZOOBENCH_WITH_LIBBACKTRACE
#include <backtrace.h>
#include <cxxabi.h>
#endif

namespace zoobench::symbolizer {
namespace {

#if ZOOBENCH_WITH_LIBBACKTRACE
backtrace_state* g_state = nullptr;

// What one frame's lookups found; the callbacks fill it in.
struct Frame {
  std::uintptr_t pc = 0;
  const char* symbol = nullptr;  // mangled, from the symbol table
  std::uintptr_t symbol_start = 0;
  std::string location;  // " (file:line)", from debug info when there is some
};

void ignore_error(void*, const char*, int) {}

void on_symbol(void* data, std::uintptr_t, const char* name, std::uintptr_t start, std::uintptr_t) {
  auto* frame = static_cast<Frame*>(data);
  frame->symbol = name;
  frame->symbol_start = start;
}

// Called once per inlined level, innermost first: the first is the source line that ran.
int on_line(void* data, std::uintptr_t, const char* file, int line, const char*) {
  auto* frame = static_cast<Frame*>(data);
  if (file != nullptr && frame->location.empty()) {
    const char* base = std::strrchr(file, '/');
    frame->location = fmt::format(" ({}:{})", base ? base + 1 : file, line);
  }
  return 0;
}

void write_frame(int index, void* address, int fd) {
  Frame frame;
  frame.pc = reinterpret_cast<std::uintptr_t>(address);
  // A return address is one past the call; the call itself names the right line.
  backtrace_pcinfo(g_state, frame.pc - 1, on_line, ignore_error, &frame);
  backtrace_syminfo(g_state, frame.pc, on_symbol, ignore_error, &frame);
  const std::string head = fmt::format("    #{:<2d} 0x{:012x} ", index, frame.pc);
  if (frame.symbol == nullptr) {  // no symbol: the object and offset are what is left
    write_fully(fd, head);
    ::backtrace_symbols_fd(&address, 1, fd);
    return;
  }
  int status = 0;
  char* readable = abi::__cxa_demangle(frame.symbol, nullptr, nullptr, &status);
  const std::string name = status == 0 && readable != nullptr ? readable : frame.symbol;
  std::free(readable);
  write_fully(fd, fmt::format("{}{} + 0x{:x}{}\n", head, name, frame.pc - frame.symbol_start,
                              frame.location));
}
#endif

}  // namespace

#if ZOOBENCH_WITH_LIBBACKTRACE
bool available() { return true; }

void prepare() {
  if (g_state == nullptr)
    g_state = backtrace_create_state(nullptr, /*threaded=*/1, ignore_error, nullptr);
}

void write_frames(void* const* frames, int count, int fd) {
  if (g_state == nullptr) {
    ::backtrace_symbols_fd(frames, count, fd);
    return;
  }
  for (int i = 0; i < count; ++i) write_frame(i, frames[i], fd);
}
#else
bool available() { return false; }
void prepare() {}
void write_frames(void* const* frames, int count, int fd) {
  ::backtrace_symbols_fd(frames, count, fd);
}
#endif

}  // namespace zoobench::symbolizer
