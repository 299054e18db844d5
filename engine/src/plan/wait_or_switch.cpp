// SPDX-License-Identifier: MIT
#include "plan/wait_or_switch.h"

#include <cstdio>
#include <limits>
#include <string>

#include "plan/search.h"

namespace gpuplan {
namespace {

// Hours below two days, days above.
std::string Days(double s) {
  char buf[32];
  if (s < 172800) {
    std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f days", s / 86400);
  }
  return buf;
}

}  // namespace

WaitOrSwitch DecideWaitOrSwitch(const Question& base, const PlanResult& plan) {
  WaitOrSwitch out;
  if (!base.setup.workload.IsTraining() || plan.recommendations.empty()) return out;
  for (const PlanChoice& c : plan.recommendations) {
    // Each card's own likely range (its generation's band).
    const double band_high = plan_search::TimeBandHigh(c.request);
    const Estimate e = EstimateSetup(c.request, /*with_levers=*/false);
    WaitOption o;
    o.gpu_id = c.request.gpu.id;
    o.count = c.count;
    const auto wait = base.constraints.wait_s.find(o.gpu_id);
    o.wait_s = wait == base.constraints.wait_s.end() ? 0 : wait->second;
    o.run_s = e.training.time_s;
    o.finish_s = o.wait_s + o.run_s;
    o.finish_high_s = plan_search::AtRangeTop(o.finish_s, o.run_s, band_high);
    o.usd_total = e.cost.priced ? e.cost.usd_total : -1;
    // The plan's own rule: a deadline is met at the upper end of the run's likely range.
    o.misses_deadline =
        base.constraints.deadline_s > 0 && o.finish_high_s > base.constraints.deadline_s;
    out.options.push_back(o);
  }
  const WaitOption& best = out.options.front();
  // Finish = wait + tokens / rate for each card; with both rates known, the two lines cross at
  // tokens = (wait_best - wait_alt) / (1/rate_alt - 1/rate_best), when that is positive.
  const double tokens = base.setup.workload.tokens;
  for (size_t i = 0; i < out.options.size(); ++i) {
    WaitOption& o = out.options[i];
    if (o.finish_s < out.options[out.first_finisher].finish_s) out.first_finisher = i;
    if (i == 0 || tokens <= 0 || best.run_s <= 0 || o.run_s <= 0) continue;
    const double per_token_best = best.run_s / tokens;
    const double per_token_alt = o.run_s / tokens;
    const double gap = per_token_alt - per_token_best;
    const double crossing = gap != 0 ? (best.wait_s - o.wait_s) / gap : 0;
    o.break_even_tokens = crossing > 0 ? crossing : 0;
  }
  const WaitOption& first = out.options[out.first_finisher];
  out.chosen = out.first_finisher;
  // Under a deadline, finishing sooner than needed is worth nothing by itself: the cheapest
  // option that meets the deadline and the budget leads, and the verdict prices the switch.
  const Constraints& k = base.constraints;
  if (k.deadline_s > 0) {
    size_t pick = out.options.size();
    const auto dearer = [](const WaitOption& a, const WaitOption& b) {
      const double ua = a.usd_total >= 0 ? a.usd_total : std::numeric_limits<double>::infinity();
      const double ub = b.usd_total >= 0 ? b.usd_total : std::numeric_limits<double>::infinity();
      return ua != ub ? ua > ub : a.finish_s > b.finish_s;
    };
    for (size_t i = 0; i < out.options.size(); ++i) {
      const WaitOption& o = out.options[i];
      if (o.misses_deadline ||
          (k.budget_usd > 0 && !(o.usd_total >= 0 && o.usd_total <= k.budget_usd))) {
        continue;
      }
      if (pick == out.options.size() || dearer(out.options[pick], o)) pick = i;
    }
    if (pick < out.options.size() && pick != out.first_finisher) {
      const WaitOption& p = out.options[pick];
      out.chosen = pick;
      const bool priced = p.usd_total >= 0 && first.usd_total >= 0;
      std::string why =
          (p.wait_s > 0 ? "take " + p.gpu_id + " after its " + Days(p.wait_s) + " queue"
                        : "start now on " + p.gpu_id) +
          ": it meets the deadline at the upper end of its likely range, finishing in " +
          Days(p.finish_s);
      if (priced) {
        char buf[96];
        std::snprintf(buf, sizeof buf, " for $%.0f; %s would finish %s sooner for $%.0f more",
                      p.usd_total, first.gpu_id.c_str(), Days(p.finish_s - first.finish_s).c_str(),
                      first.usd_total - p.usd_total);
        why += buf;
      }
      out.verdict = Note{"cheapest_meeting_deadline",
                         {{"finish_s", p.finish_s},
                          {"usd_total", p.usd_total},
                          {"first_finish_s", first.finish_s},
                          {"saved_s", p.finish_s - first.finish_s},
                          {"extra_usd", priced ? first.usd_total - p.usd_total : -1}},
                         why};
      return out;
    }
  }
  if (out.first_finisher == 0) {
    out.verdict =
        best.wait_s <= 0
            ? Note{"no_queue", {}, "the plan's first card is available now and finishes first"}
            : Note{"wait_for_best",
                   {{"wait_s", best.wait_s}, {"finish_s", best.finish_s}},
                   "wait for " + best.gpu_id + ": even after " + Days(best.wait_s) +
                       " in the queue it finishes first, in " + Days(best.finish_s)};
    return out;
  }
  std::string why =
      (first.wait_s > 0 ? "take " + first.gpu_id + " after its " + Days(first.wait_s) + " queue"
                        : "start now on " + first.gpu_id) +
      ": it finishes in " + Days(first.finish_s) + ", " + Days(best.finish_s - first.finish_s) +
      " before " + (best.wait_s > 0 ? "waiting " + Days(best.wait_s) + " for " : "running on ") +
      best.gpu_id;
  if (first.break_even_tokens > 0) {
    // Which side of the crossing favours the plan's first card: the one that is faster per
    // token wins the longer jobs.
    const bool best_faster = first.run_s > best.run_s;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3g", first.break_even_tokens);
    why += std::string("; for jobs ") + (best_faster ? "longer" : "shorter") + " than " + buf +
           " tokens " + best.gpu_id + " would finish first";
  }
  out.verdict = Note{"switch_now",
                     {{"finish_s", first.finish_s},
                      {"saved_s", best.finish_s - first.finish_s},
                      {"break_even_tokens", first.break_even_tokens}},
                     why};
  return out;
}

}  // namespace gpuplan
