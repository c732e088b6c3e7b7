// First-line extraction and message capture shared by every catch site.
#include "zoobench/util/errors.h"

#include <c10/util/Exception.h>

#include <exception>
#include <cctype>
#include <vector>

#include "zoobench/util/log.h"

namespace zoobench {

namespace {

std::string trimmed_line(const std::string& message, std::size_t begin, std::size_t end) {
  std::string line = message.substr(begin, end == std::string::npos ? end : end - begin);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// "<file>(<line>): <function>", as TorchScript prints the Python frames of traced code.
// Scanned by hand, not by std::regex: libstdc++'s matcher recurses once per character and a
// model's error line can be tens of thousands of characters long.
bool is_traced_frame(const std::string& line) {
  if (line.empty() || std::isspace(static_cast<unsigned char>(line[0]))) return false;
  const std::size_t colon = line.rfind("): ");
  if (colon == std::string::npos || colon + 3 == line.size()) return false;
  for (std::size_t i = colon + 3; i < line.size(); ++i) {
    const char c = line[i];
    if (!is_word_char(c) && c != '<' && c != '>' && c != '.') return false;
  }
  std::size_t open = colon;
  while (open > 0 && std::isdigit(static_cast<unsigned char>(line[open - 1]))) --open;
  return open < colon && open >= 2 && line[open - 1] == '(';
}

// "<Name>Error: ..." or "<Name>Exception: ..." (dotted names too: builtins.RuntimeError).
bool names_error_class(const std::string& line) {
  if (line.empty() || !(std::isalpha(static_cast<unsigned char>(line[0])) || line[0] == '_'))
    return false;
  std::size_t end = 1;
  while (end < line.size() && (is_word_char(line[end]) || line[end] == '.')) ++end;
  const std::string name = line.substr(0, end);
  const auto ends = [&name](const std::string& suffix) {
    return name.size() >= suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return (ends("Error") || ends("Exception")) && line.compare(end, 2, ": ") == 0;
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
  if (message.rfind(kInterpreter, 0) == 0) {
    std::vector<std::string> lines;
    for (std::size_t begin = message.find('\n'); begin != std::string::npos;) {
      ++begin;
      const std::size_t end = message.find('\n', begin);
      lines.push_back(trimmed_line(message, begin, end));
      begin = end;
    }
    for (const std::string& line : lines) {
      if (names_error_class(line)) return line;
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
