// SPDX-License-Identifier: MIT
// `plan`: every card of the catalog x counts x setups, the best setup per card for the
// purpose, cards ranked by it, rejected cards with the constraint that binds, advice.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/boxed.h"
#include "core/diagnostics.h"
#include "physics/estimate.h"
#include "physics/levers.h"
#include "plan/question.h"

namespace gpuplan {

struct PlanOptions {
  /// Skip setups that provably cannot fit or cannot beat the best found (exact pruning);
  /// false evaluates every setup, for the test that compares the two.
  bool prune = true;
};

/// How setups are ordered: each purpose's default, then the
/// objectives a user can pick.
enum class Ranking {
  kFewestMeetingDeadline,  ///< pretraining with a deadline: fewest cards, then cost
  kFastestAboveKnee,       ///< pretraining without one: fastest above the scaling knee
  kFewestThenCheapest,     ///< fine-tuning: fewest cards that fit, then the run's cost, time
  kCheapestPerToken,       ///< serving and offline batch: cost per million output tokens
  kTime,
  kCost,
  kCount,
  kPower,
};
Ranking RankingFor(const Question& r);

/// The scaling efficiency (compute / step time) below which adding cards is not worth it:
/// beyond it more than a fifth of every step is communication, pipeline bubble or optimizer
/// step. A planning convention, not a fit: it keeps the "fastest" answer at the count where
/// the speed-up stops growing in step with the card count.
constexpr double kScalingKnee = 0.8;

/// A setup that misses by little, and the changes that make it fit.
struct AlmostFit {
  Setup setup;
  int64_t count = 0;
  double total_bytes = 0;
  double total_with_headroom_bytes = 0;
  double capacity_bytes = 0;
  std::vector<Lever> levers;  ///< only those that fit, in the order they are usually tried
};

/// The figures a choice was ranked on.
struct RankFigures {
  double time_s = 0;                ///< training run
  double usd_total = -1;            ///< training run; -1 unpriced
  double usd_per_mtok = -1;         ///< serving; -1 unpriced
  double tokens_per_s_per_gpu = 0;  ///< serving: output tokens
  double scaling_efficiency = 0;    ///< training
};

/// Pretraining without a deadline: the fewest-cards setup, shown beside the fastest.
struct FewestCards {
  Setup setup;
  int64_t count = 0;
  double time_s = 0;
  double usd_total = -1;
};

/// The best setup found for one card.
struct PlanChoice {
  Setup request;            ///< the complete setup: gpu, parallel, techniques, batch, precision
  int64_t count = 0;        ///< GPUs in all (serving: replicas x GPUs per replica)
  int64_t replicas = 1;     ///< serving
  std::vector<double> key;  ///< the ranking key, compared lexicographically, lower first
  RankFigures figures;
  std::string rank_code;  ///< why it is where it is, a stable id
  std::string rank_reason;
  // On the heap: each holds a whole Setup, and most rows have neither.
  Boxed<AlmostFit> almost_fits;
  Boxed<FewestCards> fewest_cards;
};

struct PlanRejection {
  std::string gpu_id;
  std::string code;  ///< the constraint that binds: exceeds_memory, misses_deadline, ...
  std::string reason;
  std::map<std::string, double> params;
  std::string path;  ///< the request field that would change it, when there is one
};

struct PlanResult {
  std::vector<PlanChoice> recommendations;  ///< best first
  std::vector<PlanRejection> rejected;
  std::vector<Note> advice;
  int64_t setups_evaluated = 0;  ///< memory checks run (shows what pruning saved)
  int64_t global_batch = 0;      ///< training: sequences per step, held fixed across counts
  bool global_batch_default = false;
};

/// Searches `cards` for `base` (whose gpu and parallel are ignored). Pure.
PlanResult Plan(const Question& base_request, const std::vector<GpuSpec>& cards,
                const PlanOptions& options = {});

/// The counts tried for a card, up to max_gpus: powers of two, one to eight whole nodes, then
/// 2^j and 3 x 2^(j-1) nodes.
std::vector<int64_t> PlanCounts(int64_t max_gpus, int64_t gpus_per_node);

}  // namespace gpuplan
