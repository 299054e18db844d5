// SPDX-License-Identifier: MIT
// What the plan says about its answer: the constraint that rejected a card, with its numbers;
// why each recommendation is where it is; the levers of an almost-fit (issue #15).
#include <cmath>
#include <cstdio>

#include "core/units.h"
#include "plan/search.h"

namespace gpuplan::plan_search {
namespace {

std::string Gib(double bytes) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / kGiB);
  return buf;
}

std::string Duration(double seconds) {
  char buf[48];
  if (seconds >= 2 * 86400) {
    std::snprintf(buf, sizeof buf, "%.1f days", seconds / 86400);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f hours", seconds / 3600);
  }
  return buf;
}

std::string Usd(double usd) {
  if (usd < 0 || std::isinf(usd)) return "no price";
  char buf[48];
  std::snprintf(buf, sizeof buf, usd < 100 ? "$%.2f" : "$%.0f", usd);
  return buf;
}

std::string Int(double v) { return std::to_string(std::llround(v)); }

int64_t MaxGpus(const Request& r) {
  return r.constraints.max_gpus > 0 ? r.constraints.max_gpus : 64;
}

PlanRejection MemoryRejection(const Request& base, const GpuSpec& g, const CardSearch& cs) {
  const bool known = !std::isinf(cs.closest_need);
  return {g.id,
          "exceeds_memory",
          "does not fit on up to " + Int(D(MaxGpus(base))) + " cards: the closest setup needs " +
              (known ? Gib(cs.closest_need) : std::string("more than the card holds")) +
              " per GPU with " + Int(base.headroom * 100) + "% headroom, the card has " +
              Gib(g.memory_bytes),
          {{"need_bytes", known ? cs.closest_need : -1},
           {"capacity_bytes", g.memory_bytes},
           {"max_gpus", D(MaxGpus(base))}},
          "/constraints/max_gpus"};
}

PlanRejection ServingRejection(const Request& base, const GpuSpec& g, const CardSearch& cs) {
  const auto& p = cs.serving_params;
  if (cs.serving_code == "exceeds_max_gpus") {
    return {g.id, cs.serving_code,
            "serving " + Int(D(base.workload.concurrency)) + " concurrent requests needs " +
                Int(p.at("replicas")) + " replicas (" + Int(p.at("per_replica")) +
                " requests each) = " + Int(p.at("count")) + " cards, more than max_gpus " +
                Int(p.at("max_gpus")),
            p, "/constraints/max_gpus"};
  }
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "not even one sequence meets the latency targets: on %lld card%s one sequence "
                "has TTFT %.0f ms and TPOT %.1f ms",
                static_cast<long long>(p.at("tp")), p.at("tp") > 1 ? "s" : "", p.at("ttft_ms"),
                p.at("tpot_ms"));
  return {g.id, "misses_latency_targets", buf, p, "/constraints/tpot_ms"};
}

PlanRejection DeadlineRejection(const Request& base, const GpuSpec& g, const CardSearch& cs) {
  const double deadline = base.constraints.deadline_s;
  const std::string fastest = "the fastest setup that fits, " + Int(D(cs.fastest_fit_count)) +
                              " cards, takes " + Duration(cs.fastest_fit_s) +
                              " against a deadline of " + Duration(deadline);
  std::map<std::string, double> params = {{"fastest_s", cs.fastest_fit_s},
                                          {"count", D(cs.fastest_fit_count)},
                                          {"deadline_s", deadline},
                                          {"global_batch", D(base.workload.global_batch)}};
  if (cs.batch_blocked_count > cs.fastest_fit_count) {
    return {g.id, "batch_limits_data_parallel",
            "the global batch of " + Int(D(base.workload.global_batch)) +
                " sequences cannot be spread over more cards: " + fastest +
                "; a larger /workload/global_batch lets more cards help",
            params, "/workload/global_batch"};
  }
  // Even with no loss at all, the deadline needs the compute of this many cards.
  const double needed = std::ceil(cs.one_gpu_bound_s / deadline);
  if (needed > D(cs.largest_count)) {
    params["max_gpus"] = D(MaxGpus(base));
    params["cards_needed_at_least"] = needed;
    return {g.id, "exceeds_max_gpus",
            "meeting the deadline needs at least " + Int(needed) +
                " cards even with perfect scaling, more than max_gpus " + Int(D(MaxGpus(base))) +
                "; " + fastest,
            params, "/constraints/max_gpus"};
  }
  return {g.id, "misses_deadline",
          fastest + "; more cards are slower here (communication outgrows the compute)", params,
          "/constraints/deadline_s"};
}

}  // namespace

