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
// A ratio that is not a speedup against eager (a latency over another, now / baseline, memory)
// with two decimals and a suffix: 1.23x (markdown) or 1.23× (HTML).
std::string format_ratio(std::optional<double> ratio, const char* suffix = "x");

// A speedup's digits follow its 95% interval: a sixth digit of a ratio whose band is ±30% is
// noise. Two significant digits when the band is wider than ±kTightSpeedupBand, three otherwise;
// three also where no interval is known (kernel time, upstream's rows): the most a speedup shows.
inline constexpr double kTightSpeedupBand = 0.05;
// The interval's half-width relative to the speedup, (high - low) / 2 / value: the 0.31 of
// "±31%" (as the run's terminal lines compute it); nullopt without a usable interval.
std::optional<double> relative_band(double value, std::optional<double> low,
                                    std::optional<double> high);
int speedup_digits(std::optional<double> band);
// `value` rounded to `digits` significant digits, in fixed notation: (0.807716, 2) -> "0.81",
// (0.996, 2) -> "1.0", (123.4, 2) -> "120".
std::string format_significant(double value, int digits);
// The speedup with the digits its interval allows and a suffix: "0.81x", "2.47×"; "-" when
// absent.
std::string format_speedup(std::optional<double> speedup, std::optional<double> low = std::nullopt,
                           std::optional<double> high = std::nullopt, const char* suffix = "x");
// The interval's ends with as many decimals as format_speedup gives the speedup, so the three
// read alike: (0.807716, 0.56, 1.06) -> "0.56x – 1.06x" beside "0.81x"; "-" when absent.
std::string format_speedup_interval(std::optional<double> speedup, std::optional<double> low,
                                    std::optional<double> high, const char* suffix = "x",
                                    const char* separator = " \u2013 ");
// 0.75 -> "75.0%".
std::string format_percent(double fraction);
// Accuracy margin (error / allowed error): three significant digits, "-" when absent.
std::string format_margin(std::optional<double> margin);

}  // namespace zoobench::report
