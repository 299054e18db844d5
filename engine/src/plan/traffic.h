// SPDX-License-Identifier: MIT
// Serving sized from traffic: requests per second with prompt and output length
// distributions, a prefix-cache hit rate and latency targets give replicas, cards and cost per
// million tokens for each card type.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/hardware.h"
#include "plan/question.h"

namespace gpuplan {

struct LengthDistribution {
  double mean = 0;
  double p95 = 0;  ///< the tail the memory and TTFT checks use
};

struct Traffic {
  double requests_per_s = 0;
  LengthDistribution prompt;
  LengthDistribution output;
  double prefix_cache_hit = 0;  ///< share of prompt tokens served from the prefix cache
};

/// One card type's answer.
struct TrafficOption {
  std::string gpu_id;
  std::string gpu_name;
  Setup replica;  ///< the replica's setup (the plan's for mean lengths)
  int64_t gpus_per_replica = 0;
  int64_t concurrency_per_replica = 0;  ///< sequences in flight per replica at the load
  double requests_per_s_per_replica = 0;
  int64_t replicas = 0;
  int64_t cards = 0;
  double ttft_mean_s = 0;    ///< prefill of a mean prompt's uncached part
  double ttft_p95_s = 0;     ///< prefill of a p95 prompt's uncached part, queueing excluded
  double tpot_s = 0;         ///< at the replica's concurrency, prefill interleaved
  double prefill_share = 0;  ///< of each replica's time spent prefilling
  double usd_per_hour = -1;  ///< < 0 without a price
  double usd_per_million_output_tokens = -1;
  double usd_per_million_tokens = -1;  ///< prompt and output together
};

struct TrafficRejection {
  std::string gpu_id;
  std::string reason;
};

struct TrafficResult {
  std::vector<TrafficOption> options;  ///< cheapest first (fewest cards when unpriced)
  std::vector<TrafficRejection> rejected;
};

/// Pure. `base` is a validated inference plan request (its targets bound the replicas).
TrafficResult SizeTraffic(const Question& base, const Traffic& traffic,
                          const std::vector<GpuSpec>& cards);

}  // namespace gpuplan
