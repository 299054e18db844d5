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

// The KV cache the engine sets aside per GPU, given the weights and everything else it holds
// (activations, graphs, runtime), and the KV cache the request needs (kAsNeeded: that).
double KvPoolBytes(const ServingPolicy& s, const GpuSpec& g, const Parallel& p, double weight_bytes,
                   double other_bytes, double needed_kv_bytes) {
  double pool = needed_kv_bytes;
  switch (s.kv_budget) {
    case KvBudget::kAsNeeded:
      break;
    case KvBudget::kShareOfCard:
      pool = s.memory_fraction * g.memory_bytes - weight_bytes - other_bytes;
      break;
    case KvBudget::kCardMinusReserve:
      pool = g.memory_bytes - DefaultsOn(s, g, p).reserve_bytes - weight_bytes;
      break;
    case KvBudget::kShareOfFree:
      pool = s.memory_fraction * (g.memory_bytes - weight_bytes - other_bytes);
      break;
  }
  return std::max(0.0, pool);
}

}  // namespace

double KvPool(const Request& r, const MemoryBreakdown& b) {
  const StackProfile& s = StackOf(r);
  if (!s.serving) return b.kv_cache;
  return KvPoolBytes(s.engine, r.gpu, r.parallel, b.weights, b.Total() - b.weights - b.kv_cache,
                     b.kv_cache);
}

// The framework profile's figures: a serving engine's defaults on this card, the KV pool it
// sets aside, and whether the request's KV cache fits in it.
void AddFramework(const Request& r, Estimate* e) {
  if (r.framework == nullptr) return;  // no profile named: nothing of its own to report
  const StackProfile& f = *r.framework;
  FrameworkEstimate& fe = e->framework;
  fe.id = f.id;
  fe.name = f.name;
  e->explain["/framework/name"] = {std::string(f.name) + "'s documented defaults", {}, f.Sources()};
  if (!f.serving || r.workload.IsTraining()) return;
  const ServingDefaults d = DefaultsOn(f.engine, r.gpu, r.parallel);
  fe.max_batched_tokens = r.workload.prefill_chunk_limit;
  fe.max_seqs = d.max_seqs;
  const MemoryBreakdown& b = e->memory.per_gpu;
  fe.kv_pool_bytes = KvPool(r, b);
  fe.engine_bytes = b.Total() - b.kv_cache + fe.kv_pool_bytes;
  // What one sequence of the request's length takes (sliding-window layers hold at most the
  // window), and per token of that length.
  const double context = text::D(r.workload.prompt_tokens + r.workload.output_tokens);
  const double per_sequence = b.kv_cache / text::D(std::max<int64_t>(1, r.workload.concurrency));
  const double kv_token = per_sequence > 0 ? per_sequence / context : 0;
  if (kv_token > 0) {
    fe.kv_pool_tokens = std::floor(fe.kv_pool_bytes / kv_token);
    fe.kv_pool_sequences = std::floor(fe.kv_pool_bytes / per_sequence);
  }
  auto& x = e->explain;
  x["/framework/kv_pool_bytes"] = {
      f.engine.kv_budget == KvBudget::kShareOfCard
          ? "share x card memory - weights - everything else per GPU"
      : f.engine.kv_budget == KvBudget::kCardMinusReserve
          ? "card memory - reserve (activations, CUDA graphs) - weights"
      : f.engine.kv_budget == KvBudget::kShareOfFree
          ? "share x (card memory - weights - everything else)"
          : "the KV cache of the requested concurrency at prompt + output tokens",
      {{"share", f.engine.memory_fraction},
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
  if (e->infeasible.empty() && b.kv_cache > fe.kv_pool_bytes) {
    e->fits = false;
    e->infeasible.push_back(Note{"exceeds_engine_kv_pool",
                                 {{"need_bytes", b.kv_cache}, {"pool_bytes", fe.kv_pool_bytes}},
                                 std::string(f.name) + " sets aside " + Gib(fe.kv_pool_bytes) +
                                     " of KV cache per GPU on " + r.gpu.name +
                                     "; the requested concurrency needs " + Gib(b.kv_cache),
                                 "/workload/concurrency"});
  }
  if (d.max_seqs > 0 && r.workload.concurrency > d.max_seqs) {
    e->warnings.push_back(Note{"engine_max_seqs",
                               {{"max_seqs", text::D(d.max_seqs)}},
                               std::string(f.name) + " runs at most " + std::to_string(d.max_seqs) +
                                   " sequences at once on this card by default; the rest queue",
                               "/workload/concurrency"});
  }
}

}  // namespace gpuplan
