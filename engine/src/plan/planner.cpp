// SPDX-License-Identifier: MIT
// The search behind `gpuplan plan`. Memory is the hard filter (seed 000: memory first, count
// second, interconnect last); among what fits, the purpose picks the order (MISSION M13).
// Pruning is exact: a branch is skipped only when a bound shows nothing in it can fit or beat
// the best setup found so far (PlanPruning test compares it with the full search).
#include "plan/planner.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "core/units.h"
#include "physics/levers.h"
#include "physics/perf_model.h"

namespace gpuplan {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double D(int64_t v) { return static_cast<double>(v); }

bool Better(const std::vector<double>& a, const std::vector<double>& b) {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
}

std::string Objective(const Request& r) { return r.constraints.objective; }

double NodeWatts(const GpuSpec& g, int64_t gpus) {
  return g.board_power_w * (1 + kNodeOverheadFraction) * D(std::min(gpus, g.gpus_per_node));
}

// Why a card is excluded before any setup is tried, or "" when it is not.
std::string SiteProblem(const Request& r, const GpuSpec& g, std::string* code) {
  if (r.constraints.cooling == "air" && g.cooling == "liquid") {
    *code = "needs_liquid_cooling";
    return g.name + " needs liquid cooling; the site offers air only";
  }
  if (r.constraints.node_power_w > 0 && NodeWatts(g, 1) > r.constraints.node_power_w) {
    *code = "node_power";
    return "one " + g.name + " with its share of a server exceeds the node power limit";
  }
  return "";
}

// What a search over one card keeps: the best choice and, for the rejection message, the
// closest miss.
struct CardSearch {
  std::optional<PlanChoice> best;
  double closest_need = kInf;      ///< smallest per-GPU need with headroom among setups tried
  std::optional<Request> closest;  ///< the setup with that need, for the "almost fits" advice
  bool fit_any = false;            ///< some setup fits in memory (then a constraint rejected it)
  std::string last_constraint;
  std::string last_constraint_code;
  int64_t evaluated = 0;
};

void Track(CardSearch* cs, const Request& q, const FitCheck& f) {
  if (f.layout_ok && f.total_with_headroom_bytes < cs->closest_need) {
    cs->closest_need = f.total_with_headroom_bytes;
    cs->closest = q;
  }
}

// ---- training ---------------------------------------------------------------------------

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

// Micro-batch / accumulation pairs that keep the tokens of a step: the request's global batch
// when it gave one, else its micro_batch x grad_accum per data-parallel rank.
// Micro-batch / accumulation pairs that make up the global batch on dp ranks.
std::vector<std::pair<int64_t, int64_t>> BatchOptions(const Workload& w, int64_t dp) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t mb = 1; mb <= w.global_batch; mb *= 2) {
    if (w.global_batch % (mb * dp) == 0) out.emplace_back(mb, w.global_batch / (mb * dp));
  }
  return out;
}

// Ranking keys, lower first. Seed 000: count before interconnect; seed 003: training by time
// for the fewest cards, fine-tuning by fitting on the fewest cards.
std::vector<double> TrainingKey(const Request& r, int64_t n, const TrainingPerf& t, double cost) {
  const std::string o = Objective(r);
  if (o == "time") return {t.time_s, D(n)};
  if (o == "cost") return {cost, t.time_s};
  if (o == "power") return {D(n) * r.gpu.board_power_w, t.time_s};
  return {D(n), t.time_s};  // default and count
}

double CostOf(const Request& q, const TrainingPerf& t) {
  const double price =
      q.usd_per_gpu_hour >= 0 ? q.usd_per_gpu_hour : q.gpu.usd_per_hour.value_or(-1);
  return price < 0 ? kInf : price * D(q.parallel.gpus) * t.time_s / 3600;
}

