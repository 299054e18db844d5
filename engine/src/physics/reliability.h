// SPDX-License-Identifier: MIT
// Long runs: checkpoints, interruptions, and the time they cost.
#pragma once

#include "physics/perf_model.h"
#include "physics/setup.h"

namespace gpuplan {

/// Unexpected interruptions per GPU-hour: 419 in a 54-day snapshot of Llama 3 405B's
/// pretraining on up to 16,384 H100s (Dubey et al. 2024, "The Llama 3 Herd of Models",
/// section 3.3.4): 419 / (16,384 x 54 x 24) = 1.973e-5.
inline constexpr double kInterruptionsPerGpuHour = 419.0 / (16384.0 * 54.0 * 24.0);
/// Storage write bandwidth assumed when the request gives none (host.storage_bytes_per_s).
inline constexpr double kDefaultStorageBytesPerS = 2e9;
/// Time to restart a job after an interruption (reschedule, reload the checkpoint): assumed.
inline constexpr double kRestartSeconds = 600;

struct ReliabilityEstimate {
  double checkpoint_bytes = 0;  ///< the whole job's checkpoint
  double checkpoint_write_s = 0;
  double storage_bytes_per_s = 0;  ///< used (given or assumed)
  double expected_interruptions = 0;
  double checkpoint_interval_s = 0;  ///< Young/Daly: sqrt(2 x write time x job MTBF)
  double expected_lost_s = 0;        ///< rework after failures + restarts + checkpoint writes
};

/// For a training run of `perf.time_s`.
ReliabilityEstimate EstimateReliability(const Setup& r, const ParamCounts& c,
                                        const TrainingPerf& perf);

}  // namespace gpuplan
