// SPDX-License-Identifier: MIT
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace gpuplan {

/// RMSNorm: weight only; LayerNorm: weight + bias; LayerNorm without a bias (Cohere): weight only.
enum class NormKind { kRms, kLayer, kLayerNoBias };
enum class MlpKind { kGated, kPlain };  ///< gated: gate/up/down (SwiGLU, GeGLU); plain: up/down
/// The weights of a q/k norm: one head_dim-wide weight shared by the heads (Qwen3, Gemma 3), one
/// per head and channel (OLMo 2 over the whole projection, Command R+ per head), or none (Llama
/// 4's L2 norm).
enum class QkNormWeights { kPerHead, kFullWidth, kNone };

/// Mixture-of-experts layout; experts == 0 means a dense model.
struct MoeSpec {
  int64_t experts = 0;              ///< routed experts per MoE layer
  int64_t experts_per_token = 0;    ///< routed experts each token visits (top-k)
  int64_t expert_intermediate = 0;  ///< intermediate width of one routed expert
  int64_t shared_experts = 0;       ///< always-on experts per MoE layer
  int64_t shared_intermediate = 0;  ///< intermediate width of one shared expert
  int64_t first_dense_layers = 0;   ///< leading layers with a dense MLP (DeepSeek first_k_dense)
  /// Layer i (at or after first_dense_layers) is MoE when (i + layer_offset) % layer_freq == 0:
  /// DeepSeek uses offset 0 (moe_layer_freq), Qwen-MoE offset 1 (decoder_sparse_step).
  int64_t layer_freq = 1;
  int64_t layer_offset = 0;
  std::vector<int64_t> dense_layers;  ///< layers forced dense (Qwen-MoE mlp_only_layers)
  bool router_bias = false;           ///< a per-expert bias in the router (DeepSeek-V3)
  bool shared_gate = false;           ///< a sigmoid gate on the shared expert (Qwen2-MoE)
};

/// Multi-head latent attention (DeepSeek-V2/V3); kv_lora_rank == 0 means not used.
struct MlaSpec {
  int64_t q_lora_rank = 0;  ///< 0: queries are projected directly
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;
};

/// A decoder-only transformer's architecture, enough to count parameters and size tensors.
struct ModelSpec {
  std::string name;
  std::string family;  ///< Hugging Face model_type, or "explicit"
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t intermediate = 0;  ///< dense MLP width
  int64_t heads = 0;         ///< query heads
  int64_t kv_heads = 0;      ///< key/value heads (1 = MQA, < heads = GQA)
  int64_t head_dim = 0;
  int64_t vocab = 0;
  bool tied_embeddings = false;
  MlpKind mlp = MlpKind::kGated;
  NormKind norm = NormKind::kRms;
  int64_t norms_per_layer = 2;  ///< Gemma 2 has 4; Falcon-7B's parallel block has 1
  bool qkv_bias = false;        ///< bias on q, k, v projections
  bool o_bias = false;          ///< bias on the attention output projection
  bool mlp_bias = false;        ///< bias on MLP projections
  bool qk_norm = false;         ///< a norm on q and k (Qwen3); its weights below
  QkNormWeights qk_norm_weights = QkNormWeights::kPerHead;
  bool attention_sinks = false;     ///< one learned sink logit per query head (gpt-oss)
  int64_t position_embeddings = 0;  ///< rows of a learned position table (GPT-2, OPT)
  bool embedding_norm = false;      ///< LayerNorm right after the embedding (BLOOM)
  bool final_norm = true;
  bool dropout = false;  ///< dropout active in training (Korthikanti's masks)
  MoeSpec moe;
  MlaSpec mla;
  int64_t max_context = 0;  ///< max_position_embeddings, 0 when unknown
  /// The KV cache type the checkpoint's quantisation config asks for ("fp8", "int8"; "" =
  /// none): precision.kv_cache's default.
  std::string checkpoint_kv_cache;
  /// The weights format a pasted config's quantization_config declares ("gptq_int4",
  /// "awq_int4", "autoround_int4", "mxfp4", "mxfp4_experts", "fp8_block128"; "" = none) and
  /// its group size (0 = the format's default): precision.weights' and group_size's defaults.
  std::string checkpoint_weights;
  int checkpoint_group_size = 0;
  /// A quantization_config the engine read but cannot model (e.g. 3-bit GPTQ), in words.
  std::string checkpoint_quant_unmodelled;
  int64_t sliding_window = 0;  ///< attention window of local layers, 0 when none
  /// With a window: layer i attends globally when (i + 1) % sliding_pattern == 0 (Gemma 2: 2,
  /// Gemma 3: 6, Llama 4: 4); 1 = every layer is local (Mistral v0.1).
  int64_t sliding_pattern = 1;
  /// Local layers attend within fixed chunks of sliding_window tokens rather than a window that
  /// slides (Llama 4's chunked attention): the cache is bounded alike, the attention work is not.
  bool local_chunked = false;
  int64_t declared_params = 0;  ///< a count the user or catalog stated, 0 when none

  bool IsMoe() const { return moe.experts > 0; }
  /// Layers in [begin, end) that attend within the sliding window.
  int64_t LocalLayers(int64_t begin, int64_t end) const {
    if (sliding_window <= 0 || end <= begin) return 0;
    if (sliding_pattern <= 1) return end - begin;
    return (end - begin) - (end / sliding_pattern - begin / sliding_pattern);
  }
  /// Per token of a `length`-long sequence processed causally, the positions one local layer
  /// attends to, counted as full attention counts them (`length` for every token, the
  /// convention of llm-foundry's MFU): a sliding window's causal sum 2 w L - w^2 over L; chunks of
  /// w tokens, each causal within itself, (q w^2 + r^2) / L for q whole chunks and r left over.
  double LocalAttended(double length) const {
    const double w = static_cast<double>(sliding_window);
    if (length <= w) return length;
    if (local_chunked) {
      const double q = std::floor(length / w);
      const double r = length - q * w;
      return (q * w * w + r * r) / length;
    }
    return 2 * w - w * w / length;
  }
  /// Per layer and token, the positions attended to when a whole `length`-long sequence is
  /// processed causally, in the same convention, averaged over the layers.
  double CausalAttended(double length) const {
    if (layers <= 0 || length <= 0) return length;
    const double local = static_cast<double>(LocalLayers(0, layers));
    return ((static_cast<double>(layers) - local) * length + local * LocalAttended(length)) /
           static_cast<double>(layers);
  }
  /// Per layer, the tokens of a `context`-long sequence attended to, averaged over the layers:
  /// local layers see at most the window (a chunked layer sees its current chunk, between one
  /// token and the chunk: the chunk is the bound used).
  double AttendedContext(double context) const {
    if (layers <= 0) return context;
    const double local = static_cast<double>(LocalLayers(0, layers));
    const double window = context < static_cast<double>(sliding_window)
                              ? context
                              : static_cast<double>(sliding_window);
    return ((static_cast<double>(layers) - local) * context + local * window) /
           static_cast<double>(layers);
  }
  bool IsMla() const { return mla.kv_lora_rank > 0; }
  /// Width of all query heads together (heads x head_dim; MLA: heads x (nope + rope)).
  int64_t QueryWidth() const;
  /// Width of all key heads together (kv_heads x head_dim; MLA: heads x (nope + rope)).
  int64_t KeyWidth() const;
  /// Width of all value heads together (kv_heads x head_dim; MLA: heads x v_head_dim).
  int64_t ValueWidth() const;
  /// Width of the attention output, the input of o_proj (heads x head_dim; MLA: heads x v).
  int64_t AttnOutWidth() const;
  /// Whether layer i (0-based) has a routed-expert MLP.
  bool IsMoeLayer(int64_t i) const;
};

/// Parameters of one transformer layer, split by the tensors that are stored differently.
struct LayerParams {
  int64_t attn_linear = 0;  ///< q/k/v/o (MLA: q_a, q_b, kv_a, kv_b, o) weight matrices
  int64_t attn_v = 0;       ///< the part of attn_linear that is the value projection
  int64_t attn_o = 0;       ///< the part of attn_linear that is the output projection
  int64_t attn_other = 0;   ///< attention biases and MLA's latent norms
  int64_t mlp_linear = 0;   ///< dense MLP (or shared experts) weight matrices
  int64_t mlp_down = 0;     ///< the down projection's share of mlp_linear
  int64_t mlp_bias = 0;
  int64_t expert_linear = 0;  ///< all routed experts' weight matrices
  int64_t expert_one = 0;     ///< one routed expert's weight matrices
  int64_t expert_down = 0;    ///< the down projections' share of expert_linear
  int64_t router = 0;         ///< router weights and biases, shared-expert gate
  int64_t norms = 0;          ///< norm weights (and LayerNorm biases)

  /// Every parameter of the layer.
  int64_t Total() const {
    return attn_linear + attn_other + mlp_linear + mlp_bias + expert_linear + router + norms;
  }
  /// Parameters not kept in 16 bits by quantised formats: the linear weight matrices.
  int64_t Linear() const { return attn_linear + mlp_linear + expert_linear; }
};

/// Exact parameter counts derived from a ModelSpec.
struct ParamCounts {
  int64_t embedding = 0;  ///< token table, learned positions, embedding norm
  int64_t lm_head = 0;    ///< 0 when tied to the embedding
  int64_t final_norm = 0;
  int64_t dense_layers = 0;
  int64_t moe_layers = 0;
  LayerParams dense_layer;  ///< one layer with a dense MLP
  LayerParams moe_layer;    ///< one layer with routed experts
  int64_t total = 0;
  int64_t active = 0;          ///< parameters one token uses (MoE: k routed + shared experts)
  int64_t largest_linear = 0;  ///< biggest weight matrix of a layer (embeddings excluded)
};

/// Counts every parameter: embeddings, attention (MHA/GQA/MQA/MLA), gated or plain MLP, norms,
/// biases, tied embeddings, MoE total vs active.
ParamCounts CountParams(const ModelSpec& m);

}  // namespace gpuplan
