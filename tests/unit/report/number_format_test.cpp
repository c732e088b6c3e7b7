// How speedups are printed: their digits follow their 95% interval (two significant digits where
// it is wider than ±5%, three otherwise or where none is known), the interval's ends as many
// decimals as the speedup.
#include "zoobench/report/number_format.h"

#include <gtest/gtest.h>

namespace zoobench::report {
namespace {

TEST(NumberFormat, SignificantDigitsInFixedNotation) {
  EXPECT_EQ(format_significant(0.807716, 2), "0.81");
  EXPECT_EQ(format_significant(0.807716, 3), "0.808");
  EXPECT_EQ(format_significant(1.84139, 3), "1.84");
  EXPECT_EQ(format_significant(10.66, 2), "11");
  EXPECT_EQ(format_significant(10.66, 3), "10.7");
  EXPECT_EQ(format_significant(0.996, 2), "1.0");  // rounding up adds no digit
  EXPECT_EQ(format_significant(9.996, 3), "10.0");
  EXPECT_EQ(format_significant(123.4, 2), "120");
  EXPECT_EQ(format_significant(0.0123456, 2), "0.012");
}

TEST(NumberFormat, ASpeedupShowsTheDigitsItsIntervalAllows) {
  // The terminal's example: 0.807716x, ±31%.
  EXPECT_EQ(*relative_band(0.807716, 0.56, 1.06), (1.06 - 0.56) / 2 / 0.807716);
  EXPECT_EQ(format_speedup(0.807716, 0.56, 1.06), "0.81x");
  EXPECT_EQ(format_speedup_interval(0.807716, 0.56, 1.06), "0.56x \u2013 1.06x");
  // ±1.4%: three digits.
  EXPECT_EQ(format_speedup(1.84139, 1.81, 1.86), "1.84x");
  EXPECT_EQ(format_speedup_interval(1.84139, 1.81, 1.86, "", "\u2013"), "1.81\u20131.86");
  // Exactly ±5% is not wider than ±5%.
  EXPECT_EQ(format_speedup(10.0, 9.5, 10.5, "\u00d7"), "10.0\u00d7");
  EXPECT_EQ(format_speedup(10.0, 9.25, 10.75), "10x");
  // No interval (kernel time, upstream's rows): three digits, the most a speedup shows.
  EXPECT_EQ(format_speedup(0.5), "0.500x");
  EXPECT_EQ(format_speedup(std::nullopt), "-");
  EXPECT_EQ(format_speedup_interval(0.5, std::nullopt, 0.6), "-");
  // An interval that is not one (high below low) is ignored.
  EXPECT_FALSE(relative_band(1.0, 1.2, 0.8));
  EXPECT_EQ(format_speedup(1.0, 1.2, 0.8), "1.00x");
}

}  // namespace
}  // namespace zoobench::report
