// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <utility>

#include "after/calibration.h"
#include "json/request_io.h"
#include "json/text_writer.h"
#include "physics/estimate.h"
#include "plan/planner.h"

namespace gpuplan::json_io {

/// The seven memory parts by their contract names, in the (sorted) order nlohmann writes them.
std::array<std::pair<const char*, double>, 7> MemoryParts(const MemoryBreakdown& b);

/// Notes (warnings, advice, infeasibility) as `[{code, params, message, path?}]`.
Json Notes(const std::vector<Note>& notes);

/// The figures of one estimate (model, memory, performance, cost, power, levers, the
/// diagnosis of its own numbers, notes, explain), without the request echo.
Json EstimateBody(const Setup& r, const Estimate& e, const std::vector<Diagnosis>& diagnosis,
                  const std::vector<Note>& request_notes);

/// The contract's plan result with every recommendation's complete estimate (`plan --full`);
/// the lean answer, which the page asks for, is LeanPlanEnvelope's.
Json PlanToJson(const ParsedRequest& pr, const PlanResult& plan,
                const std::string& catalog_version);

/// The contract's estimate result for a parsed request and its evaluation, with the diagnosis
/// its numbers show.
Json EstimateToJson(const ParsedRequest& pr, const Estimate& e, const std::string& catalog_version);

/// The lean plan's whole envelope as text, written directly (lean_plan.cpp): the same bytes
/// DumpEnvelope would make of PlanToJson(..., false), without building it first.
std::string LeanPlanEnvelope(const ParsedRequest& pr, const PlanResult& plan,
                             const std::string& catalog_version);

/// A plan result's members other than its recommendations (and the lean answer's band_basis):
/// the request echo, rejections (unless the lean writer writes them itself), advice, warnings,
/// wait-or-switch.
Json PlanHead(const ParsedRequest& pr, const PlanResult& plan, const std::string& catalog_version,
              bool full, bool with_rejected = true);

/// A lean row's rounding for a value built as nlohmann JSON: every float to six significant
/// digits, a whole one as an integer, null members left out.
void RoundFigures(Json* j);

/// 0: every number finite; 1: some too large (infinite); 2: some not a number.
int Finiteness(const Json& j);

/// The error envelope a result with a non-finite figure (Finiteness 1 or 2) is answered with.
std::string RefusedEnvelope(int finiteness);

/// `{"ok": false, "errors": [...]}`.
Json ErrorEnvelope(const Diagnostics& errors);

/// Serialises an envelope; refuses (as an internal error envelope) any non-finite number.
std::string DumpEnvelope(const Json& envelope);

}  // namespace gpuplan::json_io
