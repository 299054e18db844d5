// SPDX-License-Identifier: MIT
// Reverse questions: for a fixed card, count and layout, the most it can take.
#pragma once

#include <cstdint>

#include "plan/question.h"

namespace gpuplan {

/// The largest values that still fit with the headroom (and, serving, meet the latency targets),
/// each found with the request's other settings held; 0 when even the smallest does not.
struct Limits {
  // Training.
  int64_t max_micro_batch = 0;  ///< at the request's seq_len
  int64_t max_seq_len = 0;      ///< at the request's micro-batch
  // Serving.
  int64_t max_concurrency = 0;     ///< at the request's prompt and output lengths
  int64_t max_context_tokens = 0;  ///< prompt + output per sequence at the request's concurrency
  int64_t max_context_alone = 0;   ///< the same for one sequence
  // Lengths stop at the model's context (max_position_embeddings) when it has one.
  bool seq_len_at_model_limit = false;
  bool context_at_model_limit = false;
  bool context_alone_at_model_limit = false;
};

/// Pure: no I/O. `r` is a validated request with its gpu and layout.
Limits FindLimits(const Setup& r);

/// The largest n in [1, hi] with ok(n) true, given ok is true up to some n and false after;
/// 0 when ok(1) is false. Doubles, then bisects.
template <typename Ok>
int64_t LargestTrue(int64_t hi, Ok ok) {
  if (hi < 1 || !ok(1)) return 0;
  int64_t lo = 1;
  int64_t up = 2;
  while (up <= hi && ok(up)) {
    lo = up;
    up *= 2;
  }
  if (up > hi) {
    if (ok(hi)) return hi;
    up = hi;
  }
  while (up - lo > 1) {
    const int64_t mid = lo + (up - lo) / 2;
    (ok(mid) ? lo : up) = mid;
  }
  return lo;
}

}  // namespace gpuplan
