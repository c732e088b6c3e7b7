// Names the native frames of a crash report: libbacktrace (GCC's, as the compiler ships it) finds
// each frame's function in the symbol tables of the program and the libraries it loaded, and
// with debug info its file and line; libstdc++'s demangler makes the name readable. Built without
// libbacktrace (a compiler that ships none), frames are written as glibc's backtrace_symbols_fd
// writes them: object, mangled symbol, offset.
#pragma once

namespace zoobench::symbolizer {

// Whether frames are named (zoobench was built with libbacktrace).
bool available();

// Sets up what naming frames needs, outside any signal handler; the crash handler's install()
// calls it. Idempotent.
void prepare();

// One line per frame: "    #3 0x7f12... zoobench::run_model(...) + 0x1c (model_run.cpp:42)".
// Not async-signal-safe (the demangler allocates): the crash handler calls it after the raw
// frames are safe in a buffer, under an alarm that falls back to writing them raw.
void write_frames(void* const* frames, int count, int fd);

}  // namespace zoobench::symbolizer
