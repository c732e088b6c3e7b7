// -k/-x patterns: POSIX extended expressions, case-insensitive, searched anywhere in the name
// (upstream's re.search(..., re.IGNORECASE) for the patterns its users write: `^name$`,
// `a|b`, `[0-9]+`). glibc's matcher runs expressions without back-references as an automaton,
// so `(a+)+$` cannot backtrack for ever as std::regex (and Python's re) do; the length cap
// keeps a pattern of 30,000 nested groups from its parser.
#pragma once

#include <regex.h>

#include <cstddef>
#include <string>

namespace zoobench {

inline constexpr std::size_t kMaxPatternLength = 1000;

class NamePattern {
 public:
  // Throws UsageError naming `flag` for a pattern over kMaxPatternLength or one that does not
  // compile.
  NamePattern(const std::string& pattern, const char* flag);
  NamePattern(const NamePattern&) = delete;
  NamePattern& operator=(const NamePattern&) = delete;
  ~NamePattern();
  bool found_in(const std::string& name) const;

 private:
  regex_t regex_{};
};

}  // namespace zoobench
