// Small string helpers used by parsers and error messages.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace zoobench {

std::string trim(std::string_view text);
std::vector<std::string> split(std::string_view text, char separator);
std::string join(const std::vector<std::string>& parts, std::string_view separator);
bool starts_with(std::string_view text, std::string_view prefix);
bool ends_with(std::string_view text, std::string_view suffix);

// Up to `limit` candidates closest to `name` (case-insensitive edit distance, substring
// matches first): what "unknown model X; did you mean ..." shows.
std::vector<std::string> closest_names(const std::string& name,
                                       const std::vector<std::string>& candidates,
                                       std::size_t limit = 3);

}  // namespace zoobench
