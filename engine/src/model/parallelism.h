// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <vector>

#include "core/diagnostics.h"
#include "model/model_spec.h"

namespace gpuplan {

/// How the job is laid out over GPUs (contract: parallel).
struct Parallel {
  int64_t gpus = 1;
  int64_t tp = 1;  ///< tensor parallel
  int64_t pp = 1;  ///< pipeline parallel
  int64_t cp = 1;  ///< context parallel (sequence split for long context)
  int64_t ep = 1;  ///< expert parallel
  int zero = 0;    ///< ZeRO stage 0-3 (3 = FSDP full shard)
  bool sequence_parallel = false;

  /// Data-parallel degree: gpus / (tp * pp * cp).
  int64_t Dp() const { return gpus / (tp * pp * cp); }
  /// Ranks a ZeRO stage shards over: data- and context-parallel ranks (Megatron's choice).
  int64_t ShardGroup() const { return Dp() * cp; }
};

/// Reasons a well-formed layout cannot run this model (TP not dividing heads, ...); empty when
/// it can. These are results, not input errors.
std::vector<Note> CheckLayout(const ModelSpec& m, const Parallel& p);

}  // namespace gpuplan
