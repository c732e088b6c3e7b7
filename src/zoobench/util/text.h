// Small string helpers used by parsers and error messages.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zoobench {

std::string trim(std::string_view text);
std::vector<std::string> split(std::string_view text, char separator);
std::string join(const std::vector<std::string>& parts, std::string_view separator);
// "first; second", or whichever of the two is not empty: a row's reason with a note added.
std::string join_reasons(const std::string& first, const std::string& second);
bool starts_with(std::string_view text, std::string_view prefix);
bool ends_with(std::string_view text, std::string_view suffix);

// Why `name` cannot be a model's or suite's name, which becomes one component of a path
// (zoo/<suite>/<name>/, results/logs/<name>.log): empty, `.` or `..`, a `/` or `\`, a control
// character, or longer than 200 bytes. nullopt when it can.
std::optional<std::string> name_problem(std::string_view name);

// Up to `limit` candidates closest to `name` (case-insensitive edit distance, substring
// matches first): what "unknown model X; did you mean ..." shows.
std::vector<std::string> closest_names(const std::string& name,
                                       const std::vector<std::string>& candidates,
                                       std::size_t limit = 3);

}  // namespace zoobench