CardSearch SearchTraining(const Request& request, const GpuSpec& g, const ParamCounts& c,
                          const PlanOptions& opt) {
  CardSearch cs;
  // The global batch stays fixed while the count varies (the contract): the request's, else
  // its micro_batch x grad_accum x data-parallel ranks.
  Request base = request;
  if (base.workload.global_batch == 0) {
    base.workload.global_batch = base.workload.micro_batch * base.workload.grad_accum *
                                 std::max<int64_t>(1, request.parallel.Dp());
  }
  const int64_t max_gpus = base.constraints.max_gpus > 0 ? base.constraints.max_gpus : 64;
  std::vector<int64_t> counts = PlanCounts(max_gpus, g.gpus_per_node);
  const std::string o = Objective(base);
  // Count-first keys are met first by the smallest count that works: search upwards and stop.
  // Time favours large counts: search downwards so the bound below prunes early (cost too,
  // whose key is compared before each memory check).
  const bool count_first = o != "time" && o != "cost";
  if (!count_first) std::reverse(counts.begin(), counts.end());
  std::set<Recompute> recomputes = {base.techniques.recompute, Recompute::kFull};
  Request q = base;  // the candidate, rewritten in place for every setup
  q.gpu = g;
  q.parallel = Parallel{};
  const double peak_eff = [&] {
    const TrainingPerf one = EstimateTraining(q, c);
    return one.peak_flops * one.efficiency;
  }();
  for (int64_t n : counts) {
    if (count_first && cs.best) break;
    const StackLayouts& layouts = StackOf(base).layouts;
    for (int64_t tp = 1; tp <= std::min<int64_t>(8, std::min(n, g.gpus_per_node)); tp *= 2) {
      for (int64_t pp = 1; tp * pp <= n && pp <= base.model.layers; pp *= 2) {
        if (n % (tp * pp) != 0) continue;
        if (!layouts.model_parallel && tp * pp > 1) continue;  // data parallel only
        const int64_t dp = n / (tp * pp);
        Parallel shape;
        shape.gpus = n;
        shape.tp = tp;
        shape.pp = pp;
        if (!CheckLayout(base.model, shape).empty()) continue;
        const auto batches = BatchOptions(base.workload, dp);
        if (batches.empty()) continue;
        std::vector<int64_t> zeros =
            dp > 1 ? std::vector<int64_t>{0, 1, 2, 3} : std::vector<int64_t>{0};
        zeros.erase(std::remove_if(zeros.begin(), zeros.end(),
                                   [&](int64_t z) { return z > layouts.max_zero; }),
                    zeros.end());
        if (opt.prune) {
          // Memory never shrinks as the micro-batch grows (activations, logits, and in-flight
          // micro-batches x micro-batch = min(pp x mb, batch / dp)): if no ZeRO stage and
          // recomputation fits the smallest micro-batch, nothing of this shape does.
          bool any = false;
          const auto [mb, ga] = *std::min_element(batches.begin(), batches.end());
          for (int64_t z : zeros) {
            for (Recompute rc : recomputes) {
              ApplySetup(&q, n, {tp, pp, z, mb, ga, rc});
              const FitCheck f = CheckFit(q, c);
              ++cs.evaluated;
              Track(&cs, q, f);
              any = any || f.fits;
            }
          }
          if (!any) continue;
          // No setup of this shape can run faster than its compute and pipeline bubble.
          if (cs.best && !count_first && o == "time") {
            const TrainingFlops f = TrainingFlopsPerToken(q, c);
            const double lower = base.workload.tokens * f.model_per_token / (D(n) * peak_eff);
            if (lower > cs.best->key[0]) continue;  // equal could still win on count
          }
        }
        for (int64_t z : zeros) {
          for (Recompute rc : recomputes) {
            for (const auto& [mb, ga] : batches) {
              ApplySetup(&q, n, {tp, pp, z, mb, ga, rc});
              const TrainingPerf t = EstimateTraining(q, c);
              const std::vector<double> key = TrainingKey(q, n, t, CostOf(q, t));
              if (opt.prune && cs.best && !Better(key, cs.best->key)) continue;
              const FitCheck f = CheckFit(q, c);
              ++cs.evaluated;
              Track(&cs, q, f);
              if (!f.fits) continue;
              cs.fit_any = true;
              if (base.constraints.deadline_s > 0 && t.time_s > base.constraints.deadline_s) {
                cs.last_constraint_code = "misses_deadline";
                cs.last_constraint = "no setup that fits finishes within the deadline";
                continue;
              }
              if (base.constraints.budget_usd > 0 && CostOf(q, t) > base.constraints.budget_usd) {
                cs.last_constraint_code = "over_budget";
                cs.last_constraint = std::isinf(CostOf(q, t))
                                         ? "no price to check the budget against"
                                         : "every setup that fits costs more than the budget";
                continue;
              }
              if (!cs.best || Better(key, cs.best->key)) {
                PlanChoice choice;
                choice.request = q;
                choice.count = n;
                choice.key = key;
                cs.best = std::move(choice);
              }
            }
          }
        }
      }
    }
  }
  return cs;
}

