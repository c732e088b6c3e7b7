// Number parsing and display for the reports.
#include "zoobench/report/number_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "zoobench/util/text.h"

namespace zoobench::report {

std::optional<double> parse_number(const std::string& cell) {
  std::string text = trim(cell);
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (end == nullptr || *end != '\0' || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::string format_ms(std::optional<double> ms) {
  if (!ms) return "-";
  double magnitude = std::fabs(*ms);
  if (magnitude >= 100) return fmt::format("{:.1f}", *ms);
  if (magnitude >= 10) return fmt::format("{:.2f}", *ms);
  return fmt::format("{:.3f}", *ms);
}

std::string format_ratio(std::optional<double> ratio, const char* suffix) {
  if (!ratio) return "-";
  return fmt::format("{:.2f}{}", *ratio, suffix);
}

namespace {

int exponent_of(double value) { return static_cast<int>(std::floor(std::log10(std::fabs(value)))); }

// Decimals that show `digits` significant digits of `value`, counted after rounding (0.996 at
// two digits is 1.0: one decimal, not two); 0 where the digits end before the decimal point.
int decimals_for(double value, int digits) {
  if (value == 0 || !std::isfinite(value)) return std::max(0, digits - 1);
  const double scale = std::pow(10.0, digits - 1 - exponent_of(value));
  const double rounded = std::round(std::fabs(value) * scale) / scale;
  return std::max(0, digits - 1 - exponent_of(rounded));
}

// The decimals a speedup shows (format_speedup's), for its interval's ends too.
int speedup_decimals(double speedup, std::optional<double> low, std::optional<double> high) {
  return decimals_for(speedup, speedup_digits(relative_band(speedup, low, high)));
}

}  // namespace

std::optional<double> relative_band(double value, std::optional<double> low,
                                    std::optional<double> high) {
  if (!low || !high || !(value > 0) || *high < *low) return std::nullopt;
  return (*high - *low) / 2.0 / value;
}

int speedup_digits(std::optional<double> band) { return band && *band > kTightSpeedupBand ? 2 : 3; }

std::string format_significant(double value, int digits) {
  const int decimals = decimals_for(value, digits);
  if (decimals > 0 || value == 0 || !std::isfinite(value)) {
    return fmt::format("{:.{}f}", value, decimals);
  }
  // Digits end at or before the decimal point: 123.4 at two digits is 120.
  const double scale = std::pow(10.0, exponent_of(value) - digits + 1);
  return fmt::format("{:.0f}", std::round(value / scale) * scale);
}

std::string format_speedup(std::optional<double> speedup, std::optional<double> low,
                           std::optional<double> high, const char* suffix) {
  if (!speedup) return "-";
  return format_significant(*speedup, speedup_digits(relative_band(*speedup, low, high))) + suffix;
}

std::string format_speedup_interval(std::optional<double> speedup, std::optional<double> low,
                                    std::optional<double> high, const char* suffix,
                                    const char* separator) {
  if (!speedup || !low || !high) return "-";
  const int decimals = speedup_decimals(*speedup, low, high);
  return fmt::format("{:.{}f}{}{}{:.{}f}{}", *low, decimals, suffix, separator, *high, decimals,
                     suffix);
}

std::string format_percent(double fraction) { return fmt::format("{:.1f}%", fraction * 100.0); }

std::string format_margin(std::optional<double> margin) {
  if (!margin) return "-";
  return fmt::format("{:.3g}", *margin);
}

}  // namespace zoobench::report
