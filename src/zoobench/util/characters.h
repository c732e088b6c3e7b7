// Character classes shared by the readers and writers of text from files: names, reports,
// terminal lines.
#pragma once

#include <cctype>
#include <string>
#include <string_view>

namespace zoobench {

// ASCII control characters (C0 and DEL): never part of a name, never sent to a terminal or a
// report as they are.
inline bool is_control_character(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return byte < 0x20 || byte == 0x7f;
}

// `text` fit for a terminal line: each control character (an escape sequence's ESC, a bell, a
// newline inside a field) shown as '?', so that text read from a file cannot move the cursor,
// retitle the window or split a table row.
inline std::string terminal_safe(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (is_control_character(c)) c = '?';
  }
  return out;
}

// `text` with ASCII letters in lower case (digests, case-insensitive matches).
inline std::string lower_case(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace zoobench
