// SPDX-License-Identifier: MIT
// Small helpers the engine's messages share: one number into a printf pattern, and int64 to
// double without a narrowing warning.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace gpuplan::text {

/// `pattern` holds one double conversion ("%.1f GiB", "%.0f%%").
inline std::string Fmt(const char* pattern, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, pattern, v);
  return buf;
}

inline double D(int64_t v) { return static_cast<double>(v); }

}  // namespace gpuplan::text
