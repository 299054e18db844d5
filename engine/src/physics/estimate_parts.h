// SPDX-License-Identifier: MIT
// The pieces EstimateSetup combines (estimate.cpp), each in the file named for what it
// computes: setup_warnings.cpp, supply_warnings.cpp, explain_memory.cpp, training_estimate.cpp,
// serving_estimate.cpp, power_cost.cpp.
#pragma once

#include <string>

#include "core/format.h"
#include "core/units.h"
#include "physics/estimate.h"

namespace gpuplan {

/// "12.34 GiB", as every memory message words it.
std::string Gib(double bytes);

/// A layout whose data-parallel degree would be 0 (gpus < tp x pp x cp) is infeasible; this
/// one keeps its arithmetic defined so the memory figures still come out.
Parallel SafeLayout(const Parallel& p);

/// The memory model on the request (its stack's policies, the calibrated slack and scale).
MemoryResult MemoryOf(const Setup& r, const ParamCounts& c, bool with_detail = true);

/// Host RAM per node, with its explanation in `out`.
double HostRam(const Setup& r, const Estimate& e, Estimate* out);

void AddWarnings(const Setup& r, const ParamCounts& c, Estimate* e);
/// Whether the card can be had in the request's market and run by its stack (supply_warnings.cpp).
void AddSupplyWarnings(const Setup& r, Estimate* e);
/// The workload runs through bitsandbytes (QLoRA's 4-bit base, the 8-bit optimizers).
bool NeedsBitsandbytes(const Setup& r);
void ExplainMemory(const Setup& r, const ParamCounts& c, Estimate* e);
void AddTraining(const Setup& r, Estimate* e);
void AddServing(const Setup& r, Estimate* e);
void AddPower(const Setup& r, Estimate* e);
void AddCost(const Setup& r, Estimate* e);
/// Marks every figure a calibration factor changed and warns when it came from another card.
void AddCalibration(const Setup& r, Estimate* e);

}  // namespace gpuplan
