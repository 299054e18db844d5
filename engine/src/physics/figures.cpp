// SPDX-License-Identifier: MIT
#include "physics/figures.h"

#include <algorithm>
#include <iterator>

namespace gpuplan {
namespace {

FigureValue Num(double v) { return {v, {}, true, false}; }
FigureValue Text(std::string_view t) { return {0, t, true, false}; }
constexpr FigureValue kAbsent{0, {}, false, false};
constexpr FigureValue kNull{0, {}, false, true};

// A section's figure: absent where the estimate has no such section.
FigureValue Training(const Estimate& e, double v) { return e.has_training ? Num(v) : kAbsent; }
FigureValue Serving(const Estimate& e, double v) { return e.has_serving ? Num(v) : kAbsent; }

// The offer a price comes from; null when the price is the request's own.
const Offer* OfferOf(const CostEstimate& c) {
  if (!c.priced || !c.supply || c.offer < 0) return nullptr;
  return &c.supply->offers[static_cast<size_t>(c.offer)];
}
FigureValue OfferText(const Estimate& e, std::string Offer::*field) {
  const Offer* o = OfferOf(e.cost);
  return o != nullptr ? Text(o->*field) : kAbsent;
}
// A serving engine's pool figures: only for an engine (a training stack has no pool).
bool EngineNamed(const Estimate& e) { return e.framework.max_batched_tokens > 0; }

using U = Unit;
using W = Write;
constexpr Form kBoth = Form::kBoth;
constexpr Form kFull = Form::kFullOnly;

// One row each; FigureTable sorts them.
const FigureRow kRows[] = {
    // Cost: null without a price (the catalog's or the request's), never invented.
    {"/cost/market", U::kText, W::kText, kBoth,
     [](const Estimate& e) { return Text(e.cost.market); }},
    {"/cost/offer/as_of", U::kText, W::kText, kBoth,
     [](const Estimate& e) { return OfferText(e, &Offer::as_of); }},
    {"/cost/offer/currency", U::kText, W::kText, kBoth,
     [](const Estimate& e) { return OfferText(e, &Offer::currency); }},
    {"/cost/offer/market", U::kText, W::kText, kBoth,
     [](const Estimate& e) { return OfferText(e, &Offer::market); }},
    {"/cost/offer/price", U::kPrice, W::kFigure, kBoth,
     [](const Estimate& e) {
       const Offer* o = OfferOf(e.cost);
       return o != nullptr ? Num(o->price) : kAbsent;
     }},
    {"/cost/offer/provider", U::kText, W::kText, kBoth,
     [](const Estimate& e) { return OfferText(e, &Offer::provider); }},
    {"/cost/offer/provider_class", U::kText, W::kText, kBoth,
     [](const Estimate& e) {
       if (!e.cost.priced) return kAbsent;
       const Offer* o = OfferOf(e.cost);
       return Text(o != nullptr ? std::string_view(o->provider_class) : "request");
     }},
    // The source stays in the full answer and the catalog: a sentence or two on every lean
    // row was a sixth of the page default's answer.
    {"/cost/offer/source", U::kText, W::kText, kFull,
     [](const Estimate& e) { return OfferText(e, &Offer::source); }},
    {"/cost/usd_per_gpu_hour", U::kUsdPerHour, W::kFigure, kBoth,
     [](const Estimate& e) { return e.cost.priced ? Num(e.cost.usd_per_gpu_hour) : kNull; }},
    {"/cost/usd_per_hour", U::kUsdPerHour, W::kFigure, kBoth,
     [](const Estimate& e) { return e.cost.priced ? Num(e.cost.usd_per_hour) : kNull; }},
    {"/cost/usd_per_million_tokens", U::kUsdPerMillionTokens, W::kFigure, kBoth,
     [](const Estimate& e) {
       return e.cost.priced && e.cost.usd_per_million_tokens >= 0
                  ? Num(e.cost.usd_per_million_tokens)
                  : kNull;
     },
     nullptr, false, /*headline=*/true},
    {"/cost/usd_total", U::kUsd, W::kFigure, kBoth,
     [](const Estimate& e) {
       return e.cost.priced && e.has_training ? Num(e.cost.usd_total) : kNull;
     },
     "training", false, /*headline=*/true},
    // A serving engine's defaults on this card and the KV pool it sets aside.
    {"/framework/engine_bytes", U::kBytes, W::kFigure, kBoth,
     [](const Estimate& e) { return EngineNamed(e) ? Num(e.framework.engine_bytes) : kAbsent; }},
    {"/framework/id", U::kText, W::kText, kBoth,
     [](const Estimate& e) { return e.framework.id.empty() ? kAbsent : Text(e.framework.id); }},
    {"/framework/kv_pool_bytes", U::kBytes, W::kFigure, kBoth,
     [](const Estimate& e) { return EngineNamed(e) ? Num(e.framework.kv_pool_bytes) : kAbsent; }},
    {"/framework/kv_pool_sequences", U::kCount, W::kFigure, kBoth,
     [](const Estimate& e) {
       return EngineNamed(e) ? Num(e.framework.kv_pool_sequences) : kAbsent;
     }},
    // The pool's band: the engines' own start-up logs.
    {"/framework/kv_pool_tokens", U::kTokens, W::kFigure, kBoth,
     [](const Estimate& e) { return EngineNamed(e) ? Num(e.framework.kv_pool_tokens) : kAbsent; },
     "kv_pool", /*band_rate=*/true},
    {"/framework/max_batched_tokens", U::kTokens, W::kInt, kBoth,
     [](const Estimate& e) {
       return EngineNamed(e) ? Num(static_cast<double>(e.framework.max_batched_tokens)) : kAbsent;
     }},
    {"/framework/max_seqs", U::kCount, W::kInt, kBoth,
     [](const Estimate& e) {
       if (!EngineNamed(e)) return kAbsent;
       return e.framework.max_seqs > 0 ? Num(static_cast<double>(e.framework.max_seqs)) : kNull;
     }},
    {"/framework/name", U::kText, W::kText, kBoth,
     [](const Estimate& e) { return e.framework.id.empty() ? kAbsent : Text(e.framework.name); }},
    // Memory: the writers sum the rounded parts themselves (a total is exactly the sum of the
    // parts shown); these rows give the units and the bands' figures.
    {"/memory/capacity_bytes", U::kBytes, W::kBytes, kBoth,
     [](const Estimate& e) { return Num(e.capacity_bytes); }},
    {"/memory/per_gpu_bytes/weights", U::kBytes, W::kBytes, kBoth,
     [](const Estimate& e) { return Num(e.memory.per_gpu.weights); }, "weights", true},
    {"/memory/total_bytes", U::kBytes, W::kBytes, kBoth,
     [](const Estimate& e) { return Num(e.total_bytes); }, "memory", true, true},
    {"/performance/inference/bound", U::kText, W::kText, kBoth,
     [](const Estimate& e) {
       if (!e.has_serving) return kAbsent;
       return Text(e.serving.at_request.compute_bound ? "compute" : "memory");
     }},
    {"/performance/inference/decode_tokens_per_s_per_seq", U::kTokensPerSecond, W::kFigure, kBoth,
     [](const Estimate& e) { return Serving(e, e.serving.at_request.decode_tokens_per_s_per_seq); },
     "decode", true},
    {"/performance/inference/decode_tokens_per_s_total", U::kTokensPerSecond, W::kFigure, kBoth,
     [](const Estimate& e) { return Serving(e, e.serving.at_request.decode_tokens_per_s_total); },
     "decode", true, true},
    {"/performance/inference/engine_concurrency", U::kCount, W::kInt, kBoth,
     [](const Estimate& e) {
       return Serving(e, static_cast<double>(e.serving.engine_concurrency));
     }},
    {"/performance/inference/makespan_s", U::kSeconds, W::kFigure, kBoth,
     [](const Estimate& e) {
       return e.has_serving && e.serving.makespan_s > 0 ? Num(e.serving.makespan_s) : kAbsent;
     }},
    {"/performance/inference/max_concurrency", U::kCount, W::kInt, kBoth,
     [](const Estimate& e) { return Serving(e, static_cast<double>(e.serving.max_concurrency)); }},
    // The output rate at saturation, from published serving benchmarks of fixed lengths.
    {"/performance/inference/max_throughput_tokens_per_s", U::kTokensPerSecond, W::kFigure, kBoth,
     [](const Estimate& e) { return Serving(e, e.serving.max_throughput_tokens_per_s); },
     "saturation", true, true},
    {"/performance/inference/meets_targets", U::kFlag, W::kBool, kBoth,
     [](const Estimate& e) { return Serving(e, e.serving.meets_targets ? 1 : 0); }},
    {"/performance/inference/prefill_tokens_per_s", U::kTokensPerSecond, W::kFigure, kBoth,
     [](const Estimate& e) { return Serving(e, e.serving.at_request.prefill_tokens_per_s); }},
    {"/performance/inference/tpot_ms", U::kMilliseconds, W::kFigure, kBoth,
     [](const Estimate& e) { return Serving(e, e.serving.at_request.tpot_s * 1e3); }, "decode"},
    {"/performance/inference/ttft_ms", U::kMilliseconds, W::kFigure, kBoth,
     [](const Estimate& e) { return Serving(e, e.serving.at_request.ttft_s * 1e3); }},
    // Training; the lean rows leave out what is the same on every row or the sheet's only.
    {"/performance/training/achieved_tflops_per_gpu", U::kTflopsPerGpu, W::kFigure, kFull,
     [](const Estimate& e) { return Training(e, e.training.achieved_tflops_per_gpu); }},
    {"/performance/training/flops_per_token", U::kFlops, W::kFigure, kBoth,
     [](const Estimate& e) { return Training(e, e.training.flops.model_per_token); }},
    {"/performance/training/gpu_hours", U::kGpuHours, W::kFigure, kBoth,
     [](const Estimate& e) { return Training(e, e.training.gpu_hours); }, "training"},
    {"/performance/training/hardware_flops_per_token", U::kFlops, W::kFigure, kFull,
     [](const Estimate& e) { return Training(e, e.training.flops.hardware_per_token); }},
    {"/performance/training/mfu", U::kFraction, W::kFigure, kBoth,
     [](const Estimate& e) { return Training(e, e.training.mfu); }},
    {"/performance/training/scaling_efficiency", U::kFraction, W::kFigure, kBoth,
     [](const Estimate& e) { return Training(e, e.training.scaling_efficiency); }},
    {"/performance/training/step_s", U::kSeconds, W::kFigure, kBoth,
     [](const Estimate& e) { return Training(e, e.training.step_s); }},
    {"/performance/training/time_s", U::kSeconds, W::kFigure, kBoth,
     [](const Estimate& e) { return Training(e, e.training.time_s); }, "training", false, true},
    {"/performance/training/tokens", U::kTokens, W::kFigure, kFull,
     [](const Estimate& e) { return Training(e, e.training.tokens); }},
    {"/performance/training/tokens_per_s", U::kTokensPerSecond, W::kFigure, kBoth,
     [](const Estimate& e) { return Training(e, e.training.tokens_per_s); }, "training", true},
    {"/performance/training/tokens_per_s_per_gpu", U::kTokensPerSecond, W::kFigure, kBoth,
     [](const Estimate& e) { return Training(e, e.training.tokens_per_s_per_gpu); }, "training",
     true},
    {"/power/gpu_watts", U::kWatts, W::kFigure, kBoth,
     [](const Estimate& e) { return Num(e.power.gpu_watts); }},
    {"/power/node_watts", U::kWatts, W::kFigure, kBoth,
     [](const Estimate& e) { return Num(e.power.node_watts); }},
    {"/power/nodes", U::kCount, W::kInt, kFull,
     [](const Estimate& e) { return Num(static_cast<double>(e.power.nodes)); }},
    {"/power/nodes_per_rack", U::kCount, W::kInt, kFull,
     [](const Estimate& e) { return Num(static_cast<double>(e.power.nodes_per_rack)); }},
    {"/power/total_watts", U::kWatts, W::kFigure, kBoth,
     [](const Estimate& e) { return Num(e.power.total_watts); }},
    // Long-run figures of a training run.
    {"/reliability/checkpoint_bytes", U::kBytes, W::kBytes, kFull,
     [](const Estimate& e) { return Training(e, e.reliability.checkpoint_bytes); }},
    {"/reliability/checkpoint_interval_s", U::kSeconds, W::kFigure, kFull,
     [](const Estimate& e) { return Training(e, e.reliability.checkpoint_interval_s); }},
    {"/reliability/checkpoint_write_s", U::kSeconds, W::kFigure, kFull,
     [](const Estimate& e) { return Training(e, e.reliability.checkpoint_write_s); }},
    {"/reliability/expected_interruptions", U::kCount, W::kFigure, kFull,
     [](const Estimate& e) { return Training(e, e.reliability.expected_interruptions); }},
    {"/reliability/expected_lost_s", U::kSeconds, W::kFigure, kFull,
     [](const Estimate& e) { return Training(e, e.reliability.expected_lost_s); }},
};

// Pointer order key by key: "/a/b" before "/a_c", as the objects' sorted keys nest.
bool Before(std::string_view a, std::string_view b) {
  while (!a.empty() && !b.empty()) {
    const size_t ea = a.find('/', 1);
    const size_t eb = b.find('/', 1);
    const std::string_view ka =
        a.substr(1, ea == std::string_view::npos ? std::string_view::npos : ea - 1);
    const std::string_view kb =
        b.substr(1, eb == std::string_view::npos ? std::string_view::npos : eb - 1);
    if (ka != kb) return ka < kb;
    a = ea == std::string_view::npos ? std::string_view() : a.substr(ea);
    b = eb == std::string_view::npos ? std::string_view() : b.substr(eb);
  }
  return a.empty() && !b.empty();
}

}  // namespace

const std::vector<FigureRow>& FigureTable() {
  static const std::vector<FigureRow> table = [] {
    std::vector<FigureRow> rows(std::begin(kRows), std::end(kRows));
    std::stable_sort(rows.begin(), rows.end(), [](const FigureRow& a, const FigureRow& b) {
      return Before(a.pointer, b.pointer);
    });
    return rows;
  }();
  return table;
}

std::vector<const FigureRow*> FiguresUnder(std::string_view prefix) {
  std::vector<const FigureRow*> out;
  for (const FigureRow& r : FigureTable()) {
    if (std::string_view(r.pointer).substr(0, prefix.size()) == prefix) out.push_back(&r);
  }
  return out;
}

const FigureRow* FindFigure(std::string_view pointer) {
  for (const FigureRow& r : FigureTable()) {
    if (pointer == r.pointer) return &r;
  }
  return nullptr;
}

const char* UnitName(Unit u) {
  switch (u) {
    case Unit::kBytes:
      return "bytes";
    case Unit::kSeconds:
      return "s";
    case Unit::kMilliseconds:
      return "ms";
    case Unit::kTokensPerSecond:
      return "tokens_per_s";
    case Unit::kTokens:
      return "tokens";
    case Unit::kFlops:
      return "flops";
    case Unit::kTflopsPerGpu:
      return "tflops_per_gpu";
    case Unit::kFraction:
      return "fraction";
    case Unit::kGpuHours:
      return "gpu_hours";
    case Unit::kWatts:
      return "watts";
    case Unit::kUsd:
      return "usd";
    case Unit::kUsdPerHour:
      return "usd_per_hour";
    case Unit::kUsdPerMillionTokens:
      return "usd_per_million_tokens";
    case Unit::kPrice:
      return "price";
    case Unit::kCount:
      return "count";
    case Unit::kText:
      return "text";
    case Unit::kFlag:
      return "flag";
  }
  return "text";
}

}  // namespace gpuplan
