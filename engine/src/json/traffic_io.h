// SPDX-License-Identifier: MIT
// `gpuplan traffic`: a plan request plus {"traffic": {...}} in, the card types
// compared on it out.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "json/catalog_io.h"
#include "json/request_io.h"
#include "plan/traffic.h"

namespace gpuplan::json_io {

struct ParsedTraffic {
  ParsedRequest base;
  Traffic traffic;
  Json traffic_normalized = Json::object();
  std::vector<GpuSpec> cards;
};

/// False with `errors` (paths rooted at the request) when the request is malformed.
bool ParseTraffic(std::string_view text, const LoadedCatalog& catalog, ParsedTraffic* out,
                  Diagnostics* errors);

Json TrafficToJson(const ParsedTraffic& p, const TrafficResult& r,
                   const std::string& catalog_version);

}  // namespace gpuplan::json_io