PlanRejection RejectionFor(const Request& base, const GpuSpec& g, const CardSearch& cs) {
  if (!cs.fit_any) return MemoryRejection(base, g, cs);
  if (!base.workload.IsTraining()) return ServingRejection(base, g, cs);
  if (base.constraints.deadline_s > 0 && !cs.met_deadline) {
    return DeadlineRejection(base, g, cs);
  }
  const double budget = base.constraints.budget_usd;
  const bool unpriced = std::isinf(cs.cheapest_in_time_usd);
  return {g.id,
          "over_budget",
          unpriced
              ? g.name + " has no price to check the budget against (give usd_per_gpu_hour)"
              : "the cheapest setup that fits" +
                    std::string(base.constraints.deadline_s > 0 ? " and meets the deadline" : "") +
                    " costs " + Usd(cs.cheapest_in_time_usd) + ", over the budget of " +
                    Usd(budget),
          {{"cheapest_usd", unpriced ? -1 : cs.cheapest_in_time_usd}, {"budget_usd", budget}},
          unpriced ? "/usd_per_gpu_hour" : "/constraints/budget_usd"};
}

void Label(const Request& base, Ranking ranking, PlanChoice* choice) {
  const RankFigures& f = choice->figures;
  const std::string cards = Int(D(choice->count)) + " x " + choice->request.gpu.name;
  const bool serving = !base.workload.IsTraining();
  const std::string run =
      serving ? std::string() : ", " + Duration(f.time_s) + ", " + Usd(f.usd_total);
  // A setup below the knee leads its key with 1; an unpriced fine-tuning setup has 1 after
  // its count, an unpriced serving one leads with 1.
  const std::vector<double>& key = choice->key;
  const bool second_tier = ranking == Ranking::kFewestThenCheapest ? key.size() > 1 && key[1] == 1
                                                                   : !key.empty() && key[0] == 1;
  char per_mtok[160] = "";
  if (serving) {
    std::snprintf(per_mtok, sizeof per_mtok,
                  "%s per million output tokens, %.0f tok/s per card "
                  "delivered",
                  Usd(f.usd_per_mtok).c_str(), f.tokens_per_s_per_gpu);
  }
  std::string& code = choice->rank_code;
  std::string& why = choice->rank_reason;
  switch (ranking) {
    case Ranking::kFewestMeetingDeadline:
      code = "fewest_cards_meeting_deadline";
      why = "the fewest cards that finish within the deadline of " +
            Duration(base.constraints.deadline_s) + ": " + cards + run;
      return;
    case Ranking::kFastestAboveKnee:
      if (second_tier) {
        code = "fewest_cards_below_knee";
        why = "no setup keeps scaling efficiency above " + Int(kScalingKnee * 100) +
              "%: the fewest cards, " + cards + run;
      } else {
        code = "fastest_above_knee";
        why = "the fastest setup within max_gpus whose scaling efficiency (" +
              Int(f.scaling_efficiency * 100) + "%) stays above " + Int(kScalingKnee * 100) +
              "%: " + cards + run;
      }
      return;
    case Ranking::kFewestThenCheapest:
    case Ranking::kCheapestPerToken:
      if (second_tier) {
        code = "unpriced_after_priced";
        why =
            "the catalog has no price for this card (give usd_per_gpu_hour): ranked after "
            "every priced card" +
            std::string(serving ? ", by count: " : " of its count: ") + cards +
            (serving ? std::string(", ") + per_mtok : run);
      } else if (serving) {
        code = "cheapest_per_million_tokens";
        why = std::string("the lowest cost per million output tokens ") +
              (base.workload.mode == InferenceMode::kOffline
                   ? "at maximum throughput"
                   : "for " + Int(D(base.workload.concurrency)) +
                         " concurrent requests at the latency targets") +
              ": " + cards + ", " + per_mtok;
      } else {
        code = "fewest_cards_then_cost";
        why =
            "the fewest cards that fit with headroom, then the lowest cost for the run: " + cards +
            run;
      }
      return;
    case Ranking::kTime:
      code = "fastest";
      why = (serving ? "the lowest time per output token: " : "the shortest run: ") + cards + run;
      return;
    case Ranking::kCost:
      code = "cheapest";
      why = (serving ? std::string("the lowest cost per million tokens: ") + per_mtok + ", "
                     : std::string("the lowest cost for the run: ")) +
            cards + run;
      return;
    case Ranking::kPower:
      code = "lowest_power";
      why = "the lowest board power, then speed: " + cards + run;
      return;
    case Ranking::kCount:
      code = "fewest_cards";
      why = "the fewest cards, then speed: " + cards + run;
      return;
  }
}

}  // namespace gpuplan::plan_search
