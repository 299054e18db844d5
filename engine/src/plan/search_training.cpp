// SPDX-License-Identifier: MIT
// The training search of one card: counts x tensor x pipeline x ZeRO x recomputation x
// micro-batch, the global batch held fixed. Memory is the hard filter (seed 000); the ranking
// picks among what fits. Pruning is exact: a branch is skipped only when a bound shows nothing
// in it can fit or beat the best found so far (PlanPruning compares it with the full search).
#include <cmath>
#include <set>

#include "plan/search.h"

namespace gpuplan::plan_search {
namespace {

struct TrainingSetup {
  int64_t tp, pp, zero, micro_batch, grad_accum;
  Recompute recompute;
};

// Sets a candidate's layout on a request that already holds the card: candidates are tried by
// the thousand, so the request (strings and all) is reused rather than copied.
void ApplySetup(Request* r, int64_t n, const TrainingSetup& s) {
  Request& q = *r;
  q.parallel = Parallel{};
  q.parallel.gpus = n;
  q.parallel.tp = s.tp;
  q.parallel.pp = s.pp;
  q.parallel.zero = static_cast<int>(s.zero);
  q.parallel.sequence_parallel = s.tp > 1;
  q.workload.micro_batch = s.micro_batch;
  q.workload.grad_accum = s.grad_accum;
  q.techniques.recompute = s.recompute;
  // Offloading is left to `estimate`: the time model does not price its PCIe traffic yet.
  q.techniques.offload_optimizer = q.techniques.offload_params = false;
  q.techniques.offload_activations = false;
}

// Micro-batch / accumulation pairs that make up the global batch on dp ranks, smallest
// micro-batch first. A batch the request gave, and a fine-tuning recipe's (tuned with its
// learning rate), are kept exactly: a count they do not divide is not tried. Pretraining's
// default is a token budget that published runs vary (Llama 3 went from 4M to 16M tokens), so
// it rounds to the nearest whole number of sequences per rank: 24 nodes of 8 run 960 or 1,152
// sequences rather than being skipped.
bool Flexible(const Workload& w) { return !w.batch_given && w.kind == WorkloadKind::kPretrain; }

std::vector<std::pair<int64_t, int64_t>> BatchOptions(const Workload& w, int64_t dp) {
  std::vector<std::pair<int64_t, int64_t>> out;
  const int64_t per_rank = !Flexible(w)
                               ? (w.global_batch % dp == 0 ? w.global_batch / dp : 0)
                               : static_cast<int64_t>(std::llround(D(w.global_batch) / D(dp)));
  for (int64_t mb = 1; mb <= per_rank; mb *= 2) {
    if (per_rank % mb == 0) out.emplace_back(mb, per_rank / mb);
  }
  return out;
}

double CostOf(const Request& q, const TrainingPerf& t) {
  const double price = PricePerGpuHour(q);
  return price < 0 ? kInf : price * D(q.parallel.gpus) * t.time_s / 3600;
}

// Ranking keys, lower first.
std::vector<double> Key(Ranking k, const Request& q, int64_t n, const TrainingPerf& t,
                        double cost) {
  switch (k) {
    case Ranking::kFewestMeetingDeadline:
      return {D(n), cost, t.time_s};
    case Ranking::kFastestAboveKnee:
      // Below the knee, more cards are not worth buying: such setups rank after every one
      // above it, and among themselves by count.
      if (t.scaling_efficiency < kScalingKnee) return {1, D(n), t.time_s};
      return {0, t.time_s, D(n)};
    case Ranking::kFewestThenCheapest:
    case Ranking::kCheapestPerToken:
      // MISSION M13: fine-tuning fits on the fewest cards; among those the cheapest run, and
      // unpriced setups after every priced one (issue #15).
      if (std::isinf(cost)) return {D(n), 1, t.time_s};
      return {D(n), 0, cost, t.time_s};
    case Ranking::kTime:
      return {t.time_s, D(n)};
    case Ranking::kCost:
      return {cost, t.time_s};
    case Ranking::kPower:
      return {D(n) * q.gpu.board_power_w, t.time_s};
    case Ranking::kCount:
      break;
  }
  return {D(n), t.time_s};
}

// Whether no setup whose run takes at least `lower` seconds can beat `best`.
bool TimeBoundBeaten(Ranking k, const std::vector<double>& best, double lower) {
  if (k == Ranking::kTime) return lower > best[0];  // equal could still win on count
  if (k == Ranking::kFastestAboveKnee) return best[0] == 0 && lower > best[1];
  return false;
}

// Keys led by the count are met first by the smallest count that works: search upwards and
// stop there.
bool CountFirst(Ranking k) {
  return k == Ranking::kFewestMeetingDeadline || k == Ranking::kFewestThenCheapest ||
         k == Ranking::kCount || k == Ranking::kPower;
}

struct Search {
  const Request& base;
  const ParamCounts& c;
  const PlanOptions& opt;
  Ranking ranking;
  CardSearch* cs;
  Request q;  // the candidate, rewritten in place for every setup
  double peak_eff = 0;
  double work_flops = 0;  ///< the run's model FLOPs: tokens x per token, whatever the layout

