// Repeated log lines collapsed (log_tidy.h).
#include "zoobench/runner/log_tidy.h"

#include <fmt/format.h>

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "zoobench/util/files.h"

namespace zoobench {
namespace {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

bool blank(const std::string& line) { return line.find_first_not_of(" \t\r") == std::string::npos; }

}  // namespace

std::string collapse_repeated_lines(const std::string& log, std::size_t min_repeats) {
  const std::vector<std::string> lines = split_lines(log);
  std::unordered_map<std::string, std::size_t> count;
  for (const auto& line : lines) {
    if (!blank(line)) ++count[line];
  }
  std::string out;
  std::unordered_set<std::string> written;
  for (const auto& line : lines) {
    const std::size_t times = blank(line) ? 1 : count[line];
    if (times < min_repeats) {
      out += line + "\n";
    } else if (written.insert(line).second) {
      out += line + "\n" +
             fmt::format("zoobench: the line above appears {} more times in this log (left out)\n",
                         times - 1);
    }
  }
  if (!log.empty() && log.back() != '\n' && !out.empty()) out.pop_back();
  return out;
}

void collapse_repeated_lines_in_file(const std::string& path) {
  std::string log;
  try {
    log = read_text_file(path, std::uintmax_t{256} << 20);
  } catch (const std::exception&) {
    return;  // no log, or one too large to rewrite: it stays as the model's process left it
  }
  std::string tidy = collapse_repeated_lines(log);
  if (tidy == log) return;
  std::string failed;
  try_write_file_atomically(path, tidy, failed);  // a log left untidy loses nothing
}

}  // namespace zoobench
