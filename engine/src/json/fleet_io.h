// SPDX-License-Identifier: MIT
// JSON for `gpuplan fleet`: the request (workloads, each an ordinary plan request
// with how often it runs or its daily curve) and the result.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "json/catalog_io.h"
#include "json/reader.h"
#include "plan/fleet.h"

namespace gpuplan::json_io {

struct ParsedFleet {
  FleetRequest fleet;
  std::vector<GpuSpec> cards;  ///< constraints.gpus, else the whole catalog
  Json normalized = Json::object();
};

/// False with `errors` (JSON pointers from the fleet request's root) when malformed.
bool ParseFleet(std::string_view text, const LoadedCatalog& catalog, ParsedFleet* out,
                Diagnostics* errors);

Json FleetToJson(const ParsedFleet& pf, const FleetResult& r, const std::string& catalog_version);

}  // namespace gpuplan::json_io
