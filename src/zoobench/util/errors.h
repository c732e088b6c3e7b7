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

// The line of an exception's message that a result row carries as its reason: the first line,
// or for TorchScript interpreter errors the error after the traceback.
std::string first_line(const std::string& message);

// The message of the exception currently being handled (call inside a catch block).
std::string current_exception_message();

// The same, after writing the whole message (TorchScript traceback included) to the log at
// error level, prefixed by `context`: a row keeps one line, the model's log keeps everything.
std::string logged_exception_message(const std::string& context);

}  // namespace zoobench