// ---- serving ----------------------------------------------------------------------------

CardSearch SearchServing(const Request& base, const GpuSpec& g, const ParamCounts& c,
                         const PlanOptions& opt) {
  (void)opt;
  CardSearch cs;
  const int64_t max_gpus = base.constraints.max_gpus > 0 ? base.constraints.max_gpus : 64;
  const std::string o = Objective(base);
  // Weight formats: the request's, and with constraints.quantize the lighter ones a serving
  // engine runs (fp8 where the card has the units, int8, AWQ int4).
  std::vector<WeightFormat> formats = {base.precision.weights};
  if (base.constraints.quantize) {
    for (WeightFormat f : {WeightFormat::kFp8, WeightFormat::kInt8, WeightFormat::kAwqInt4}) {
      if (f == WeightFormat::kFp8 && g.fp8_flops <= 0) continue;
      if (std::find(formats.begin(), formats.end(), f) == formats.end()) formats.push_back(f);
    }
  }
  for (int64_t tp = 1; tp <= std::min<int64_t>(8, std::min(max_gpus, g.gpus_per_node)); tp *= 2) {
    for (WeightFormat format : formats) {
      Request q = base;
      q.gpu = g;
      q.parallel = Parallel{};
      q.parallel.gpus = tp;
      q.parallel.tp = tp;
      if (StackOf(base).engine.layer_split) std::swap(q.parallel.tp, q.parallel.pp);
      q.precision.weights = format;
      if (format == WeightFormat::kAwqInt4) q.precision.quant = {128, true};
      if (!CheckLayout(base.model, q.parallel).empty()) continue;
      Request one = q;
      one.workload.SetConcurrency(1);
      const FitCheck f = CheckFit(one, c);
      ++cs.evaluated;
      Track(&cs, one, f);
      if (!f.fits) continue;
      cs.fit_any = true;
      const Estimate e = EstimateSetup(q, /*with_levers=*/false);
      cs.evaluated += 20;  // the concurrency search
      const int64_t per_replica = e.serving.max_concurrency;
      if (per_replica == 0) {
        cs.last_constraint_code = "misses_latency_targets";
        cs.last_constraint = "not even one sequence meets the TTFT/TPOT targets";
        continue;
      }
      // Online: enough replicas for the requested concurrency. Offline: one replica at the
      // largest batch that fits (no latency target), which maximises throughput.
      const bool offline = base.workload.mode == InferenceMode::kOffline;
      const int64_t wanted = offline ? per_replica : base.workload.concurrency;
      const int64_t replicas = (wanted + per_replica - 1) / per_replica;
      const int64_t n = replicas * tp;
      if (n > max_gpus) {
        cs.last_constraint_code = "exceeds_max_gpus";
        cs.last_constraint = "serving the requested concurrency needs more than max_gpus cards";
        continue;
      }
      Request sized = q;
      sized.workload.SetConcurrency((wanted + replicas - 1) / replicas);  // per replica
      const Estimate at = EstimateSetup(sized, false);
      const double per_card = at.serving.at_request.decode_tokens_per_s_total / D(tp);
      const double tpot = at.serving.at_request.tpot_s;
      const double price =
          q.usd_per_gpu_hour >= 0 ? q.usd_per_gpu_hour : g.usd_per_hour.value_or(-1);
      const double cost_per_mtok =
          price < 0 || per_card <= 0 ? kInf : price / (per_card * 3600) * 1e6;
      std::vector<double> key;
      if (o == "time") {
        key = {tpot, D(n)};
      } else if (o == "cost") {
        key = {cost_per_mtok, D(n)};
      } else if (o == "count") {
        key = {D(n), -per_card};
      } else if (o == "power") {
        key = {D(n) * g.board_power_w, -per_card};
      } else {
        key = {-per_card, D(n)};  // seed 003: serving by throughput per card at the target
      }
      if (!cs.best || Better(key, cs.best->key)) {
        PlanChoice choice;
        choice.request = sized;
        choice.count = n;
        choice.replicas = replicas;
        choice.key = key;
        cs.best = std::move(choice);
      }
    }
  }
  return cs;
}

