// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cmath>

#include "physics/stage.h"

namespace gpuplan {

double KvBytesPerTokenLayer(const Stage& s) {
  const ModelSpec& m = s.in.model;
  const double kv_b = BytesPerElement(s.in.precision.kv_cache);
  const ServingPolicy& engine = s.in.serving;
  // K and V may be cached in different types (llama.cpp --cache-type-k/-v).
  const double k_b = engine.k_bytes > 0 ? engine.k_bytes : kv_b;
  const double v_b = engine.v_bytes > 0 ? engine.v_bytes : kv_b;
  double per_token_layer = 0;
  if (m.IsMla()) {
    // MLA caches the compressed latent and the shared RoPE key, replicated on tp ranks.
    per_token_layer = D(m.mla.kv_lora_rank + m.mla.qk_rope_head_dim) * k_b;
  } else {
    // KV heads split over tp; beyond kv_heads each GPU keeps one replica.
    const double kv_heads_gpu = std::ceil(D(m.kv_heads) / D(s.in.parallel.tp));
    per_token_layer = kv_heads_gpu * D(m.head_dim) * (k_b + v_b);
  }
  // The KV cache of layers left on the CPU stays in host memory with them.
  return per_token_layer * s.gpu_layer_share;
}

double KvCacheBytes(const Stage& s, const Detail& d) {
  const ModelSpec& m = s.in.model;
  const Workload& w = s.in.workload;
  const StageLayers& l = s.layers;
  const ServingPolicy& engine = s.in.serving;
  const double per_token_layer = KvBytesPerTokenLayer(s);
  d.Record("kv_cache.bytes_per_token", per_token_layer * D(l.Count()));
  // Sliding-window layers keep only the window's tokens (vLLM's hybrid KV cache manager,
  // llama.cpp's SWA cache, transformers' HybridCache).
  const double local = D(m.LocalLayers(l.begin, l.end));
  if (engine.context_tokens > 0) {
    // One context for every sequence together, allocated at start (llama.cpp's n_ctx); a
    // sliding-window layer's cache holds the window per sequence.
    const double n_ctx = D(engine.context_tokens);
    const double window = std::min(n_ctx, D(m.sliding_window) * D(w.concurrency));
    return per_token_layer * ((D(l.Count()) - local) * n_ctx + local * window);
  }
  const double context = D(w.prompt_tokens + w.output_tokens);
  const double window = std::min(context, D(m.sliding_window));
  return per_token_layer * ((D(l.Count()) - local) * context + local * window) * D(w.concurrency);
}

}  // namespace gpuplan
