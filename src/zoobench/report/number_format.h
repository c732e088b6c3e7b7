// How the reports show numbers (milliseconds, speedups, percentages) and read them back from
// result cells: one place, so the markdown table, the HTML report and the run-end table agree.
#pragma once

#include <optional>
#include <string>

namespace zoobench::report {

// A cell as a finite number; nullopt for "", "nan", "inf" or text that is not a number.
std::optional<double> parse_number(const std::string& cell);

// Milliseconds with precision that follows the magnitude: 0.123, 12.35, 123.4; "-" when absent.
std::string format_ms(std::optional<double> ms);
// A speedup (or any ratio) with two decimals and a suffix: 1.23x (markdown) or 1.23× (HTML).
std::string format_ratio(std::optional<double> ratio, const char* suffix = "x");
// 0.75 -> "75.0%".
std::string format_percent(double fraction);
// Accuracy margin (error / allowed error): three significant digits, "-" when absent.
std::string format_margin(std::optional<double> margin);

}  // namespace zoobench::report
