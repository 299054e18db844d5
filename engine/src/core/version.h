// SPDX-License-Identifier: MIT
// The engine's version: results carry it, share links pin it (docs/changes.md says what each
// one changed). The one source: CMake's project version reads this line, and package.json is
// checked against it.
#pragma once

#include <string_view>

namespace gpuplan {

inline constexpr std::string_view kEngineVersion = "0.10.0";

}  // namespace gpuplan
