// Error types that carry what went wrong and what to do about it.
// UsageError: the user's input (flags, files, names) is wrong; the CLI exits with status 2.
#pragma once

#include <stdexcept>
#include <string>

namespace zoobench {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The first line of an exception's message: what a result row carries as its reason.
std::string first_line(const std::string& message);

// The message of the exception currently being handled (call inside a catch block).
std::string current_exception_message();

}  // namespace zoobench
