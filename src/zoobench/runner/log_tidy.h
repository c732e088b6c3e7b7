// A model's log, tidied after its process ended: a warning LibTorch prints on every call (one
// model's log was 1,674 lines of the same one) is kept once, with a count of the times left out.
#pragma once

#include <cstddef>
#include <string>

namespace zoobench {

// Each non-blank line that occurs `min_repeats` times or more in `log` stays at its first
// occurrence, followed by a note of how many more times it appeared; its later occurrences go.
// Every other line stays, in order.
std::string collapse_repeated_lines(const std::string& log, std::size_t min_repeats = 5);

// The same on a log file, rewritten in place (atomically) only when something was collapsed;
// a file that cannot be read (or is over 256 MB) is left as it is.
void collapse_repeated_lines_in_file(const std::string& path);

}  // namespace zoobench
