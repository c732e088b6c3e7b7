#include "zoobench/util/name_pattern.h"

#include <re2/re2.h>

#include "zoobench/util/errors.h"

namespace zoobench {
namespace {

re2::RE2::Options pattern_options() {
  re2::RE2::Options options;
  options.set_case_sensitive(false);
  options.set_log_errors(false);  // the error goes into the UsageError, not to stderr
  // RE2's automaton budget: 1 MB holds any pattern a model list needs many times over; a larger
  // one is refused at once.
  options.set_max_mem(1 << 20);
  return options;
}

}  // namespace

NamePattern::NamePattern(const std::string& pattern, const char* flag) {
  if (pattern.size() > kMaxPatternLength)
    throw UsageError(std::string(flag) + ": a pattern of " + std::to_string(pattern.size()) +
                     " characters; at most " + std::to_string(kMaxPatternLength));
  regex_ = std::make_unique<re2::RE2>(pattern, pattern_options());
  if (!regex_->ok())
    throw UsageError(std::string(flag) + " '" + pattern +
                     "' is not a valid regular expression: " + regex_->error());
}

NamePattern::~NamePattern() = default;

bool NamePattern::found_in(const std::string& name) const {
  return re2::RE2::PartialMatch(name, *regex_);
}

}  // namespace zoobench
