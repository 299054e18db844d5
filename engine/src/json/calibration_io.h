// SPDX-License-Identifier: MIT
// JSON for calibration: the request's `calibration` factors and `measured` figures, and the
// `calibrate` result.
#pragma once

#include <string>

#include "after/calibration.h"
#include "json/reader.h"
#include "json/request_io.h"

namespace gpuplan::json_io {

/// Reads `calibration` (factors from an earlier calibrate) into the request.
void ReadCalibration(const Json* v, const ReadContext& ctx, ParsedRequest* out);
/// Reads `measured` (what a run on the request's setup gave).
void ReadMeasured(const Json* v, const ReadContext& ctx, ParsedRequest* out);

/// `{"compute", "bandwidth", "memory", "interconnect", "measured_on"}`.
Json FactorsJson(const CalibrationFactors& f);
/// `[{code, basis, params, message, remedies: [{code, message, change?, fits?}]}]`.
Json DiagnosisJson(const std::vector<Diagnosis>& list);
/// The `calibrate` result.
Json CalibrationToJson(const ParsedRequest& pr, const CalibrationResult& c,
                       const std::string& catalog_version);

}  // namespace gpuplan::json_io
