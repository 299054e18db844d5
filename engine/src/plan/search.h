// SPDX-License-Identifier: MIT
// What the planner's searches share: one card's search state, the ranking keys, prices.
// Internal to plan/.
#pragma once

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "physics/estimate.h"
#include "physics/perf_model.h"
#include "plan/planner.h"

namespace gpuplan::plan_search {

constexpr double kInf = std::numeric_limits<double>::infinity();

inline double D(int64_t v) { return static_cast<double>(v); }

inline bool Better(const std::vector<double>& a, const std::vector<double>& b) {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
}

/// The card's price per GPU-hour (the request's override first); negative when unpriced.
double PricePerGpuHour(const Setup& q);

/// Whether a buyer in the request's market can have the card, as a rank before any other key:
/// 0 sold there (priced or not), 1 sold there but end of life, 2 not sold there (another
/// market's export SKU, or restricted from this market with no offer in it). Whatever else
/// the ranking weighs, a card a buyer cannot get never leads one they can.
inline int SupplyTier(const GpuSpec& g) {
  if (g.market_status == MarketStatus::kOtherMarketSku ||
      g.market_status == MarketStatus::kRestricted) {
    return 2;
  }
  return g.EndOfLife() ? 1 : 0;
}

/// The count limit: constraints.max_gpus, 64 when none is given.
inline int64_t MaxGpus(const Question& r) {
  return r.constraints.max_gpus > 0 ? r.constraints.max_gpus : 64;
}

/// A run's wall-clock time: its time plus what its expected interruptions cost (rework since
/// the last checkpoint, restarts, checkpoint writes).
double WallClockSeconds(const Setup& q, const ParamCounts& c, const TrainingPerf& t);

/// The upper end of the training-time band for the request's stack, as a factor on the
/// estimate (error_bands.h: the 95th percentile of estimated / measured over the validation
/// suite; at least 1).
double TimeBandHigh(const Setup& r);

/// A finish time `central_s` whose run of `run_s` is taken at the upper end of its likely
/// range, run x band_high: the rule a deadline is judged by. A plan that meets the deadline
/// only at the central estimate is the one most likely to be late.
inline double AtRangeTop(double central_s, double run_s, double band_high) {
  return central_s + run_s * (band_high - 1);
}

/// The wall-clock time with interruptions, at the upper end of the run's likely range.
inline double DeadlineSeconds(const Setup& q, const ParamCounts& c, const TrainingPerf& t,
                              double band_high) {
  return AtRangeTop(WallClockSeconds(q, c, t), t.time_s, band_high);
}

/// The smallest need among the setups of one count that do not fit.
struct Miss {
  double need = kInf;  ///< per-GPU bytes with headroom
  double total = 0;    ///< without
  std::optional<Setup> setup;
};

/// What the almost-fit advice reads of a recommended card's search, kept past the card (the
/// search itself is dropped: kilobytes a card, a plan over a large catalog would keep them all).
struct KeptMisses {
  int64_t first_fit_count = 0;  ///< training: the fewest cards some setup fits on; 0: none
  /// Per count, the closest setup that does not fit; only where an almost-fit is looked for
  /// (AlmostFitApplies) and something fits.
  std::map<int64_t, Miss> misses;
};

/// One card's search: the best choice and what explains a rejection.
struct CardSearch {
  std::optional<PlanChoice> best;
  double closest_need = kInf;  ///< smallest per-GPU need with headroom among setups tried
  /// The setup with that need, for the lever advice of a card where nothing fits (read only
  /// then; the training search materialises it only then).
  std::optional<Setup> closest;
  KeptMisses kept;              ///< what outlives the search, for the almost-fit advice
  bool fit_any = false;         ///< some setup fits in memory (then a constraint rejected it)
  double fastest_fit_s = kInf;  ///< training: the fastest setup that fits, at its band's upper end
  double fastest_fit_central_s = kInf;  ///< the same setup's central wall-clock time
  int64_t fastest_fit_count = 0;
  bool met_deadline_central = false;   ///< some setup that fits meets it at the central estimate
  double cheapest_in_time_usd = kInf;  ///< training: cheapest that fits and meets the deadline
  bool met_deadline = false;           ///< some setup that fits meets the deadline
  int64_t batch_blocked_count = 0;     ///< largest count the global batch cannot spread over
  int64_t largest_count = 0;           ///< the largest count tried
  double one_gpu_bound_s = 0;  ///< training: the run on one card at its peak efficiency, no losses
  std::string serving_code;    ///< serving: the constraint met last
  std::map<std::string, double> serving_params;
  /// Serving: where not even one sequence runs as the engine is set (its context, its pool,
  /// its longest request), the estimate's own reason and the field that would change it.
  std::string serving_reason;
  std::string serving_path;
  int64_t evaluated = 0;
  /// Training: the shapes (count, tp, pp) probed in full where nothing fits, sorted.
  std::vector<std::array<int64_t, 3>> shapes_without_fit;
};

/// printf into a string (messages: one pattern is far less code than concatenations).
std::string Say(const char* pattern, ...) __attribute__((format(printf, 1, 2)));
/// "2.3 hours" or "4.5 days".
std::string Duration(double seconds);

/// Records a checked serving setup: the closest miss (serving looks for no almost-fit, so no
/// misses per count).
void Track(CardSearch* cs, const Setup& q, const FitCheck& f);

/// `earlier`: a search of the same card and request under another ranking. Its shapes without
/// a fit are skipped, and no misses are recorded (only the best of a second search is read).
CardSearch SearchTraining(const Question& request, const GpuSpec& g, const ParamCounts& c,
                          const PlanOptions& opt, Ranking ranking,
                          const CardSearch* earlier = nullptr);
CardSearch SearchServing(const Question& base, const GpuSpec& g, const ParamCounts& c,
                         Ranking ranking);
/// One pass of it; `host_layers`: each layout keeps the most layers that fit on its cards and
/// the rest in host memory (serving.n_gpu_layers).
CardSearch SearchServingLayouts(const Question& base, const GpuSpec& g, const ParamCounts& c,
                                Ranking ranking, bool host_layers);

/// The rejection of a card whose search found nothing.
PlanRejection RejectionFor(const Question& base, const GpuSpec& g, const CardSearch& cs);

/// Why a choice is where it is: rank_code and rank_reason.
void Label(const Question& base, Ranking ranking, PlanChoice* choice);

/// Whether a choice under this ranking can carry an almost-fit (AlmostFitFor): where the
/// fastest setup leads, fewer cards would not rank higher, so it is not looked for.
inline bool AlmostFitApplies(Ranking k, const Question& base) {
  return k != Ranking::kTime && k != Ranking::kFastestAboveKnee && base.setup.workload.IsTraining();
}

/// The almost-fit of a choice: a smaller count that misses by less than the headroom (or
/// 10%), with the levers that make it fit.
/// Only where fewer cards would rank higher, and only setups that meet the deadline and budget.
std::optional<AlmostFit> AlmostFitFor(const Question& base, Ranking ranking, const KeptMisses& cs,
                                      const PlanChoice& choice,
                                      const std::vector<PlanChoice>& others);

/// A card rejected for memory whose closest setup misses by little: the single change that
/// makes it fit.
std::optional<Note> LeverForRejected(const PlanRejection& rejection, const CardSearch& cs);

/// The card-sizing rules of thumb, each stated only when this plan's numbers show it;
/// `rejected_levers` (LeverForRejected's, in the order of out->rejected) last.
void Advise(const Question& base, Ranking ranking, std::vector<Note> rejected_levers,
            PlanResult* out);

}  // namespace gpuplan::plan_search
