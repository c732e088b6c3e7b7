// Trimming, splitting and "did you mean" suggestions.
#include "zoobench/util/text.h"

#include <algorithm>
#include <cctype>

#include "zoobench/util/characters.h"

namespace zoobench {

std::string trim(std::string_view text) {
  std::size_t begin = 0, end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return std::string(text.substr(begin, end - begin));
}

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t at = text.find(separator, start);
    parts.emplace_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) break;
    start = at + 1;
  }
  return parts;
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += separator;
    out += parts[i];
  }
  return out;
}

std::string join_reasons(const std::string& first, const std::string& second) {
  if (first.empty()) return second;
  return second.empty() ? first : first + "; " + second;
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> previous(b.size() + 1), current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t substitute = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitute});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

}  // namespace

std::vector<std::string> closest_names(const std::string& name,
                                       const std::vector<std::string>& candidates,
                                       std::size_t limit) {
  const std::string needle = lower_case(name);
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const auto& candidate : candidates) {
    std::string hay = lower_case(candidate);
    std::size_t score = edit_distance(needle, hay);
    if (!needle.empty() && (hay.find(needle) != std::string::npos || needle.find(hay) != std::string::npos)) {
      score = 0;
    }
    // Suggestions further away than half the name are noise.
    if (score <= std::max<std::size_t>(2, needle.size() / 2)) scored.emplace_back(score, candidate);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (const auto& [score, candidate] : scored) {
    if (out.size() == limit) break;
    out.push_back(candidate);
  }
  return out;
}

std::optional<std::string> name_problem(std::string_view name) {
  if (name.empty()) return "it is empty";
  if (name == "." || name == "..") return "it is '" + std::string(name) + "'";
  if (name.size() > 200) return "it is longer than 200 characters";
  for (const char c : name) {
    if (c == '/' || c == '\\') return "it holds a path separator";
    if (is_control_character(c)) return "it holds a control character";
  }
  return std::nullopt;
}

}  // namespace zoobench
