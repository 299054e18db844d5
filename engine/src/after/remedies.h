// SPDX-License-Identifier: MIT
// The usual remedies for the three common mismatches, shared by the estimate's own
// diagnosis and by calibration's.
#pragma once

#include "after/calibration.h"
#include "physics/estimate.h"

namespace gpuplan::remedies {

/// Below this share of the card, memory counts as plentiful (the target is 85%+; half of it
/// leaves room to double the batch).
inline constexpr double kPlentifulShare = 0.5;
/// Over capacity by at most this fraction counts as "just short": the cheap levers can close it.
inline constexpr double kJustShort = 0.3;
/// A speed-up below this fraction of linear counts as low (an assumption: NCCL-bound data
/// parallelism on a good link keeps 90%+).
inline constexpr double kLowScaling = 0.8;

/// Memory: smaller batch or sequence, gradient accumulation, recomputation, ZeRO, a bigger card;
/// each checked for fit on `r` (which carries any calibration).
std::vector<Remedy> Memory(const Setup& r, double need_bytes);
/// Memory plentiful, throughput low: data pipeline, host RAM, bandwidth, then a larger batch.
std::vector<Remedy> Throughput(const Setup& r, const Estimate& e);
/// Multi-card speed-up low: interconnect, sharding, fewer cards.
std::vector<Remedy> Speedup(const Setup& r, const Estimate& e);

}  // namespace gpuplan::remedies
