// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "after/calibration.h"
#include "json/catalog_io.h"
#include "plan/question.h"

namespace gpuplan::json_io {

/// A request read from JSON: the values, their normalised JSON copy and what was defaulted.
struct ParsedRequest {
  Question request;
  Json normalized = Json::object();
  std::vector<std::string> defaults_applied;  ///< JSON pointers
  std::vector<Note> warnings;
  bool has_measured = false;  ///< the request carried `measured` (read by calibrate only)
  Measurement measured;
};

/// The `field_unused` warning for a field the request gave that its purpose, format or
/// engine does not read.
Note Unused(const std::string& path, const std::string& why);

/// Parses and checks a request against the catalog. Returns false with `errors` filled (each
/// with its JSON pointer) when the request is malformed; `require_gpu` is false for `plan`.
bool ParseRequest(std::string_view text, const LoadedCatalog& catalog, bool require_gpu,
                  ParsedRequest* out, Diagnostics* errors);

}  // namespace gpuplan::json_io
