// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>

namespace gpuplan {

/// Bytes in one gibibyte (2^30). Memory sizes inside the engine are bytes.
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
/// Bytes in one gigabyte (10^9): vendors' "GB" and the network's "GB/s".
inline constexpr double kGB = 1e9;
/// FLOP/s in one TFLOP/s.
inline constexpr double kTera = 1e12;

}  // namespace gpuplan
