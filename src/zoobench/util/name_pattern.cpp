#include "zoobench/util/name_pattern.h"

#include "zoobench/util/errors.h"

namespace zoobench {

NamePattern::NamePattern(const std::string& pattern, const char* flag) {
  if (pattern.size() > kMaxPatternLength)
    throw UsageError(std::string(flag) + ": a pattern of " + std::to_string(pattern.size()) +
                     " characters; at most " + std::to_string(kMaxPatternLength));
  const int error = ::regcomp(&regex_, pattern.c_str(), REG_EXTENDED | REG_ICASE | REG_NOSUB);
  if (error != 0) {
    char message[256] = {};
    ::regerror(error, &regex_, message, sizeof(message));
    throw UsageError(std::string(flag) + " '" + pattern +
                     "' is not a valid regular expression: " + message);
  }
}

NamePattern::~NamePattern() { ::regfree(&regex_); }

bool NamePattern::found_in(const std::string& name) const {
  return ::regexec(&regex_, name.c_str(), 0, nullptr, 0) == 0;
}

}  // namespace zoobench
