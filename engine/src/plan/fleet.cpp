// SPDX-License-Identifier: MIT
#include "plan/fleet.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/format.h"
#include "physics/estimate.h"
#include "plan/planner.h"

namespace gpuplan {
namespace {

using text::D;
using text::Fmt;

std::string SetupText(const PlanChoice& c) {
  const Parallel& p = c.request.parallel;
  std::string s = std::to_string(c.count) + " x " + c.request.gpu.id;
  if (p.tp > 1) s += " TP" + std::to_string(p.tp);
  if (p.pp > 1) s += " PP" + std::to_string(p.pp);
  if (p.zero > 0) s += " ZeRO-" + std::to_string(p.zero);
  if (c.replicas > 1) s += " (" + std::to_string(c.replicas) + " replicas)";
  return s;
}

// Consecutive hours, around the clock, in which at least `cards` serving cards stand idle.
int LongestIdleWindow(const std::array<int64_t, 24>& idle, int64_t cards) {
  int best = 0;
  for (int start = 0; start < 24; ++start) {
    int run = 0;
    while (run < 24 && idle[(start + run) % 24] >= cards) ++run;
    best = std::max(best, run);
  }
  return best;
}

// One workload on one card: the plan's best setup and what it means for the pool. False (and
// `why`) when the card cannot run it.
bool Place(const FleetWorkload& w, double growth, const GpuSpec& card, FleetShare* out,
           std::string* why) {
  Question q = w.request;
  if (w.online) {
    const double peak =
        *std::max_element(w.concurrency_by_hour.begin(), w.concurrency_by_hour.end());
    q.setup.workload.SetConcurrency(std::max<int64_t>(1, std::llround(std::ceil(peak * growth))));
  }
  const PlanResult plan = Plan(q, {card});
  if (plan.recommendations.empty()) {
    *why = plan.rejected.empty() ? "no setup fits" : plan.rejected.front().reason;
    return false;
  }
  const PlanChoice& c = plan.recommendations.front();
  const Estimate e = EstimateSetup(c.request, /*with_levers=*/false);
  out->name = w.name;
  out->online = w.online;
  out->setup = SetupText(c);
  out->cards_at_peak = c.count;
  if (c.count == 1 && e.total_with_headroom_bytes > 0) {
    out->jobs_per_card = std::max<int64_t>(
        1, static_cast<int64_t>(std::floor(card.CapacityBytes() / e.total_with_headroom_bytes)));
  }
  // Growth makes batch work come round more often.
  const double every_days = w.every_days / growth;
  if (q.setup.workload.IsTraining()) {
    out->run_s = e.training.time_s;
  } else if (!w.online) {
    // Offline: the plan's replicas at their largest batch, until every sequence is generated.
    // Prefill every prompt, then decode every output, spread over the replicas.
    const InferencePerf& at = e.serving.at_request;
    const double prompts = w.requests_per_run * D(q.setup.workload.prompt_tokens);
    const double outputs = w.requests_per_run * D(q.setup.workload.output_tokens);
    const double per_replica_s =
        (at.prefill_tokens_per_s > 0 ? prompts / at.prefill_tokens_per_s : 0) +
        (at.decode_tokens_per_s_total > 0 ? outputs / at.decode_tokens_per_s_total : 0);
    out->run_s = per_replica_s / D(std::max<int64_t>(1, c.replicas));
  }
  if (!w.online) {
    out->card_hours_per_day = D(c.count) * out->run_s / 3600 / every_days;
    return true;
  }
  // Online: replicas follow the day's curve; one always stays up. The replica the plan picks
  // for the peak may be large (a TP4 group up all night); the one it picks for the quietest
  // hour may follow the curve more closely. Keep whichever serves the day in fewer card-hours.
  const double lowest =
      *std::min_element(w.concurrency_by_hour.begin(), w.concurrency_by_hour.end());
  Question quiet = q;
  quiet.setup.workload.SetConcurrency(
      std::max<int64_t>(1, std::llround(std::ceil(lowest * growth))));
  const PlanResult small = Plan(quiet, {card});
  std::vector<const PlanChoice*> candidates = {&c};
  if (!small.recommendations.empty()) candidates.push_back(&small.recommendations.front());
  bool placed = false;
  for (const PlanChoice* cand : candidates) {
    const Estimate ce = EstimateSetup(cand->request, /*with_levers=*/false);
    const int64_t per_replica = std::max<int64_t>(1, ce.serving.max_concurrency);
    const int64_t gpus = cand->request.parallel.gpus;
    std::array<int64_t, 24> by_hour{};
    double card_hours = 0;
    for (int h = 0; h < 24; ++h) {
      const double wanted = std::ceil(w.concurrency_by_hour[h] * growth);
      const int64_t replicas =
          std::max<int64_t>(1, static_cast<int64_t>(std::ceil(wanted / D(per_replica))));
      by_hour[h] = replicas * gpus;
      card_hours += D(by_hour[h]);
    }
    const int64_t peak = *std::max_element(by_hour.begin(), by_hour.end());
    if (q.constraints.max_gpus > 0 && peak > q.constraints.max_gpus) continue;
    if (placed && card_hours >= out->card_hours_per_day) continue;
    placed = true;
    out->cards_by_hour = by_hour;
    out->card_hours_per_day = card_hours;
    out->cards_at_peak = peak;
    // One replica's layout, and how many sequences it holds within the latency targets.
    PlanChoice one = *cand;
    one.count = gpus;
    one.replicas = 1;
    out->setup =
        SetupText(one) + " per replica, up to " + std::to_string(per_replica) + " sequences";
  }
  return placed;
}

void Pools(FleetOption* o, double price, const FleetOwnership& own) {
  std::array<int64_t, 24> serving{};
  int64_t largest_batch = 0;
  double longest_batch_s = 0;
  for (const FleetShare& s : o->shares) {
    if (s.online) {
      for (int h = 0; h < 24; ++h) serving[h] += s.cards_by_hour[h];
      o->serving_card_hours_per_day += s.card_hours_per_day;
    } else {
      largest_batch = std::max(largest_batch, s.cards_at_peak);
      longest_batch_s = std::max(longest_batch_s, s.run_s);
      o->batch_card_hours_per_day += s.card_hours_per_day;
    }
  }
  const bool any_online =
      std::any_of(o->shares.begin(), o->shares.end(), [](const FleetShare& s) { return s.online; });
  if (any_online) {
    o->serving_peak_cards = *std::max_element(serving.begin(), serving.end());
    o->serving_min_cards = *std::min_element(serving.begin(), serving.end());
    o->serving_utilization = o->serving_card_hours_per_day / (D(o->serving_peak_cards) * 24);
  }
  if (largest_batch > 0) {
    o->batch_cards = std::max<int64_t>(
        largest_batch, static_cast<int64_t>(std::ceil(o->batch_card_hours_per_day / 24)));
    o->batch_utilization = o->batch_card_hours_per_day / (D(o->batch_cards) * 24);
  }
  o->owned_cards = o->serving_peak_cards + o->batch_cards;

  // Serving and offline batch usually do not share a pool. They can only when the
  // batch work fits into the serving pool's idle hours, in one window long enough for the
  // longest run.
  if (any_online && largest_batch > 0) {
    std::array<int64_t, 24> idle{};
    double idle_hours = 0;
    for (int h = 0; h < 24; ++h) {
      idle[h] = o->serving_peak_cards - serving[h];
      idle_hours += D(idle[h]);
    }
    const int window = LongestIdleWindow(idle, largest_batch);
    const bool fits =
        o->batch_card_hours_per_day <= idle_hours && longest_batch_s <= window * 3600.0;
    o->share_verdict =
        fits ? Note{"share_off_peak",
                    {{"window_h", window}, {"saved_cards", D(o->batch_cards)}},
                    "the batch work fits in the serving pool's quiet hours (" +
                        std::to_string(window) + " h with " + std::to_string(largest_batch) +
                        "+ cards idle): sharing saves the " + std::to_string(o->batch_cards) +
                        "-card batch pool, if batch jobs yield to traffic (preemption)"}
             : Note{"keep_separate",
                    {{"window_h", window},
                     {"idle_card_hours", idle_hours},
                     {"batch_card_hours", o->batch_card_hours_per_day},
                     {"longest_batch_h", longest_batch_s / 3600}},
                    "keep serving and batch apart: the serving pool's quiet hours (" +
                        Fmt("%.0f", idle_hours) + " idle card-hours a day, at most " +
                        std::to_string(window) + " h in a row with " +
                        std::to_string(largest_batch) + " cards free) cannot hold " +
                        Fmt("%.0f", o->batch_card_hours_per_day) +
                        " card-hours of batch work whose longest run takes " +
                        Fmt("%.1f", longest_batch_s / 3600) + " h"};
  } else {
    o->share_verdict = Note{"one_kind", {}, "only one kind of work: one pool"};
  }
  const double used = o->serving_card_hours_per_day + o->batch_card_hours_per_day;
  if (price >= 0) {
    o->priced = true;
    o->own_per_month = D(o->owned_cards) * 24 * kDaysPerMonth * price;
    o->rent_per_month = used * kDaysPerMonth * price;
  }
  const auto purchase = own.purchase.find(o->gpu.id);
  if (own.given && purchase != own.purchase.end()) {
    // Purchase spread evenly over the years of use; power for busy card-hours at board power
    // plus the server's share, idle ones at kIdlePowerFraction, times the site's PUE.
    o->tco = true;
    o->purchase_per_month = D(o->owned_cards) * purchase->second / (own.years * 12);
    const double idle = std::max(0.0, D(o->owned_cards) * 24 - used);
    const double kwh_per_day = o->gpu.board_power_w / 1000 *
                               (used * (1 + kNodeOverheadFraction) + idle * kIdlePowerFraction);
    o->power_per_month = kwh_per_day * own.pue * own.power_per_kwh * kDaysPerMonth;
    o->own_per_month = o->purchase_per_month + o->power_per_month;
  }
}

}  // namespace

FleetResult PlanFleet(const FleetRequest& f, const std::vector<GpuSpec>& cards) {
  FleetResult out;
  for (const GpuSpec& card : cards) {
    FleetOption o;
    o.gpu = card;
    bool all = true;
    for (const FleetWorkload& w : f.workloads) {
      FleetShare s;
      std::string why;
      if (!Place(w, f.growth, card, &s, &why)) {
        out.rejected.push_back({card.id, w.name, why});
        all = false;
        break;
      }
      o.shares.push_back(s);
    }
    if (!all) continue;
    // The user's own price list first, else the catalog's USD price in their currency.
    const auto own_price = f.money.hourly.find(card.id);
    const double price = own_price != f.money.hourly.end()
                             ? own_price->second
                             : (card.usd_per_hour ? *card.usd_per_hour * f.money.per_usd : -1);
    Pools(&o, price, f.ownership);
    out.options.push_back(std::move(o));
  }
  std::stable_sort(out.options.begin(), out.options.end(),
                   [](const FleetOption& a, const FleetOption& b) {
                     // Costs of ownership first (comparable with each other), then rental
                     // prices, then unpriced cards by count.
                     if (a.tco != b.tco) return a.tco;
                     const bool ca = a.priced || a.tco;
                     const bool cb = b.priced || b.tco;
                     if (ca != cb) return ca;
                     if (ca && a.own_per_month != b.own_per_month) {
                       return a.own_per_month < b.own_per_month;
                     }
                     return a.owned_cards < b.owned_cards;
                   });
  if (!out.options.empty()) {
    const FleetOption& best = out.options.front();
    const double idle =
        best.owned_cards > 0
            ? 1 - (best.serving_card_hours_per_day + best.batch_card_hours_per_day) /
                      (D(best.owned_cards) * 24)
            : 0;
    out.advice.push_back(Note{"owned_idle",
                              {{"idle_fraction", idle}, {"cards", D(best.owned_cards)}},
                              "owned, the " + std::to_string(best.owned_cards) + " " + best.gpu.id +
                                  " cards stand idle " + Fmt("%.0f%%", idle * 100) +
                                  " of the time: owned cards are sized for the peak and their "
                                  "idle hours are paid for"});
    if (best.priced || best.tco) {
      // Both need a rental price for the renting side; ownership alone compares nothing.
      const std::string cur = " " + f.money.currency;
      const bool rent = best.priced && best.rent_per_month < best.own_per_month;
      if (best.priced) {
        out.advice.push_back(
            Note{rent ? "rent_follows_peak" : "owning_pays",
                 {{"rent_per_month", best.rent_per_month}, {"own_per_month", best.own_per_month}},
                 std::string(rent ? "renting" : "owning") + " is cheaper: renting capacity that " +
                     "follows the curve costs " + Fmt("%.0f", best.rent_per_month) + cur +
                     " a month, owning a pool sized for the peak " +
                     Fmt("%.0f", best.own_per_month) + cur +
                     (best.tco ? " (purchase over the years of use plus power)"
                               : " (at the same hourly price)")});
      }
    }
    if (f.growth != 1) {
      out.advice.push_back(
          Note{"growth_included",
               {{"growth", f.growth}},
               "sized for demand x" + Fmt("%.2g", f.growth) + " (the planning horizon's growth)"});
    }
  }
  return out;
}

}  // namespace gpuplan
