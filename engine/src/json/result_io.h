// SPDX-License-Identifier: MIT
#pragma once

#include "after/calibration.h"
#include "json/request_io.h"
#include "physics/estimate.h"
#include "plan/planner.h"

namespace gpuplan::json_io {

/// Notes (warnings, advice, infeasibility) as `[{code, params, message, path?}]`.
Json Notes(const std::vector<Note>& notes);

/// The figures of one estimate (model, memory, performance, cost, power, levers, the
/// diagnosis of its own numbers, notes, explain), without the request echo.
Json EstimateBody(const Request& r, const Estimate& e, const std::vector<Diagnosis>& diagnosis,
                  const std::vector<Note>& request_notes);

/// The contract's plan result. `full`: every recommendation's complete estimate; else the lean
/// answer (docs/contract.md, issue #18): the figures the table and sheet show, bands without
/// their basis (given once, under band_basis) and notes by code, no explain, levers,
/// diagnosis, model or reliability.
Json PlanToJson(const ParsedRequest& pr, const PlanResult& plan, const std::string& catalog_version,
                bool full);

/// The contract's estimate result for a parsed request and its evaluation, with the diagnosis
/// its numbers show.
Json EstimateToJson(const ParsedRequest& pr, const Estimate& e, const std::string& catalog_version);

/// `{"ok": false, "errors": [...]}`.
Json ErrorEnvelope(const Diagnostics& errors);

/// x to six significant digits, as a lean plan writes its figures: the double nearest the
/// decimal printf's "%.6g" makes of it.
double SixSignificantDigits(double x);

/// Serialises an envelope; refuses (as an internal error envelope) any non-finite number.
std::string DumpEnvelope(const Json& envelope);

}  // namespace gpuplan::json_io
