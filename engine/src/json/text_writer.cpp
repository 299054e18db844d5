// SPDX-License-Identifier: MIT
#include "json/text_writer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>

namespace gpuplan::json_io {
namespace {

constexpr double kExact = 9007199254740992.0;  // 2^53: beyond it a JavaScript number is not exact

}  // namespace

int64_t RoundBytes(double v) {
  return std::isfinite(v) && std::fabs(v) <= kExact ? static_cast<int64_t>(std::llround(v)) : -1;
}

// x to six significant digits: the double nearest the decimal "%.6g" writes, without the text
// where it can (the text was most of a lean plan's time). With r = x x 10^k rounded to a whole
// number of six digits and 10^k exact (|k| <= 22), r / 10^k is correctly rounded, so it is that
// double. x x 10^k is within 2^-53 of itself, about 1e-10 at six digits: a product that close to
// a half could round the other way than x's exact decimal value, so it goes through the text,
// as do scales beyond 10^22 and a decade misjudged at its edge.
double SixSignificantDigits(double x) {
  static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                      1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                      1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  // The decade of |x| is found among these, not with log10: WebAssembly has no log10
  // instruction, and musl's took 1-2% of a plan there. A decade off by one at a power of ten
  // leaves r outside six digits, and the text decides.
  static constexpr double kDecades[] = {
      1e-22, 1e-21, 1e-20, 1e-19, 1e-18, 1e-17, 1e-16, 1e-15, 1e-14, 1e-13, 1e-12, 1e-11,
      1e-10, 1e-9,  1e-8,  1e-7,  1e-6,  1e-5,  1e-4,  1e-3,  1e-2,  1e-1,  1e0,   1e1,
      1e2,   1e3,   1e4,   1e5,   1e6,   1e7,   1e8,   1e9,   1e10,  1e11,  1e12,  1e13,
      1e14,  1e15,  1e16,  1e17,  1e18,  1e19,  1e20,  1e21,  1e22};
  if (x != 0 && std::isfinite(x)) {
    const double* above = std::upper_bound(std::begin(kDecades), std::end(kDecades), std::fabs(x));
    const int decade = static_cast<int>(above - std::begin(kDecades)) - 23;  // floor(log10 |x|)
    const int k = 5 - decade;
    if (k >= -22 && k <= 22) {
      const double scaled = k >= 0 ? x * kPow10[k] : x / kPow10[-k];
      const double r = std::nearbyint(scaled);
      const double off_half = std::fabs(std::fabs(scaled - std::trunc(scaled)) - 0.5);
      if (std::fabs(r) >= 1e5 && std::fabs(r) < 1e6 && off_half > 1e-9) {
        return k >= 0 ? r / kPow10[k] : r * kPow10[-k];
      }
    }
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return std::strtod(buf, nullptr);
}

// Most of an answer's strings are ids and plain English: printable ASCII without quotes or
// backslashes goes as it is; anything else is escaped (and invalid UTF-8 replaced) by
// nlohmann, as its dump does.
void TextWriter::PutString(std::string_view s) {
  for (const char ch : s) {
    const auto u = static_cast<unsigned char>(ch);
    if (u < 0x20 || u > 0x7e || ch == '"' || ch == '\\') {
      Put(nlohmann::json(std::string(s))
              .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      return;
    }
  }
  Put('"');
  Put(s);
  Put('"');
}

void TextWriter::PutInt(int64_t v) {
  char buf[24];
  const char* end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  Put(buf, static_cast<size_t>(end - buf));
}

void TextWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (depth_ > 0 && depth_ <= kMaxDepth) {
    if (!first_[depth_ - 1]) Put(',');
    first_[depth_ - 1] = false;
  }
}

void TextWriter::Open(char c) {
  BeforeValue();
  Put(c);
  if (depth_ < kMaxDepth) first_[depth_] = true;
  ++depth_;
}

void TextWriter::Close(char c) {
  --depth_;
  Put(c);
  AfterValue();
}

void TextWriter::Key(std::string_view key) {
  BeforeValue();
  // Keys are the engine's own names (the contract's fields, a band's JSON pointer, a note's
  // parameter), never a catalog's or a request's text: nothing in them needs escaping.
  Put('"');
  Put(key);
  Put("\":", 2);
  after_key_ = true;
}

void TextWriter::String(std::string_view s) {
  BeforeValue();
  PutString(s);
  AfterValue();
}

void TextWriter::Bool(bool b) {
  BeforeValue();
  Put(b ? std::string_view("true") : std::string_view("false"));
  AfterValue();
}

void TextWriter::Int(int64_t v) {
  BeforeValue();
  PutInt(v);
  AfterValue();
}

void TextWriter::Raw(std::string_view json) {
  BeforeValue();
  Put(json);
  AfterValue();
}

void TextWriter::Figure(double v) {
  BeforeValue();
  const double r = SixSignificantDigits(v);
  if (std::isnan(r)) {
    NoteFiniteness(2);
    Put("null", 4);
  } else if (std::isinf(r)) {
    NoteFiniteness(1);
    Put("null", 4);
  } else if (std::floor(r) == r && std::fabs(r) < kExact) {
    PutInt(static_cast<int64_t>(r));
  } else {
    // nlohmann's own shortest round-trip conversion, so the text is the one its dump writes.
    char buf[64];
    const char* end = nlohmann::detail::to_chars(buf, buf + sizeof buf, r);
    Put(buf, static_cast<size_t>(end - buf));
  }
  AfterValue();
}

void TextWriter::Double(double v) {
  BeforeValue();
  if (!std::isfinite(v)) {
    NoteFiniteness(std::isnan(v) ? 2 : 1);
    Put("null", 4);
  } else {
    char buf[64];
    const char* end = nlohmann::detail::to_chars(buf, buf + sizeof buf, v);
    Put(buf, static_cast<size_t>(end - buf));
  }
  AfterValue();
}

void TextWriter::Bytes(double v) {
  if (std::isnan(v)) {
    Figure(v);
  } else if (!std::isfinite(v) || std::fabs(v) > kExact) {
    Figure(std::numeric_limits<double>::infinity());
  } else {
    Int(static_cast<int64_t>(std::llround(v)));
  }
}

}  // namespace gpuplan::json_io
