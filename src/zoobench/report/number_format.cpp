// Number parsing and display for the reports.
#include "zoobench/report/number_format.h"

#include <fmt/format.h>

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

std::string format_percent(double fraction) { return fmt::format("{:.1f}%", fraction * 100.0); }

std::string format_margin(std::optional<double> margin) {
  if (!margin) return "-";
  return fmt::format("{:.3g}", *margin);
}

}  // namespace zoobench::report
