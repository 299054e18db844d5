// SPDX-License-Identifier: MIT
// The global batch a plan holds fixed when the request gives none: published practice, not the
// one sequence that micro_batch 1 x grad_accum 1 would mean (which caps data parallelism at 1).
#pragma once

#include <cstdint>
#include <string>

#include "model/workload.h"

namespace gpuplan {

struct BatchDefault {
  int64_t sequences = 0;  ///< sequences per optimizer step, of the workload's seq_len
  double tokens = 0;      ///< sequences x seq_len
  std::string source;     ///< where the figure comes from, in words
};

/// The default global batch for a training workload of a model with `params` parameters.
BatchDefault DefaultGlobalBatch(const Workload& w, double params);

}  // namespace gpuplan
