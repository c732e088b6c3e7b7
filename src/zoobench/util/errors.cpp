// First-line extraction and message capture shared by every catch site.
#include "zoobench/util/errors.h"

#include <c10/util/Exception.h>

#include <exception>
#include <regex>
#include <vector>

#include "zoobench/util/log.h"

namespace zoobench {

namespace {

std::string trimmed_line(const std::string& message, std::size_t begin, std::size_t end) {
  std::string line = message.substr(begin, end == std::string::npos ? end : end - begin);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

// "<file>(<line>): <function>", as TorchScript prints the Python frames of traced code.
bool is_traced_frame(const std::string& line) {
  static const std::regex kFrame(R"(^\S.*\(\d+\): [\w<>.]+$)");
  return std::regex_match(line, kFrame);
}

}  // namespace

std::string first_line(const std::string& message) {
  // The TorchScript interpreter's first line only says that something failed. The error itself
  // ("RuntimeError: mat1 and mat2 shapes ...", "builtins.RuntimeError: boom") follows its
  // traceback(s), which hold source lines (some unindented, like "def f(x):") and, for traced
  // code, the Python frames it was traced from ("/path/file.py(510): sdpa_mask"). So: the first
  // line that names an error class; failing that, the first line that is no traceback line.
  static const std::string kInterpreter =
      "The following operation failed in the TorchScript interpreter.";
  static const std::regex kErrorLine(R"(^[A-Za-z_][\w.]*(Error|Exception): .*)");
  if (message.rfind(kInterpreter, 0) == 0) {
    std::vector<std::string> lines;
    for (std::size_t begin = message.find('\n'); begin != std::string::npos;) {
      ++begin;
      const std::size_t end = message.find('\n', begin);
      lines.push_back(trimmed_line(message, begin, end));
      begin = end;
    }
    for (const std::string& line : lines) {
      if (std::regex_match(line, kErrorLine)) return line;
    }
    for (const std::string& line : lines) {
      if (!line.empty() && line[0] != ' ' && line[0] != '\t' &&
          line.rfind("Traceback of TorchScript", 0) != 0 && !is_traced_frame(line)) {
        return line;
      }
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
