// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cmath>

#include "physics/stage.h"

namespace gpuplan {

double KvCacheBytes(const Stage& s, const Detail& d) {
  const ModelSpec& m = s.in.model;
  const Workload& w = s.in.workload;
  const StageLayers& l = s.layers;
  const double kv_b = BytesPerElement(s.in.precision.kv_cache);
  double per_token_layer = 0;
  if (m.IsMla()) {
    // MLA caches the compressed latent and the shared RoPE key, replicated on tp ranks.
    per_token_layer = D(m.mla.kv_lora_rank + m.mla.qk_rope_head_dim) * kv_b;
  } else {
    // KV heads split over tp; beyond kv_heads each GPU keeps one replica.
    const double kv_heads_gpu = std::ceil(D(m.kv_heads) / D(s.in.parallel.tp));
    per_token_layer = 2 * kv_heads_gpu * D(m.head_dim) * kv_b;
  }
  d.Record("kv_cache.bytes_per_token", per_token_layer * D(l.Count()));
  // Sliding-window layers keep only the window's tokens (vLLM's hybrid KV cache manager,
  // llama.cpp's SWA cache, transformers' HybridCache).
  const double context = D(w.prompt_tokens + w.output_tokens);
  const double local = D(m.LocalLayers(l.begin, l.end));
  const double window = std::min(context, D(m.sliding_window));
  return per_token_layer * ((D(l.Count()) - local) * context + local * window) * D(w.concurrency);
}

}  // namespace gpuplan
