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

// `text` with ASCII letters in lower case (digests, case-insensitive matches).
inline std::string lower_case(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace zoobench
