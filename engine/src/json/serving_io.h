// SPDX-License-Identifier: MIT
// JSON for the request's `serving` block (contract, second round): a serving engine's own
// settings, each defaulting to the engine's documented default at `serving.version`.
#pragma once

#include "json/reader.h"
#include "json/request_io.h"

namespace gpuplan::json_io {

/// Reads `serving` into the request's serving overrides. Needs the framework and the workload
/// read first: settings of another engine, or of no engine, are reported unused.
void ReadServing(const Json* v, const ReadContext& ctx, ParsedRequest* out);

}  // namespace gpuplan::json_io