std::string Gib(double bytes) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / kGiB);
  return buf;
}

std::string RankReason(const Request& r, const PlanChoice& c) {
  const std::string o = Objective(r);
  const bool serving = !r.workload.IsTraining();
  if (o == "time") return serving ? "lowest time per output token" : "shortest time to train";
  if (o == "cost") return serving ? "lowest cost per million tokens" : "lowest cost for the run";
  if (o == "power") return "lowest board power, then speed";
  if (o == "count") return "fewest cards, then speed";
  if (serving) return "highest throughput per card at the latency targets";
  (void)c;
  return r.workload.IsPeft() ? "fits on the fewest cards, then trains fastest"
                             : "fewest cards, then the interconnect-aware training time";
}

std::string Days(double seconds) {
  char buf[48];
  if (seconds >= 2 * 86400) {
    std::snprintf(buf, sizeof buf, "%.1f days", seconds / 86400);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f hours", seconds / 3600);
  }
  return buf;
}

// MISSION M14: the seeds' rules, each stated only when this plan's numbers show it.
void Advise(const Request& r, const std::map<std::string, CardSearch>& searches, PlanResult* out) {
  auto& advice = out->advice;
  if (!out->recommendations.empty()) {
    const PlanChoice& top = out->recommendations.front();
    const Request& q = top.request;
    const GpuSpec& g = q.gpu;
    const std::string o = Objective(r);
    if (r.workload.IsTraining() && (o == "default" || o == "count") &&
        r.constraints.deadline_s <= 0) {
      const TrainingPerf t = EstimateTraining(q, CountParams(q.model));
      advice.push_back(
          Note{"fewest_cards_without_deadline",
               {{"count", D(top.count)}, {"time_s", t.time_s}},
               "with no deadline the fewest cards are chosen: " + std::to_string(top.count) +
                   " x " + g.name + " take " + Days(t.time_s) +
                   "; give constraints.deadline_s to trade cards for time",
               "/constraints/deadline_s"});
    }
    if (top.count > 1 && top.count <= g.gpus_per_node) {
      advice.push_back(Note{"keep_inside_one_node",
                            {{"count", D(top.count)}, {"gpus_per_node", D(g.gpus_per_node)}},
                            "the job fits inside one " + g.name + " server (" +
                                std::to_string(top.count) + " of " +
                                std::to_string(g.gpus_per_node) +
                                " slots): keep it there, crossing nodes costs more than adding "
                                "cards inside one"});
    }
    for (const PlanChoice& other : out->recommendations) {
      if (other.count == 1 && top.count > 1) {
        advice.push_back(Note{"one_big_card",
                              {{"top_count", D(top.count)}},
                              "one " + other.request.gpu.name + " holds the whole job where " +
                                  g.name + " needs " + std::to_string(top.count) +
                                  ": one big card avoids model-parallel losses"});
        break;
      }
    }
    if (q.parallel.tp > 1) {
      const bool pcie = g.intra_node_kind.rfind("pcie", 0) == 0;
      double scaling = 1;
      if (r.workload.IsTraining())
        scaling = EstimateTraining(q, CountParams(q.model)).scaling_efficiency;
      if (q.parallel.tp > 4 || pcie) {
        advice.push_back(Note{
            pcie ? "model_parallel_over_pcie" : "model_parallel_beyond_four",
            {{"tp", D(q.parallel.tp)}, {"scaling_efficiency", scaling}},
            std::to_string(q.parallel.tp) + "-way tensor parallel" + (pcie ? " over PCIe" : "") +
                " loses speed to its per-layer all-reduces" +
                (r.workload.IsTraining()
                     ? " (scaling efficiency " + std::to_string(std::lround(scaling * 100)) + "%)"
                     : std::string()) +
                ": a card with more memory needs less of it"});
      }
    }
  }
  // Almost fits: the single change that makes a rejected card's closest setup fit.
  for (const PlanRejection& rej : out->rejected) {
    if (rej.code != "exceeds_memory") continue;
    const auto it = searches.find(rej.gpu_id);
    if (it == searches.end() || !it->second.closest) continue;
    const Request& q = *it->second.closest;
    if (it->second.closest_need > 1.3 * q.gpu.memory_bytes) continue;
    for (const Lever& l : MemoryLevers(q, it->second.closest_need / (1 + q.headroom))) {
      if (!l.fits) continue;
      advice.push_back(Note{"lever_makes_it_fit",
                            {{"count", D(q.parallel.gpus)}, {"saved_bytes", l.saved_bytes}},
                            q.gpu.name + " almost fits on " + std::to_string(q.parallel.gpus) +
                                " cards: setting " + l.path + " to " + l.value +
                                " makes it fit, at a cost: " + l.cost,
                            l.path});
      break;
    }
  }
}

}  // namespace

