// -k/-x patterns: searched anywhere in the name, case-insensitively, as upstream's
// re.search(pattern, name, re.IGNORECASE), in RE2's syntax (Python's for what these patterns
// use: `^name$`, `a|b`, `[0-9]+`, `\d`, `(?:...)`). RE2 matches in time linear in the name and
// refuses, instead of compiling for ever, a pattern whose automaton would be too large (glibc's
// regcomp took seconds and gigabytes for `(a+++...` and `(a+)$$$...`); back-references, which
// need backtracking, are refused too.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace re2 {
class RE2;
}

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
  std::unique_ptr<re2::RE2> regex_;
};

}  // namespace zoobench
