// SPDX-License-Identifier: MIT
// What the plan says about its answer: the constraint that rejected a card, with its numbers;
// why each recommendation is where it is. Messages are printf patterns: the page
// downloads this code, and one pattern is far smaller than a chain of string concatenations.
#include <cmath>
#include <cstdarg>
#include <cstdio>

#include "core/units.h"
#include "plan/search.h"

namespace gpuplan::plan_search {

std::string Say(const char* pattern, ...) {
  char buf[512];
  va_list args;
  va_start(args, pattern);
  std::vsnprintf(buf, sizeof buf, pattern, args);
  va_end(args);
  return buf;
}

std::string Duration(double seconds) {
  return seconds >= 2 * 86400 ? Say("%.1f days", seconds / 86400)
                              : Say("%.1f hours", seconds / 3600);
}

namespace {

std::string Usd(double usd) {
  if (usd < 0 || std::isinf(usd)) return "no price";
  return Say(usd < 100 ? "$%.2f" : "$%.0f", usd);
}

PlanRejection MemoryRejection(const Question& base, const GpuSpec& g, const CardSearch& cs) {
  const bool known = !std::isinf(cs.closest_need);
  const std::string need =
      known ? Say("%.1f GiB", cs.closest_need / kGiB) : "more than the card holds";
  // Serving splits a replica over one server at most (tensor parallel inside a node).
  const std::string where =
      base.setup.workload.IsTraining()
          ? Say("on up to %.0f cards", D(MaxGpus(base)))
          : Say("on one server of %lld (a replica's tensor parallel stays inside a node)",
                static_cast<long long>(std::min<int64_t>(8, g.gpus_per_node)));
  return {g.id,
          "exceeds_memory",
          Say("does not fit %s: the closest setup needs %s per GPU with %.0f%% headroom, the card "
              "has %.1f GiB",
              where.c_str(), need.c_str(), base.setup.headroom * 100, g.CapacityBytes() / kGiB),
          {{"need_bytes", known ? cs.closest_need : -1},
           {"capacity_bytes", g.CapacityBytes()},
           {"max_gpus", D(MaxGpus(base))}},
          "/constraints/max_gpus"};
}

PlanRejection ServingRejection(const Question& base, const GpuSpec& g, const CardSearch& cs) {
  const auto& p = cs.serving_params;
  if (!cs.serving_reason.empty()) {
    return {g.id, cs.serving_code, cs.serving_reason, p, cs.serving_path};
  }
  if (cs.serving_code == "exceeds_max_gpus") {
    return {g.id, cs.serving_code,
            Say("serving %lld concurrent requests needs %.0f replicas (%.0f requests each) = %.0f "
                "cards, more than max_gpus %.0f",
                static_cast<long long>(base.setup.workload.concurrency), p.at("replicas"),
                p.at("per_replica"), p.at("count"), p.at("max_gpus")),
            p, "/constraints/max_gpus"};
  }
  return {g.id, "misses_latency_targets",
          Say("not even one sequence meets the latency targets: on %.0f card%s one sequence has "
              "TTFT %.0f ms and TPOT %.1f ms",
              p.at("tp"), p.at("tp") > 1 ? "s" : "", p.at("ttft_ms"), p.at("tpot_ms")),
          p, "/constraints/tpot_ms"};
}

PlanRejection DeadlineRejection(const Question& base, const GpuSpec& g, const CardSearch& cs) {
  const double deadline = base.constraints.deadline_s;
  const std::string fastest =
      Say("the fastest setup that fits, %lld cards, takes %s with its expected interruptions, "
          "up to %s at the upper end of its likely range, against a deadline of %s",
          static_cast<long long>(cs.fastest_fit_count), Duration(cs.fastest_fit_central_s).c_str(),
          Duration(cs.fastest_fit_s).c_str(), Duration(deadline).c_str());
  const double batch = D(base.setup.workload.global_batch);
  std::map<std::string, double> params = {{"fastest_s", cs.fastest_fit_s},
                                          {"fastest_central_s", cs.fastest_fit_central_s},
                                          {"count", D(cs.fastest_fit_count)},
                                          {"deadline_s", deadline},
                                          {"global_batch", batch}};
  // Met at the central estimate, missed at the band's upper end: the plan a lead would sign
  // is the one that clears the range, and no count of this card within max_gpus does.
  if (cs.met_deadline_central) {
    params["max_gpus"] = D(MaxGpus(base));
    return {g.id, "likely_range_crosses_deadline",
            Say("the central estimate meets the deadline, but no setup within max_gpus %.0f "
                "does at the upper end of its likely range: %s",
                D(MaxGpus(base)), fastest.c_str()),
            params, "/constraints/max_gpus"};
  }
  // Even with no loss at all, the deadline needs the compute of this many cards.
  const double needed = std::ceil(cs.one_gpu_bound_s / deadline);
  params["cards_needed_at_least"] = needed;
  if (needed > D(cs.largest_count) || cs.fastest_fit_count >= cs.largest_count) {
    params["max_gpus"] = D(MaxGpus(base));
    return {g.id, "exceeds_max_gpus",
            needed > D(cs.largest_count)
                ? Say("meeting the deadline needs at least %.0f cards even with perfect scaling, "
                      "more than max_gpus %.0f; %s",
                      needed, D(MaxGpus(base)), fastest.c_str())
                : Say("the fastest setup uses all the cards max_gpus %.0f allows: %s; more cards "
                      "would be faster",
                      D(MaxGpus(base)), fastest.c_str()),
            params, "/constraints/max_gpus"};
  }
  if (cs.batch_blocked_count > cs.fastest_fit_count) {
    return {g.id, "batch_limits_data_parallel",
            Say("the global batch of %.0f sequences is smaller than the data-parallel ranks of "
                "more cards: %s; a larger /workload/global_batch lets more cards help",
                batch, fastest.c_str()),
            params, "/workload/global_batch"};
  }
  return {g.id, "misses_deadline",
          fastest + "; more cards are slower here (communication outgrows the compute)", params,
          "/constraints/deadline_s"};
}

}  // namespace

PlanRejection RejectionFor(const Question& base, const GpuSpec& g, const CardSearch& cs) {
  if (!cs.fit_any) return MemoryRejection(base, g, cs);
  if (!base.setup.workload.IsTraining()) return ServingRejection(base, g, cs);
  if (base.constraints.deadline_s > 0 && !cs.met_deadline) {
    return DeadlineRejection(base, g, cs);
  }
  const double budget = base.constraints.budget_usd;
  const bool unpriced = std::isinf(cs.cheapest_in_time_usd);
  return {g.id,
          "over_budget",
          unpriced ? Say("%s has no price to check the budget against (give "
                         "pricing.usd_per_gpu_hour)",
                         g.name.c_str())
                   : Say("the cheapest setup that fits%s costs %s, over the budget of %s",
                         base.constraints.deadline_s > 0 ? " and meets the deadline" : "",
                         Usd(cs.cheapest_in_time_usd).c_str(), Usd(budget).c_str()),
          {{"cheapest_usd", unpriced ? -1 : cs.cheapest_in_time_usd}, {"budget_usd", budget}},
          unpriced ? "/pricing/usd_per_gpu_hour" : "/constraints/budget_usd"};
}

namespace {

struct Wording {
  const char* code;
  const char* pattern;  ///< %s: the setup ("8 x NVIDIA H100 SXM 80GB, 2.0 days, $1,234")
};

Wording Words(Ranking ranking, bool serving, bool second_tier, bool offline) {
  switch (ranking) {
    case Ranking::kFewestMeetingDeadline:
      return {"fewest_cards_meeting_deadline",
              "the fewest of this card that finish within the deadline of %s at the upper end "
              "of their likely range (cards ranked by the run's cost): %s"};
    case Ranking::kFastestAboveKnee:
      return second_tier ? Wording{"fewest_cards_below_knee",
                                   "no setup keeps scaling efficiency above %s: the fewest "
                                   "cards, %s"}
                         : Wording{"fastest_above_knee",
                                   "the fastest setup within max_gpus whose scaling efficiency "
                                   "stays above the knee, %s: %s"};
    case Ranking::kFewestThenCheapest:
    case Ranking::kCheapestPerToken:
      if (second_tier) {
        return {"unpriced_after_priced",
                serving ? "the catalog has no price for this card (give "
                          "pricing.usd_per_gpu_hour): ranked after every priced card, by count: "
                          "%s%s"
                        : "the catalog has no price for this card (give "
                          "pricing.usd_per_gpu_hour): ranked after every priced card of its "
                          "count: %s%s"};
      }
      if (!serving) {
        return {"fewest_cards_then_cost",
                "the fewest cards that fit with headroom, then the lowest cost for the run: "
                "%s%s"};
      }
      return {"cheapest_per_million_tokens",
              offline ? "the lowest cost per million output tokens at maximum throughput: %s%s"
                      : "the lowest cost per million output tokens for %s concurrent requests "
                        "at the latency targets: %s"};
    case Ranking::kTime:
      return {"fastest",
              serving ? "the lowest time per output token: %s%s" : "the shortest run: %s%s"};
    case Ranking::kCost:
      return {"cheapest", serving ? "the lowest cost per million tokens: %s%s"
                                  : "the lowest cost for the run: %s%s"};
    case Ranking::kPower:
      return {"lowest_power", "the lowest board power, then speed: %s%s"};
    case Ranking::kCount:
      break;
  }
  return {"fewest_cards", "the fewest cards, then speed: %s%s"};
}

}  // namespace

void Label(const Question& base, Ranking ranking, PlanChoice* choice) {
  const RankFigures& f = choice->figures;
  const bool serving = !base.setup.workload.IsTraining();
  const bool offline = base.setup.workload.mode == InferenceMode::kOffline;
  // A setup below the knee leads its key with 1; an unpriced fine-tuning setup has 1 after
  // its count, an unpriced serving one leads with 1.
  const std::vector<double>& key = choice->key;
  const bool second_tier = ranking == Ranking::kFewestThenCheapest ? key.size() > 1 && key[1] == 1
                                                                   : !key.empty() && key[0] == 1;
  const std::string setup =
      serving ? Say("%lld x %s, %s per million output tokens, %.0f tok/s per card delivered",
                    static_cast<long long>(choice->count), choice->request.gpu.name.c_str(),
                    Usd(f.usd_per_mtok).c_str(), f.tokens_per_s_per_gpu)
              : Say("%lld x %s, %s, %s", static_cast<long long>(choice->count),
                    choice->request.gpu.name.c_str(), Duration(f.time_s).c_str(),
                    Usd(f.usd_total).c_str());
  const Wording w = Words(ranking, serving, second_tier, offline);
  choice->rank_code = w.code;
  // The first %s of each pattern: the deadline, the knee, the concurrency, or nothing.
  std::string first;
  if (ranking == Ranking::kFewestMeetingDeadline) first = Duration(base.constraints.deadline_s);
  if (ranking == Ranking::kFastestAboveKnee) {
    first = second_tier ? Say("%.0f%%", kScalingKnee * 100)
                        : Say("%.0f%% (this setup: %.0f%%)", kScalingKnee * 100,
                              f.scaling_efficiency * 100);
  }
  const bool online_priced =
      ranking == Ranking::kCheapestPerToken && serving && !offline && !second_tier;
  if (online_priced) first = Say("%lld", static_cast<long long>(base.setup.workload.concurrency));
  choice->rank_reason = first.empty() ? Say(w.pattern, setup.c_str(), "")
                                      : Say(w.pattern, first.c_str(), setup.c_str());
  // A card the buyer's market does not sell, or one at its end of life, says so first: the
  // rows before it are the ones a buyer there can sign.
  const GpuSpec& g = choice->request.gpu;
  const int tier = SupplyTier(g);
  if (tier == 2) {
    choice->rank_code = "not_sold_in_market";
    choice->rank_reason =
        Say("not sold in the %s market (%s): ranked after every card sold there: %s",
            base.setup.pricing.market.market.c_str(),
            g.market_status == MarketStatus::kOtherMarketSku
                ? "an export SKU of another market"
                : "restricted from sale there, and no offer there",
            setup.c_str());
  } else if (tier == 1) {
    choice->rank_code = "end_of_life_after_current";
    choice->rank_reason = Say("end of life since %s (%s): ranked after current cards: %s",
                              g.supply->end_of_life_since.c_str(),
                              g.supply->end_of_life_reason.c_str(), setup.c_str());
  }
}

}  // namespace gpuplan::plan_search
