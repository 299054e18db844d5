// SPDX-License-Identifier: MIT
// `plan`: every card of the catalog x counts x setups, the best setup per card for the
// objective, cards ranked in the seeds' order, rejected cards with their reason, advice.
#pragma once

#include <string>
#include <vector>

#include "core/diagnostics.h"
#include "physics/estimate.h"
#include "physics/request.h"

namespace gpuplan {

struct PlanOptions {
  /// Skip setups that provably cannot fit or cannot beat the best found (exact pruning);
  /// false evaluates every setup, for the test that compares the two.
  bool prune = true;
};

/// The best setup found for one card.
struct PlanChoice {
  Request request;          ///< the complete setup: gpu, parallel, techniques, batch, precision
  int64_t count = 0;        ///< GPUs in all (serving: replicas x GPUs per replica)
  int64_t replicas = 1;     ///< serving
  std::vector<double> key;  ///< the ranking key, compared lexicographically, lower first
  std::string rank_reason;
};

struct PlanRejection {
  std::string gpu_id;
  std::string code;  ///< exceeds_memory, misses_deadline, over_budget, needs_liquid_cooling, ...
  std::string reason;
};

struct PlanResult {
  std::vector<PlanChoice> recommendations;  ///< best first
  std::vector<PlanRejection> rejected;
  std::vector<Note> advice;
  int64_t setups_evaluated = 0;  ///< memory checks run (shows what pruning saved)
};

/// Searches `cards` for `base` (whose gpu and parallel are ignored). Pure.
PlanResult Plan(const Request& base, const std::vector<GpuSpec>& cards,
                const PlanOptions& options = {});

/// The counts tried for a card, up to max_gpus: powers of two, one to eight whole nodes, then
/// 2^j and 3 x 2^(j-1) nodes.
std::vector<int64_t> PlanCounts(int64_t max_gpus, int64_t gpus_per_node);

}  // namespace gpuplan
