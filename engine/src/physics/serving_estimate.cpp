// SPDX-License-Identifier: MIT
// Serving figures: latency and throughput at the requested concurrency, and the largest
// concurrency that fits with the headroom and meets the latency targets.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "physics/estimate_parts.h"
#include "physics/stack_figures.h"

namespace gpuplan {
namespace {

using text::D;

// `q` at `concurrency`: the search rewrites one setup in place (a copy per probe was a
// third of a serving plan's allocations). `n_ctx`: the engine's context for all sequences
// together (llama.cpp's), 0 when none.
bool FitsAt(Setup* q, const Estimate& e, int64_t concurrency, int64_t n_ctx) {
  q->workload.SetConcurrency(concurrency);
  // An engine's caps hold per data-parallel rank.
  const int64_t rank = RankConcurrency(*q);
  if (e.framework.max_seqs > 0 && rank > e.framework.max_seqs) return false;
  // A context allocated at start for every sequence holds so many.
  const int64_t per_sequence = q->workload.prompt_tokens + q->workload.output_tokens;
  if (n_ctx > 0 && rank * per_sequence > n_ctx) return false;
  return FitsCard(*q, MemoryOf(*q, e.params, /*with_detail=*/false).per_gpu);
}

// What one tensor-parallel rank reads per decode step across all pipeline stages: its share of
// every weight but the untied embedding table (a lookup reads only the batch's rows), the
// KV cache per token of context, and the weights of layers left in host memory.
struct Reads {
  double weights = 0;
  double kv_per_token = 0;
  double host_weights = 0;  ///< layers on the CPU, read whole every step
  double host_experts = 0;  ///< routed experts on the CPU, read as the batch routes
};
Reads DecodeReads(const Setup& r, const ParamCounts& c) {
  Setup one = r;
  one.parallel.pp = 1;
  one.parallel.zero = 0;
  one.parallel.gpus = r.parallel.tp * r.parallel.cp;
  const MemoryResult m = MemoryOf(one, c, /*with_detail=*/false);
  double weights = m.per_gpu.weights;
  // The untied input table is not read (unless an engine keeps it off the GPU already).
  if (!r.model.tied_embeddings && !r.serving.input_embedding_on_host) {
    const FormatBits b = Bits(r.precision.weights, r.precision.quant);
    const bool fp32 =
        r.precision.weights == WeightFormat::kFp32 || r.precision.weights == WeightFormat::kTf32;
    const double bits = b.embeddings_16bit ? (fp32 ? 32 : 16) : b.embedding_bits;
    weights -= D(r.model.vocab) * D(r.model.hidden) * bits / 8 / D(r.parallel.tp);
  }
  return {weights, m.kv_bytes_per_token, m.offloaded_bytes_per_gpu - m.host_expert_bytes,
          m.host_expert_bytes};
}

// The serving figures' formulas and inputs (the page's detail view shows them).
void ExplainServing(const Setup& r, double prefill_compute_at_batch_s, Estimate* e) {
  const ServingEstimate& s = e->serving;
  const InferencePerf& p = s.at_request;
  const int64_t lo = s.max_concurrency;
  const Workload::RequestSet& set = r.workload.requests;
  const bool offline = r.workload.mode == InferenceMode::kOffline;
  const Efficiencies eff = DefaultEfficiencies(r.gpu);
  auto& x = e->explain;
  const std::string base = "/performance/inference/";
  x[base + "tpot_ms"] = {
      "max(bytes read per step / (bandwidth x efficiency), FLOPs per step / (peak x efficiency)) "
      "+ two tensor-parallel all-reduces per layer + an expert-parallel dispatch and combine "
      "per MoE layer; bytes = weights (MoE: the experts the batch routes to) + the batch's KV "
      "cache at the average context (sliding-window layers: at most the window)",
      {{"bytes_per_step", p.bytes_per_step},
       {"flops_per_step", p.flops_per_step},
       {"tp_comm_s", p.tp_comm_s},
       {"ep_comm_s", p.ep_comm_s},
       {"bandwidth_efficiency", r.gpu.mem_bandwidth_bytes_per_s > 0
                                    ? std::min(1.0, DecodeBandwidth(r) * r.calibration.bandwidth /
                                                        r.gpu.mem_bandwidth_bytes_per_s)
                                    : 0.0},
       {"sm_count", D(r.gpu.sm_count)},
       {"compute_bound", p.compute_bound ? 1.0 : 0.0},
       {"host_bound", p.host_bound ? 1.0 : 0.0}},
      {std::string("decode efficiency: ") + eff.basis,
       r.serving.eager_decode
           ? "no CUDA graphs (enforce_eager): a step lasts at least layers x 0.593 ms, the host "
             "launching each layer's kernels (measured on one H200 host, Llama 3.1 8B)"
           : "CUDA graphs: the host's kernel launches do not bound the step"}};
  x[base + "ttft_ms"] = {
      "prefill of one prompt: (2N x prompt + layers x prompt^2 x (q + o widths)) / tp / (peak x "
      "efficiency) + its all-reduces; queueing not included",
      {{"prompt_tokens", D(r.workload.prompt_tokens)},
       {"prefill_efficiency", std::min(1.0, eff.prefill_compute * r.calibration.compute)}},
      {}};
  x[base + "max_concurrency"] = {
      offline ? "largest number of sequences per replica whose memory fits with the headroom "
                "(offline: no latency target)"
              : "largest number of sequences per replica whose memory fits with the headroom "
                "and whose TTFT and TPOT meet the targets",
      {{"ttft_target_ms", r.targets.ttft_ms}, {"tpot_target_ms", r.targets.tpot_ms}},
      {}};
  x[base + "engine_concurrency"] = {
      "sequences the engine runs at once under full load: an engine that preallocates its KV "
      "pool admits what the pool holds at the request's lengths (capped by its max_num_seqs), "
      "with no planning headroom inside its own budget; otherwise max_concurrency",
      {{"max_concurrency", D(lo)}},
      {}};
  x[base + "decode_tokens_per_s_total"] = {
      "served concurrency / TPOT (the requested concurrency, capped by the engine's running "
      "sequences and by what fits)",
      {{"served_concurrency", D(s.served_concurrency)}},
      {}};
  if (s.makespan_s > 0) {
    x[base + "makespan_s"] = {
        "count x mean output / saturated rate + (p95 - mean output) x TPOT at 5% of the batch: "
        "the last wave's longest requests finish alone",
        {{"count", D(set.count)}, {"output_p95", set.output_p95}},
        {}};
  }
  x[base + "max_throughput_tokens_per_s"] = {
      "B / (TPOT(B) + B / output_tokens x prefill(prompt)) at B = engine_concurrency (an engine "
      "that preallocates its KV pool fills it under full load, whatever the planning headroom; "
      "otherwise max_concurrency): every admitted request pays its prefill, chunked into the "
      "decode iterations",
      {{"batch", D(s.engine_concurrency)},
       {"output_tokens", D(r.workload.output_tokens)},
       {"prefill_compute_ms", prefill_compute_at_batch_s * 1e3}},
      {}};
}

}  // namespace

void AddServing(const Setup& r, Estimate* e) {
  e->has_serving = true;
  Setup safe = r;
  safe.parallel = SafeLayout(r.parallel);
  const Reads reads = DecodeReads(safe, e->params);
  // What the probes below share, worked out once: the engine's policy does not change with
  // the concurrency.
  const double bandwidth = DecodeBandwidth(safe);
  const int64_t n_ctx = safe.serving.context_tokens;
  const auto at = [&](int64_t c) {
    return EstimateInference(safe, e->params, c, reads.weights, reads.kv_per_token, bandwidth,
                             reads.host_weights, reads.host_experts);
  };
  ServingEstimate& s = e->serving;
  s.at_request = at(r.workload.concurrency);
  // Offline batch jobs have no latency target: the batch grows until memory is full.
  const bool offline = r.workload.mode == InferenceMode::kOffline;
  const double ttft_target = offline ? 0 : r.targets.ttft_ms / 1e3;
  const double tpot_target = offline ? 0 : r.targets.tpot_ms / 1e3;
  const auto meets = [&](const InferencePerf& p) {
    return (ttft_target <= 0 || p.ttft_s <= ttft_target) &&
           (tpot_target <= 0 || p.tpot_s <= tpot_target);
  };
  // A setup that does not fit meets no target.
  s.meets_targets = meets(s.at_request) && e->fits;
  // Memory and latency both grow with concurrency, so the largest acceptable one is found by
  // doubling, then bisecting.
  // Only memory (or an engine's pool or context) can stand in the way of more sequences.
  const bool can_grow = e->infeasible.empty() || e->infeasible[0].code == "exceeds_memory" ||
                        e->infeasible[0].code == "exceeds_engine_kv_pool" ||
                        e->infeasible[0].code == "exceeds_engine_context";
  // The one request both searches rewrite: its concurrency, and the headroom it plans with.
  Setup probe = safe;
  const auto largest = [&](double headroom) {
    probe.headroom = headroom;
    // The latency check first: it is the cheaper of the two.
    const auto ok = [&](int64_t c) {
      return can_grow && meets(at(c)) && FitsAt(&probe, *e, c, n_ctx);
    };
    int64_t lo = 0;
    int64_t hi = 1;
    constexpr int64_t kMax = int64_t{1} << 20;
    while (hi <= kMax && ok(hi)) {
      lo = hi;
      hi *= 2;
    }
    while (hi - lo > 1 && lo < kMax) {
      const int64_t mid = lo + (hi - lo) / 2;
      (ok(mid) ? lo : hi) = mid;
    }
    return lo;
  };
  // max_concurrency is the planner's figure: what fits with the planning headroom on the card.
  const int64_t lo = largest(safe.headroom);
  s.max_concurrency = lo;
  // An engine that preallocates its pool admits what the pool holds once started, headroom or
  // not (the planning headroom applies to the card, not inside the engine's own budget), so
  // a server under full load runs that batch.
  const bool pool_engine = safe.serving.Preallocates();
  // A search that describes nothing needs it only for an offline batch's rate.
  const bool needed = e->describe || offline;
  s.engine_concurrency = needed && pool_engine && safe.headroom > 0 ? largest(0) : lo;
  const int64_t full = s.engine_concurrency;
  // At saturation each iteration decodes B tokens and, chunked in, prefills B x P / O prompt
  // tokens: the requests that finished are replaced, each paying its prompt once.
  // Data-parallel ranks prefill their own share.
  const double ranks = D(std::max<int64_t>(1, safe.parallel.Dp()));
  const auto saturated = [&](int64_t b) {
    const InferencePerf p = at(b);
    const double out_tokens = D(std::max<int64_t>(1, r.workload.output_tokens));
    const double iteration = p.tpot_s + std::ceil(D(b) / ranks) / out_tokens * p.prefill_compute_s;
    return iteration > 0 ? D(b) / iteration : 0;
  };
  s.max_throughput_tokens_per_s = full > 0 ? saturated(full) : 0;
  // A finite set: every output at the saturated rate, then the longest outputs of the last
  // wave run on at a shrinking batch, the 5% beyond the p95 alone at the end: what is above the
  // mean of the 95th percentile's outputs, at the batch of that 5%.
  const Workload::RequestSet& set = r.workload.requests;
  if (set.count > 0 && full > 0) {
    const int64_t b = std::min(full, set.count);
    const double mean_out = D(r.workload.output_tokens);
    const double p95_out = std::max(mean_out, set.output_p95);
    const double total = D(set.count) * mean_out;
    const int64_t tail_batch = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(0.05 * D(b))));
    const double steady = saturated(b);
    s.makespan_s = (steady > 0 ? total / steady : 0) + (p95_out - mean_out) * at(tail_batch).tpot_s;
    if (s.makespan_s > 0) s.max_throughput_tokens_per_s = total / s.makespan_s;
  }
  // A batch beyond the card (or the engine's pool) does not run: its decode figures are those
  // of max_concurrency. One that only eats into the planning headroom still runs. An engine's
  // cap on running sequences queues the rest.
  probe.workload = safe.workload;
  probe.headroom = 0;
  const bool runs = FitsCard(probe, e->memory.per_gpu);
  const int64_t asked = r.workload.concurrency;
  int64_t served = asked;
  if (e->framework.max_seqs > 0) {
    served = std::min(served, e->framework.max_seqs * std::max<int64_t>(1, safe.parallel.Dp()));
  }
  if (!runs) served = std::min(served, lo);
  s.served_concurrency = served;
  if (served != asked) {
    const double ttft = s.at_request.ttft_s;
    const double prefill = s.at_request.prefill_tokens_per_s;
    const double prefill_compute = s.at_request.prefill_compute_s;
    s.at_request = served > 0 ? at(served) : InferencePerf{};
    s.at_request.ttft_s = ttft;
    s.at_request.prefill_tokens_per_s = prefill;
    s.at_request.prefill_compute_s = prefill_compute;
    if (served == 0) {
      s.at_request.tpot_s = 0;
    }
    e->warnings.push_back(Note{"served_below_request",
                               {{"requested", D(asked)}, {"served", D(served)}},
                               served == 0
                                   ? "not even one sequence fits: no decode rate is reported"
                                   : "decode figures are at " + std::to_string(served) +
                                         " sequences, what runs at once, not the requested " +
                                         std::to_string(asked),
                               "/workload/concurrency"});
  }
  if (e->with_explain) ExplainServing(r, full > 0 ? at(full).prefill_compute_s : 0, e);
}

}  // namespace gpuplan
