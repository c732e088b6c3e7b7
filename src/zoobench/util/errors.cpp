// First-line extraction and message capture shared by every catch site.
#include "zoobench/util/errors.h"

#include <c10/util/Exception.h>

#include <exception>

namespace zoobench {

std::string first_line(const std::string& message) {
  auto end = message.find('\n');
  std::string line = message.substr(0, end);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
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

}  // namespace zoobench
