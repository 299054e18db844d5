// SPDX-License-Identifier: MIT
// The serving search of one card: tensor-parallel width x weight format, then as many
// replicas as the requested concurrency needs (online) or one replica at its largest batch
// (offline). Serving is bound by bandwidth and memory at the latency target.
#include <cmath>
#include <vector>

#include "plan/search.h"

namespace gpuplan::plan_search {
namespace {

std::vector<double> Key(Ranking k, const GpuSpec& g, int64_t n, double per_card, double tpot,
                        double usd_per_mtok) {
  switch (k) {
    case Ranking::kTime:
      return {tpot, D(n)};
    case Ranking::kCost:
      return {usd_per_mtok, D(n)};
    case Ranking::kCount:
      return {D(n), -per_card};
    case Ranking::kPower:
      return {D(n) * g.board_power_w, -per_card};
    default:
      break;
  }
  // Cost per million output tokens at the targets, then fewer cards; unpriced cards after
  // every priced one, by count then throughput per card.
  if (std::isinf(usd_per_mtok)) return {1, D(n), -per_card};
  return {0, usd_per_mtok, D(n)};
}

// Weight formats: the request's, and with constraints.quantize the lighter ones a serving
// engine runs (fp8 where the card has the units, int8, AWQ int4).
std::vector<WeightFormat> Formats(const Question& base, const GpuSpec& g) {
  std::vector<WeightFormat> formats = {base.setup.precision.weights};
  if (base.constraints.quantize) {
    for (WeightFormat f : {WeightFormat::kFp8, WeightFormat::kInt8, WeightFormat::kAwqInt4}) {
      if (f == WeightFormat::kFp8 && g.fp8_flops <= 0) continue;
      if (std::find(formats.begin(), formats.end(), f) == formats.end()) formats.push_back(f);
    }
  }
  return formats;
}

// A replica's layouts: tensor parallel within a node (an engine that splits by layers: that
// many pipeline stages), and for a MoE model on an engine that spreads experts, data-parallel
// attention with the experts over 2 to 32 cards (DeepSeek-V3's own deployment spans nodes).
std::vector<Parallel> Layouts(const Question& base, const GpuSpec& g, int64_t max_gpus,
                              bool host_layers) {
  std::vector<Parallel> out;
  const ServingPolicy& engine = base.setup.stack->engine;
  for (int64_t tp = 1; tp <= std::min<int64_t>(8, std::min(max_gpus, g.gpus_per_node)); tp *= 2) {
    Parallel p;
    p.gpus = tp;
    p.tp = tp;
    if (engine.layer_split) std::swap(p.tp, p.pp);
    out.push_back(p);
  }
  if (base.setup.model.IsMoe() && engine.expert_parallel && !host_layers) {
    for (int64_t n = 2; n <= std::min<int64_t>(32, max_gpus); n *= 2) {
      if (n > 4 * g.gpus_per_node || base.setup.model.moe.experts % n != 0) continue;
      Parallel p;
      p.gpus = n;
      p.ep = n;
      out.push_back(p);
    }
  }
  return out;
}

// The most repeating layers a layout keeps on its cards when the whole model does not fit
// (llama.cpp's --n-gpu-layers; the rest run on the CPU from host memory), at one sequence;
// fit only grows with layers on the cards, so bisection finds it. 0: not even one layer.
int64_t MostGpuLayers(Setup* q, const ParamCounts& c, int64_t* evaluated) {
  int64_t lo = 0;
  int64_t hi = q->model.layers - 1;
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    q->serving.gpu_layers = mid;
    ++*evaluated;
    if (CheckFit(*q, c).fits) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  q->serving.gpu_layers = -1;
  return lo;
}

// The fewest layers whose routed experts, kept on the CPU (llama.cpp's --n-cpu-moe), let the
// rest fit on the layout's cards: attention and the shared weights stay on the GPU and the CPU
// reads only the experts a token routes to, far faster than whole layers there. 0: even every
// expert on the CPU does not fit.
int64_t FewestCpuMoeLayers(Setup* q, const ParamCounts& c, int64_t* evaluated) {
  int64_t lo = 1;
  int64_t hi = q->model.layers + 1;  // one past: none fits
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    q->serving.cpu_moe_layers = mid;
    ++*evaluated;
    if (CheckFit(*q, c).fits) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  q->serving.cpu_moe_layers = -1;
  return lo > q->model.layers ? 0 : lo;
}

}  // namespace

CardSearch SearchServing(const Question& base, const GpuSpec& g, const ParamCounts& c,
                         Ranking ranking) {
  CardSearch cs = SearchServingLayouts(base, g, c, ranking, /*host_layers=*/false);
  // Nothing fits on the card's layouts: an engine that runs layers on the CPU keeps as many on
  // the cards as fit (the answer llama.cpp users expect for a model larger than their card).
  if (!cs.fit_any && base.setup.stack->engine.host_layers && base.setup.serving.gpu_layers < 0 &&
      base.setup.serving.cpu_moe_layers < 0 && base.setup.model.layers > 1) {
    CardSearch partial = SearchServingLayouts(base, g, c, ranking, /*host_layers=*/true);
    partial.evaluated += cs.evaluated;
    if (partial.fit_any) return partial;
    cs.evaluated = partial.evaluated;
  }
  return cs;
}

CardSearch SearchServingLayouts(const Question& base, const GpuSpec& g, const ParamCounts& c,
                                Ranking ranking, bool host_layers) {
  CardSearch cs;
  const int64_t max_gpus = MaxGpus(base);
  cs.largest_count = max_gpus;
  const bool offline = base.setup.workload.mode == InferenceMode::kOffline;
  // One setup for the card, rewritten for every layout and format (a copy, strings and all,
  // costs about what a memory check does).
  Setup q = base.setup;
  q.gpu = g;
  for (const Parallel& layout : Layouts(base, g, max_gpus, host_layers)) {
    const int64_t tp = layout.gpus;  // cards in one replica
    for (WeightFormat format : Formats(base, g)) {
      q.parallel = layout;
      q.precision.weights = format;
      q.precision.quant =
          format == WeightFormat::kAwqInt4 ? QuantOptions{128, true} : base.setup.precision.quant;
      q.workload = base.setup.workload;
      if (!CheckLayout(base.setup.model, q.parallel).empty()) continue;
      q.workload.SetConcurrency(1);
      q.serving.gpu_layers = base.setup.serving.gpu_layers;
      q.serving.cpu_moe_layers = base.setup.serving.cpu_moe_layers;
      if (host_layers) {
        // A MoE model keeps its experts on the CPU first, whole layers only if that fails.
        const int64_t experts = q.model.IsMoe() && base.setup.serving.cpu_moe_layers < 0
                                    ? FewestCpuMoeLayers(&q, c, &cs.evaluated)
                                    : 0;
        if (experts > 0) {
          q.serving.cpu_moe_layers = experts;
        } else {
          const int64_t most = MostGpuLayers(&q, c, &cs.evaluated);
          if (most == 0) continue;
          q.serving.gpu_layers = most;
        }
      }
      const FitCheck f = CheckFit(q, c);
      ++cs.evaluated;
      Track(&cs, q, f);
      q.workload = base.setup.workload;
      if (!f.fits) continue;
      cs.fit_any = true;
      const Estimate e = EstimateSetup(q, /*with_levers=*/false, Description::kFigures);
      cs.evaluated += 20;  // the concurrency search
      const int64_t per_replica = e.serving.max_concurrency;
      if (per_replica == 0) {
        // Why not even one sequence: e is at the requested concurrency, where that many may
        // not fit (its decode figures are then zero, a TPOT of 0 ms the reason once held
        // against the target), so one sequence is estimated on its own.
        q.workload.SetConcurrency(1);
        const Estimate one = EstimateSetup(q, /*with_levers=*/false, Description::kFigures);
        q.workload = base.setup.workload;
        if (!one.infeasible.empty()) {
          // The engine as set cannot run it at all (llama.cpp's context, a pool, the longest
          // request it takes): that is the reason, not the latency.
          const Note& why = one.infeasible[0];
          cs.serving_code = why.code;
          cs.serving_params = why.params;
          cs.serving_params["tp"] = D(tp);
          cs.serving_reason =
              Say("not even one sequence runs on %lld card%s: %s", static_cast<long long>(tp),
                  tp > 1 ? "s" : "", why.message.c_str());
          cs.serving_path = why.path;
          continue;
        }
        const InferencePerf& p = one.serving.at_request;
        cs.serving_code = "misses_latency_targets";
        cs.serving_params = {
            {"tp", D(tp)}, {"tpot_ms", p.tpot_s * 1e3}, {"ttft_ms", p.ttft_s * 1e3}};
        cs.serving_reason.clear();
        continue;
      }
      // Online: enough replicas for the requested concurrency. Offline: one replica at the
      // largest batch that fits (no latency target), which maximises throughput.
      const int64_t wanted = offline ? per_replica : base.setup.workload.concurrency;
      const int64_t replicas = (wanted + per_replica - 1) / per_replica;
      const int64_t n = replicas * tp;
      if (n > max_gpus) {
        cs.serving_code = "exceeds_max_gpus";
        cs.serving_reason.clear();
        cs.serving_params = {{"count", D(n)},
                             {"replicas", D(replicas)},
                             {"per_replica", D(per_replica)},
                             {"max_gpus", D(max_gpus)}};
        continue;
      }
      q.workload.SetConcurrency((wanted + replicas - 1) / replicas);  // per replica
      const Estimate at = EstimateSetup(q, false, Description::kFigures);
      // Online, the requested users consume tokens at the pace they are served, and no faster
      // than the TPOT target asks for: a card that decodes faster than that serves the same
      // demand, so what a deployment costs per token it delivers is its price per hour.
      const double tpot = at.serving.at_request.tpot_s;
      const double paced = std::max(tpot, base.setup.targets.tpot_ms / 1e3);
      const double rate =
          offline ? at.serving.max_throughput_tokens_per_s : (paced > 0 ? D(wanted) / paced : 0);
      const double per_card = rate / D(n);
      const double price = PricePerGpuHour(q);
      const double usd_per_mtok =
          price < 0 || per_card <= 0 ? kInf : price / (per_card * 3600) * 1e6;
      const std::vector<double> key = Key(ranking, g, n, per_card, tpot, usd_per_mtok);
      if (!cs.best || Better(key, cs.best->key)) {
        PlanChoice choice;
        choice.request = q;
        choice.count = n;
        choice.replicas = replicas;
        choice.key = key;
        choice.figures.tokens_per_s_per_gpu = per_card;
        choice.figures.usd_per_mtok = std::isinf(usd_per_mtok) ? -1 : usd_per_mtok;
        cs.best = std::move(choice);
      }
    }
  }
  return cs;
}

}  // namespace gpuplan::plan_search
