// SPDX-License-Identifier: MIT
#include "physics/stack_figures.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/format.h"
#include "core/units.h"
#include "physics/estimate_parts.h"

namespace gpuplan {
namespace {

using text::D;

// The KV cache the engine sets aside per GPU, given the weights and everything else it holds
// inside its share (activations, runtime, and graphs when they are captured first), and the
// KV cache the request needs (kAsNeeded: that). A pool of blocks is whole blocks.
double KvPoolBytes(const ServingPolicy& s, const GpuSpec& g, const Parallel& p, double weight_bytes,
                   double other_bytes, double needed_kv_bytes, double kv_token_bytes,
                   double profiled_bytes) {
  double pool = needed_kv_bytes;
  const double inside = other_bytes - (s.graphs_in_budget ? 0 : s.graph_bytes);
  switch (s.kv_budget) {
    case KvBudget::kAsNeeded:
      return std::max(0.0, pool);
    case KvBudget::kShareOfCard:
      pool = s.profile_run
                 ? s.memory_fraction * g.usable_memory_bytes - weight_bytes - profiled_bytes
                 : s.memory_fraction * g.CapacityBytes() - weight_bytes - inside;
      break;
    case KvBudget::kCardMinusReserve:
      // SGLang sizes from what the driver reports (torch.cuda.mem_get_info's total).
      pool = s.static_fraction > 0
                 ? s.static_fraction * g.usable_memory_bytes - weight_bytes
                 : g.usable_memory_bytes - DefaultsOn(s, g, p).reserve_bytes - weight_bytes;
      break;
    case KvBudget::kShareOfFree:
      pool = s.memory_fraction * (g.CapacityBytes() - weight_bytes - other_bytes);
      break;
  }
  const double block = D(s.block_tokens) * kv_token_bytes;
  if (block > 0 && pool > 0) pool = std::floor(pool / block) * block;
  return std::max(0.0, pool);
}

// KV bytes per token of the request's context, as the cache holds it.
double KvTokenBytes(const Setup& r, const ServingPolicy& s, const MemoryBreakdown& b) {
  const double context = text::D(r.workload.prompt_tokens + r.workload.output_tokens);
  const double sequences = text::D(std::max<int64_t>(1, RankConcurrency(r)));
  const double tokens = s.context_tokens > 0 ? text::D(s.context_tokens) : context * sequences;
  return tokens > 0 ? b.kv_cache / tokens : 0;
}

// The pool's formulas and inputs (the page's detail view shows them).
void ExplainFramework(const Setup& r, const ServingPolicy& engine, const ServingDefaults& d,
                      double kv_token, Estimate* e) {
  auto& x = e->explain;
  const MemoryBreakdown& b = e->memory.per_gpu;
  const StackProfile& f = *r.stack;
  x["/framework/kv_pool_bytes"] = {
      engine.kv_budget == KvBudget::kShareOfCard && engine.profile_run
          ? "share x the card's usable total - weights - the profile run's peak (a forward pass "
            "over max_batched_tokens, the sampler over max_seqs rows) - memory outside PyTorch "
            "- CUDA graphs captured first, in whole blocks"
      : engine.kv_budget == KvBudget::kShareOfCard
          ? "share x card memory - weights - everything else per GPU"
      : engine.kv_budget == KvBudget::kCardMinusReserve
          ? "card memory - reserve (activations, CUDA graphs) - weights"
      : engine.kv_budget == KvBudget::kShareOfFree
          ? "share x (card memory - weights - everything else)"
          : "the KV cache of the requested concurrency at prompt + output tokens",
      {{"share", engine.static_fraction > 0 ? engine.static_fraction : engine.memory_fraction},
       {"usable_memory_bytes", r.gpu.usable_memory_bytes},
       {"block_tokens", D(engine.block_tokens)},
       {"reserve_bytes", d.reserve_bytes},
       {"weights_bytes", b.weights},
       {"other_bytes", b.Total() - b.weights - b.kv_cache}},
      f.Sources()};
  x["/framework/kv_pool_tokens"] = {
      "kv_pool_bytes / KV cache bytes per token", {{"kv_bytes_per_token", kv_token}}, {}};
  x["/framework/engine_bytes"] = {
      "everything but the KV cache + kv_pool_bytes: what the engine "
      "holds per GPU once started (nvidia-smi shows about this)",
      {},
      {}};
}

}  // namespace

double KvPool(const Setup& r, const MemoryBreakdown& b) {
  const StackProfile& s = (*r.stack);
  if (!s.serving) return b.kv_cache;
  const ServingPolicy& engine = r.serving;
  // What a profiling engine subtracts: the profile's peak of tensors (activations, buffers),
  // the communicators outside PyTorch and the graphs captured before the pool is sized.
  const double comm = CommReserveBytes(r.runtime, r.parallel);
  const double profiled = b.activations + b.buffers + (comm > 0 ? comm : engine.non_torch_bytes) +
                          (engine.graphs_in_budget ? engine.graph_bytes : 0);
  return KvPoolBytes(engine, r.gpu, r.parallel, b.weights, b.Total() - b.weights - b.kv_cache,
                     b.kv_cache, KvTokenBytes(r, engine, b), profiled);
}

bool FitsCard(const Setup& r, const MemoryBreakdown& b) {
  return b.Total() * (1 + r.headroom) <= r.gpu.CapacityBytes() && b.kv_cache <= KvPool(r, b);
}

// The framework profile's figures: a serving engine's defaults on this card, the KV pool it
// sets aside, and whether the request's KV cache fits in it.
void AddFramework(const Setup& r, Estimate* e) {
  if (!r.StackNamed()) return;  // no profile named: nothing of its own to report
  const StackProfile& f = *r.stack;
  FrameworkEstimate& fe = e->framework;
  fe.id = f.id;
  fe.name = f.name;
  if (e->with_explain) {
    e->explain["/framework/name"] = {
        std::string(f.name) + "'s documented defaults", {}, f.Sources()};
  }
  if (!f.serving || r.workload.IsTraining()) return;
  const ServingPolicy& engine = r.serving;
  const ServingDefaults d = EngineDefaults(r, r.parallel);
  fe.max_batched_tokens = r.workload.prefill_chunk_limit;
  fe.max_seqs = d.max_seqs;
  const MemoryBreakdown& b = e->memory.per_gpu;
  fe.kv_pool_bytes = KvPool(r, b);
  fe.engine_bytes = b.Total() - b.kv_cache + fe.kv_pool_bytes;
  // What one sequence of the request's length takes (sliding-window layers hold at most the
  // window), and per token of that length.
  const double context = text::D(r.workload.prompt_tokens + r.workload.output_tokens);
  const double kv_token = KvTokenBytes(r, engine, b);
  const double per_sequence = kv_token * context;
  if (kv_token > 0) {
    fe.kv_pool_tokens = std::floor(fe.kv_pool_bytes / kv_token);
    fe.kv_pool_sequences = std::floor(fe.kv_pool_bytes / per_sequence);
  }
  if (e->with_explain) ExplainFramework(r, engine, d, kv_token, e);
  if (e->infeasible.empty() && b.kv_cache > fe.kv_pool_bytes) {
    e->fits = false;
    e->infeasible.push_back(Note{"exceeds_engine_kv_pool",
                                 {{"need_bytes", b.kv_cache}, {"pool_bytes", fe.kv_pool_bytes}},
                                 std::string(f.name) + " sets aside " + Gib(fe.kv_pool_bytes) +
                                     " of KV cache per GPU on " + r.gpu.name +
                                     "; the requested concurrency needs " + Gib(b.kv_cache),
                                 "/workload/concurrency"});
  }
  const double wanted = context * text::D(RankConcurrency(r));
  if (e->infeasible.empty() && engine.context_tokens > 0 && wanted > D(engine.context_tokens)) {
    e->fits = false;
    e->infeasible.push_back(
        Note{"exceeds_engine_context",
             {{"need_tokens", wanted}, {"context_tokens", D(engine.context_tokens)}},
             std::string(f.name) + "'s context of " + std::to_string(engine.context_tokens) +
                 " tokens is shared by every sequence; the requested concurrency needs " +
                 std::to_string(static_cast<int64_t>(wanted)),
             "/serving/n_ctx"});
  }
  if (e->infeasible.empty() && r.serving.max_model_len > 0 &&
      context > D(r.serving.max_model_len)) {
    e->fits = false;
    e->infeasible.push_back(
        Note{"exceeds_max_model_len",
             {{"tokens", context}, {"max_model_len", D(r.serving.max_model_len)}},
             "prompt + output tokens exceed serving.max_model_len: " + std::string(f.name) +
                 " rejects such a request",
             "/serving/max_model_len"});
  }
  if (d.max_seqs > 0 && RankConcurrency(r) > d.max_seqs) {
    e->warnings.push_back(Note{"engine_max_seqs",
                               {{"max_seqs", text::D(d.max_seqs)}},
                               std::string(f.name) + " runs at most " + std::to_string(d.max_seqs) +
                                   " sequences at once per rank on this card by default; the "
                                   "rest queue",
                               "/workload/concurrency"});
  }
}

}  // namespace gpuplan
