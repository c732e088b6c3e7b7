// First-line extraction and message capture shared by every catch site.
#include "zoobench/util/errors.h"

#include <c10/util/Exception.h>

#include <exception>

#include "zoobench/util/log.h"

namespace zoobench {

namespace {

std::string trimmed_line(const std::string& message, std::size_t begin, std::size_t end) {
  std::string line = message.substr(begin, end == std::string::npos ? end : end - begin);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

}  // namespace

std::string first_line(const std::string& message) {
  // The TorchScript interpreter's first line only says that something failed; the error itself
  // ("builtins.RuntimeError: boom", "RuntimeError: ... can't allocate memory ...") is the first
  // line after its traceback(s), whose lines are indented or "Traceback of TorchScript..." headers.
  static const std::string kInterpreter =
      "The following operation failed in the TorchScript interpreter.";
  if (message.rfind(kInterpreter, 0) == 0) {
    std::size_t begin = message.find('\n');
    while (begin != std::string::npos) {
      ++begin;
      std::size_t end = message.find('\n', begin);
      std::string line = trimmed_line(message, begin, end);
      if (!line.empty() && line[0] != ' ' && line[0] != '\t' &&
          line.rfind("Traceback of TorchScript", 0) != 0) {
        return line;
      }
      begin = end;
    }
  }
  return trimmed_line(message, 0, message.find('\n'));
}

std::string current_exception_message() {
  try {
    throw;
  } catch (const c10::Error& e) {
    // what() carries a C++ backtrace; the message without it is what a person wants.
    return e.what_without_backtrace();
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

std::string logged_exception_message(const std::string& context) {
  std::string message = current_exception_message();
  log::error("{}: {}", context, message);
  return message;
}

}  // namespace zoobench