std::vector<int64_t> PlanCounts(int64_t max_gpus, int64_t gpus_per_node) {
  // Powers of two, every whole number of nodes up to eight, then 2^j and 3 x 2^j nodes: the
  // sizes clusters are bought and rented in, without a count list that grows with max_gpus.
  std::set<int64_t> counts;
  for (int64_t n = 1; n <= max_gpus; n *= 2) counts.insert(n);
  for (int64_t k = 1; k <= 8 && k * gpus_per_node <= max_gpus; ++k) {
    counts.insert(k * gpus_per_node);
  }
  for (int64_t k = 16; k * gpus_per_node <= max_gpus; k *= 2) {
    counts.insert(k * gpus_per_node);
    if (3 * k / 2 * gpus_per_node <= max_gpus) counts.insert(3 * k / 2 * gpus_per_node);
  }
  return {counts.begin(), counts.end()};
}

PlanResult Plan(const Request& base, const std::vector<GpuSpec>& cards,
                const PlanOptions& options) {
  PlanResult out;
  const ParamCounts c = CountParams(base.model);
  std::map<std::string, CardSearch> searches;
  for (const GpuSpec& card : cards) {
    std::string code;
    const std::string site = SiteProblem(base, card, &code);
    if (!site.empty()) {
      out.rejected.push_back({card.id, code, site});
      continue;
    }
    // Under a node power limit, servers hold only the cards the limit feeds: partly filled
    // nodes, and everything beyond them crosses the network.
    GpuSpec g = card;
    if (base.constraints.node_power_w > 0) {
      const auto fed = static_cast<int64_t>(base.constraints.node_power_w /
                                            (g.board_power_w * (1 + kNodeOverheadFraction)));
      g.gpus_per_node = std::max<int64_t>(1, std::min(g.gpus_per_node, fed));
    }
    CardSearch cs = base.workload.IsTraining() ? SearchTraining(base, g, c, options)
                                               : SearchServing(base, g, c, options);
    out.setups_evaluated += cs.evaluated;
    searches[g.id] = cs;
    if (cs.best) {
      cs.best->rank_reason = RankReason(base, *cs.best);
      out.recommendations.push_back(std::move(*cs.best));
      continue;
    }
    if (cs.fit_any && !cs.last_constraint.empty()) {
      out.rejected.push_back({g.id, cs.last_constraint_code, cs.last_constraint});
    } else {
      const int64_t max_gpus = base.constraints.max_gpus > 0 ? base.constraints.max_gpus : 64;
      out.rejected.push_back(
          {g.id, "exceeds_memory",
           "does not fit on up to " + std::to_string(max_gpus) +
               " cards: the closest setup needs " +
               (std::isinf(cs.closest_need) ? std::string("more than the card holds")
                                            : Gib(cs.closest_need)) +
               " per GPU with headroom, the card has " + Gib(g.memory_bytes)});
    }
  }
  std::stable_sort(out.recommendations.begin(), out.recommendations.end(),
                   [](const PlanChoice& a, const PlanChoice& b) {
                     if (Better(a.key, b.key)) return true;
                     if (Better(b.key, a.key)) return false;
                     return a.request.gpu.id < b.request.gpu.id;  // deterministic tie-break
                   });
  Advise(base, searches, &out);
  return out;
}

}  // namespace gpuplan
