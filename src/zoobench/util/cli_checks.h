// Checks for numeric flags that CLI11's own lack: NaN passes CLI::NonNegativeNumber and
// CLI::PositiveNumber (every comparison with NaN is false), and infinity passes them too.
#pragma once

#include <CLI/CLI.hpp>
#include <cmath>
#include <sstream>
#include <string>

namespace zoobench {

// A finite number >= minimum (strictly above it when `inclusive` is false).
inline CLI::Validator finite_number(double minimum, bool inclusive = true) {
  std::ostringstream bound;
  bound << (inclusive ? ">= " : "> ") << minimum;
  const std::string range = bound.str();
  return CLI::Validator(
      [minimum, inclusive, range](std::string& text) -> std::string {
        double value = 0;
        std::size_t used = 0;
        try {
          value = std::stod(text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == 0 || used != text.size()) return "'" + text + "' is not a number";
        const bool in_range =
            std::isfinite(value) && (inclusive ? value >= minimum : value > minimum);
        if (!in_range) return "'" + text + "' is out of range: a finite number " + range;
        return "";
      },
      "NUMBER " + range, "finite number " + range);
}

// A finite number in [minimum, maximum] (CLI::Range lets NaN through).
inline CLI::Validator finite_range(double minimum, double maximum) {
  std::ostringstream bounds;
  bounds << "in [" << minimum << ", " << maximum << "]";
  const std::string range = bounds.str();
  CLI::Validator at_least = finite_number(minimum);
  return CLI::Validator(
      [at_least, maximum, range](std::string& text) -> std::string {
        std::string copy = text;
        std::string problem = at_least(copy);
        if (problem.empty() && std::stod(text) > maximum) problem = "too large";
        return problem.empty() ? "" : "'" + text + "' is out of range: a finite number " + range;
      },
      "NUMBER " + range, "finite number " + range);
}

}  // namespace zoobench
