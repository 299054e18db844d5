// SPDX-License-Identifier: MIT
// A lean plan's figures to six significant digits (json/result_io.h): the reference is the C
// library's own decimal conversion, printf's "%.6g" read back with strtod, an implementation
// independent of the engine's arithmetic.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "json/result_io.h"

namespace gpuplan {
namespace {

double ByText(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return std::strtod(buf, nullptr);
}

TEST(SixSignificantDigits, WorkedValues) {
  // By hand: 3.7029641 keeps 3.70296; 441426.756 rounds up to 441427; 0.94683912 to
  // 0.946839; 1,234,565 is exact in binary and a tie in its seventh digit, which rounds to
  // the even 1.23456e6; 999,999.7 carries into a seventh digit, 1e6.
  EXPECT_EQ(json_io::SixSignificantDigits(3.7029641), 3.70296);
  EXPECT_EQ(json_io::SixSignificantDigits(441426.7563846918), 441427.0);
  EXPECT_EQ(json_io::SixSignificantDigits(0.94683912), 0.946839);
  EXPECT_EQ(json_io::SixSignificantDigits(1234565.0), 1.23456e6);
  EXPECT_EQ(json_io::SixSignificantDigits(999999.7), 1e6);
  EXPECT_EQ(json_io::SixSignificantDigits(-2.0000049), -2.0);
  EXPECT_EQ(json_io::SixSignificantDigits(0.0), 0.0);
  EXPECT_EQ(json_io::SixSignificantDigits(1e300), 1e300);
  EXPECT_EQ(json_io::SixSignificantDigits(3.14159265e-30), 3.14159e-30);
}

TEST(SixSignificantDigits, MatchesTheLibrarysDecimalConversion) {
  // Figures span bytes (1e11), seconds (1e-3 to 1e8), ratios and dollars: random magnitudes
  // over 60 decades, and values on six-digit halves, where rounding is decided.
  std::mt19937_64 rng(18);
  std::uniform_real_distribution<double> mantissa(1.0, 10.0);
  std::uniform_int_distribution<int> decade(-30, 30);
  std::uniform_int_distribution<int> digits(100000, 999999);
  for (int i = 0; i < 200000; ++i) {
    const double x = mantissa(rng) * std::pow(10.0, decade(rng));
    ASSERT_EQ(json_io::SixSignificantDigits(x), ByText(x)) << x;
    const double half = (digits(rng) + 0.5) * std::pow(10.0, decade(rng));
    ASSERT_EQ(json_io::SixSignificantDigits(half), ByText(half)) << half;
    ASSERT_EQ(json_io::SixSignificantDigits(-x), ByText(-x)) << -x;
  }
}

TEST(SixSignificantDigits, AtTheEdgesOfADecade) {
  // The decade of a figure is looked up among powers of ten: each power, the doubles either
  // side of it, and the edges of the table (1e-22 and 1e22) and beyond must still read as the
  // library's text does.
  for (int e = -30; e <= 30; ++e) {
    const double p = std::pow(10.0, e);
    for (const double x : {p, std::nextafter(p, 0.0), std::nextafter(p, 1e300), p * 0.9999995,
                           p * 0.99999949, p * 9.999995, p * 9.9999951}) {
      ASSERT_EQ(json_io::SixSignificantDigits(x), ByText(x)) << x;
      ASSERT_EQ(json_io::SixSignificantDigits(-x), ByText(-x)) << -x;
    }
  }
}

}  // namespace
}  // namespace gpuplan