  void Consider(int64_t n, const TrainingSetup& s, bool* stop_micro_batches);
  void Shape(int64_t n, int64_t tp, int64_t pp, const std::set<Recompute>& recomputes);
};

void Search::Consider(int64_t n, const TrainingSetup& s, bool* stop_micro_batches) {
  ApplySetup(&q, n, s);
  const TrainingPerf t = EstimateTraining(q, c);
  const double cost = CostOf(q, t);
  const std::vector<double> key = Key(ranking, q, n, t, cost);
  if (opt.prune && cs->best && !Better(key, cs->best->key)) return;
  const FitCheck f = CheckFit(q, c);
  ++cs->evaluated;
  Track(cs, q, f, n);
  if (!f.fits) {
    // Memory never shrinks as the micro-batch grows (activations, logits, in-flight
    // micro-batches): the larger ones of this setup cannot fit either.
    *stop_micro_batches = opt.prune && f.layout_ok;
    return;
  }
  cs->fit_any = true;
  const Constraints& k = base.constraints;
  // A deadline is met by the wall-clock time, interruptions included.
  const double wall = k.deadline_s > 0 ? WallClockSeconds(q, c, t) : t.time_s;
  if (wall < cs->fastest_fit_s) {
    cs->fastest_fit_s = wall;
    cs->fastest_fit_count = n;
  }
  if (k.deadline_s > 0 && wall > k.deadline_s) return;
  cs->met_deadline = true;
  cs->cheapest_in_time_usd = std::min(cs->cheapest_in_time_usd, cost);
  if (k.budget_usd > 0 && cost > k.budget_usd) return;
  if (!cs->best || Better(key, cs->best->key)) {
    PlanChoice choice;
    choice.request = q;
    choice.count = n;
    choice.key = key;
    choice.figures.time_s = t.time_s;
    choice.figures.usd_total = std::isinf(cost) ? -1 : cost;
    choice.figures.scaling_efficiency = t.scaling_efficiency;
    cs->best = std::move(choice);
  }
}

void Search::Shape(int64_t n, int64_t tp, int64_t pp, const std::set<Recompute>& recomputes) {
  const StackLayouts& layouts = StackOf(base).layouts;
  const int64_t dp = n / (tp * pp);
  const auto batches = BatchOptions(base.workload, dp);
  if (batches.empty()) {
    // Only a batch smaller than the ranks limits the count; one it does not divide does not.
    const Workload& w = base.workload;
    if (Flexible(w) ? 2 * w.global_batch < dp : w.global_batch < dp) {
      cs->batch_blocked_count = std::max(cs->batch_blocked_count, n);
    }
    return;
  }
  std::vector<int64_t> zeros = dp > 1 ? std::vector<int64_t>{0, 1, 2, 3} : std::vector<int64_t>{0};
  zeros.erase(
      std::remove_if(zeros.begin(), zeros.end(), [&](int64_t z) { return z > layouts.max_zero; }),
      zeros.end());
  if (opt.prune) {
    // No setup of this shape can run faster than its compute alone. Checked before memory:
    // a bound that prunes needs a best found, so the card has an answer and what the memory
    // checks would record (the closest miss, for a rejection) is not read.
    if (cs->best && TimeBoundBeaten(ranking, cs->best->key, work_flops / (D(n) * peak_eff))) return;
    // If no ZeRO stage and recomputation fits the smallest micro-batch, nothing of this
    // shape does. The most sharded stage with full recomputation is tried first, and the
    // first fit ends the check; a shape where none fits tries them all, so each miss is
    // recorded as before.
    bool any = false;
    const auto [mb, ga] = batches.front();
    for (auto z = zeros.rbegin(); z != zeros.rend() && !any; ++z) {
      for (auto rc = recomputes.rbegin(); rc != recomputes.rend() && !any; ++rc) {
        ApplySetup(&q, n, {tp, pp, *z, mb, ga, *rc});
        const FitCheck f = CheckFit(q, c);
        ++cs->evaluated;
        Track(cs, q, f, n);
        any = f.fits;
      }
    }
    if (!any) return;
  }
  for (int64_t z : zeros) {
    for (Recompute rc : recomputes) {
      bool stop = false;
      for (const auto& [mb, ga] : batches) {
        Consider(n, {tp, pp, z, mb, ga, rc}, &stop);
        if (stop) break;
      }
    }
  }
}

}  // namespace

CardSearch SearchTraining(const Request& request, const GpuSpec& g, const ParamCounts& c,
                          const PlanOptions& opt, Ranking ranking) {
  CardSearch cs;
  Search s{request, c, opt, ranking, &cs, request};
  s.q.gpu = g;
  s.q.parallel = Parallel{};
  {
    const TrainingPerf one = EstimateTraining(s.q, c);
    s.peak_eff = one.peak_flops * one.efficiency;
    // Model FLOPs per token leave recomputation and the layout out: one figure for the card.
    s.work_flops = request.workload.tokens * TrainingFlopsPerToken(s.q, c).model_per_token;
    cs.one_gpu_bound_s = s.peak_eff > 0 ? s.work_flops / s.peak_eff : 0;
  }
  std::vector<int64_t> counts = PlanCounts(MaxGpus(request), g.gpus_per_node);
  cs.largest_count = counts.back();
  const bool count_first = CountFirst(ranking);
  // Time favours large counts: search downwards so the time bound prunes early.
  if (ranking == Ranking::kTime || ranking == Ranking::kFastestAboveKnee) {
    std::reverse(counts.begin(), counts.end());
  }
  const std::set<Recompute> recomputes = {request.techniques.recompute, Recompute::kFull};
  const StackLayouts& layouts = StackOf(request).layouts;
  for (int64_t n : counts) {
    if (count_first && cs.best) break;
    for (int64_t tp = 1; tp <= std::min<int64_t>(8, std::min(n, g.gpus_per_node)); tp *= 2) {
      for (int64_t pp = 1; tp * pp <= n && pp <= request.model.layers; pp *= 2) {
        if (n % (tp * pp) != 0) continue;
        if (!layouts.model_parallel && tp * pp > 1) continue;  // data parallel only
        Parallel shape;
        shape.gpus = n;
        shape.tp = tp;
        shape.pp = pp;
        if (!CheckLayout(request.model, shape).empty()) continue;
        s.Shape(n, tp, pp, recomputes);
      }
    }
  }
  return cs;
}

}  // namespace gpuplan::plan_search
