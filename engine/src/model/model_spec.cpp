// SPDX-License-Identifier: MIT
#include "model/model_spec.h"

#include <algorithm>

namespace gpuplan {

int64_t ModelSpec::QueryWidth() const {
  if (IsMla()) return heads * (mla.qk_nope_head_dim + mla.qk_rope_head_dim);
  return heads * head_dim;
}

int64_t ModelSpec::KeyWidth() const {
  if (IsMla()) return heads * (mla.qk_nope_head_dim + mla.qk_rope_head_dim);
  return kv_heads * head_dim;
}

int64_t ModelSpec::ValueWidth() const {
  if (IsMla()) return heads * mla.v_head_dim;
  return kv_heads * head_dim;
}

int64_t ModelSpec::AttnOutWidth() const {
  if (IsMla()) return heads * mla.v_head_dim;
  return heads * head_dim;
}

bool ModelSpec::IsMoeLayer(int64_t i) const {
  if (!IsMoe() || i < moe.first_dense_layers) return false;
  if (std::find(moe.dense_layers.begin(), moe.dense_layers.end(), i) != moe.dense_layers.end()) {
    return false;
  }
  const int64_t freq = std::max<int64_t>(1, moe.layer_freq);
  return (i + moe.layer_offset) % freq == 0;
}

namespace {

int64_t NormParams(const ModelSpec& m, int64_t width) {
  return m.norm == NormKind::kLayer ? 2 * width : width;
}

// The q and k norms' weights: Qwen3 and Gemma 3 share one head_dim-wide weight across the heads
// (transformers' Qwen3RMSNorm(head_dim)); OLMo 2 normalises the whole projection
// (Olmo2RMSNorm(num_heads * head_dim)) and Command R+ keeps one weight per head and channel
// (CohereLayerNorm((num_heads, head_dim))), both as wide as q and k; Llama 4's L2 norm has none.
int64_t QkNormParams(const ModelSpec& m) {
  if (!m.qk_norm) return 0;
  switch (m.qk_norm_weights) {
    case QkNormWeights::kPerHead:
      return 2 * m.head_dim;
    case QkNormWeights::kFullWidth:
      return m.QueryWidth() + m.KeyWidth();
    case QkNormWeights::kNone:
      return 0;
  }
  return 0;
}

// Attention weights. GQA/MQA shrink k and v to kv_heads; MLA replaces them with a compressed
// latent (DeepSeek-V2 paper, section 2.1.2: W_DKV, W_UK, W_UV and the decoupled RoPE key).
void CountAttention(const ModelSpec& m, LayerParams* p) {
  const int64_t h = m.hidden;
  if (m.IsMla()) {
    const MlaSpec& a = m.mla;
    const int64_t q_out = m.heads * (a.qk_nope_head_dim + a.qk_rope_head_dim);
    const int64_t q = a.q_lora_rank > 0 ? h * a.q_lora_rank + a.q_lora_rank * q_out : h * q_out;
    const int64_t kv_a = h * (a.kv_lora_rank + a.qk_rope_head_dim);
    const int64_t kv_b = a.kv_lora_rank * m.heads * (a.qk_nope_head_dim + a.v_head_dim);
    const int64_t o = m.AttnOutWidth() * h;
    p->attn_linear = q + kv_a + kv_b + o;
    p->attn_v = a.kv_lora_rank * m.heads * a.v_head_dim;
    p->attn_o = o;
    // q_a_layernorm and kv_a_layernorm are RMSNorms on the latents.
    p->attn_other = (a.q_lora_rank > 0 ? a.q_lora_rank : 0) + a.kv_lora_rank;
    return;
  }
  const int64_t q = m.QueryWidth();
  const int64_t kv = m.KeyWidth();
  p->attn_linear = h * q + 2 * h * kv + m.AttnOutWidth() * h;
  p->attn_v = h * kv;
  p->attn_o = m.AttnOutWidth() * h;
  // gpt-oss adds one sink logit per query head (GptOssAttention.sinks).
  p->attn_other = (m.qkv_bias ? q + 2 * kv : 0) + (m.o_bias ? h : 0) + QkNormParams(m) +
                  (m.attention_sinks ? m.heads : 0);
}

int64_t MlpMatrices(const ModelSpec& m, int64_t width) {
  return (m.mlp == MlpKind::kGated ? 3 : 2) * m.hidden * width;
}

int64_t MlpBias(const ModelSpec& m, int64_t width) {
  if (!m.mlp_bias) return 0;
  return (m.mlp == MlpKind::kGated ? 2 * width : width) + m.hidden;
}

LayerParams CountLayer(const ModelSpec& m, bool moe_layer) {
  LayerParams p;
  CountAttention(m, &p);
  p.norms = m.norms_per_layer * NormParams(m, m.hidden);
  if (!moe_layer) {
    p.mlp_linear = MlpMatrices(m, m.intermediate);
    p.mlp_down = m.hidden * m.intermediate;
    p.mlp_bias = MlpBias(m, m.intermediate);
    return p;
  }
  const MoeSpec& e = m.moe;
  p.expert_one = MlpMatrices(m, e.expert_intermediate);
  p.expert_linear = e.experts * p.expert_one;
  p.expert_down = e.experts * m.hidden * e.expert_intermediate;
  p.mlp_bias = e.experts * MlpBias(m, e.expert_intermediate);
  p.mlp_linear = e.shared_experts * MlpMatrices(m, e.shared_intermediate);
  p.mlp_down = e.shared_experts * m.hidden * e.shared_intermediate;
  p.router =
      m.hidden * e.experts + (e.router_bias ? e.experts : 0) + (e.shared_gate ? m.hidden : 0);
  return p;
}

int64_t LargestLinear(const ModelSpec& m) {
  const int64_t width =
      std::max({m.intermediate, m.moe.expert_intermediate, m.moe.shared_intermediate});
  return std::max({m.hidden * width, m.hidden * m.QueryWidth(), m.hidden * m.AttnOutWidth()});
}

}  // namespace

ParamCounts CountParams(const ModelSpec& m) {
  ParamCounts c;
  c.embedding = m.vocab * m.hidden + m.position_embeddings * m.hidden +
                (m.embedding_norm ? NormParams(m, m.hidden) : 0);
  c.lm_head = m.tied_embeddings ? 0 : m.vocab * m.hidden;
  c.final_norm = m.final_norm ? NormParams(m, m.hidden) : 0;
  if (m.IsMoe()) {
    for (int64_t i = 0; i < m.layers; ++i) {
      if (m.IsMoeLayer(i)) ++c.moe_layers;
    }
  }
  c.dense_layers = m.layers - c.moe_layers;  // a dense model's count without a loop
  c.dense_layer = CountLayer(m, false);
  if (m.IsMoe()) c.moe_layer = CountLayer(m, true);
  c.total = c.embedding + c.lm_head + c.final_norm + c.dense_layers * c.dense_layer.Total() +
            c.moe_layers * c.moe_layer.Total();
  const int64_t idle_experts = std::max<int64_t>(0, m.moe.experts - m.moe.experts_per_token);
  // An idle expert's biases (gpt-oss) idle with it.
  const int64_t idle_one =
      c.moe_layer.expert_one + (m.IsMoe() ? MlpBias(m, m.moe.expert_intermediate) : 0);
  c.active = c.total - c.moe_layers * idle_experts * idle_one;
  c.largest_linear = LargestLinear(m);
  return c;
}

}  // namespace gpuplan
