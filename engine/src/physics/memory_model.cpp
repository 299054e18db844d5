// SPDX-License-Identifier: MIT
// Memory per GPU. Each term cites where its byte count comes from; the sum is what the
// caching allocator would hold at the step's peak, plus the runtime the allocator never sees.
#include "physics/memory_model.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/units.h"
#include "model/gguf.h"

namespace gpuplan {
namespace {

double D(int64_t v) { return static_cast<double>(v); }

/// Layers of each kind held by one pipeline stage.
struct StageLayers {
  int64_t dense = 0;
  int64_t moe = 0;
  int64_t begin = 0;  ///< index of the stage's first layer
  int64_t end = 0;    ///< one past its last layer
  bool first = true;
  bool last = true;
  int64_t Count() const { return dense + moe; }
};

StageLayers LayersOfStage(const ModelSpec& m, int64_t pp, int64_t stage) {
  StageLayers s;
  const int64_t per_stage = (m.layers + pp - 1) / pp;
  const int64_t begin = stage * per_stage;
  const int64_t end = std::min(m.layers, begin + per_stage);
  s.begin = begin;
  s.end = end;
  if (!m.IsMoe()) {
    s.dense = std::max<int64_t>(0, end - begin);  // the planner's hot path: no loop
    s.first = stage == 0;
    s.last = stage == pp - 1;
    return s;
  }
  for (int64_t i = begin; i < end; ++i) {
    if (m.IsMoeLayer(i)) {
      ++s.moe;
    } else {
      ++s.dense;
    }
  }
  s.first = stage == 0;
  s.last = stage == pp - 1;
  return s;
}

/// Parameter counts one GPU holds before any ZeRO sharding, split by how they are stored.
struct GpuParams {
  double linear = 0;     ///< non-expert weight matrices, already divided by tp
  double expert = 0;     ///< routed-expert matrices on this GPU (divided by ep and tp)
  double other = 0;      ///< norms, biases, routers: replicated, kept in 16/32 bits
  double embedding = 0;  ///< token table rows on this GPU
  double lm_head = 0;
  double Total() const { return linear + expert + other + embedding + lm_head; }
};

GpuParams ParamsOnGpu(const ModelSpec& m, const ParamCounts& c, const Parallel& p,
                      const StageLayers& s) {
  GpuParams g;
  const double tp = D(p.tp);
  const auto add_layer = [&](const LayerParams& l, int64_t n) {
    const double count = D(n);
    const double linear = D(l.attn_linear + l.mlp_linear) / tp;
    g.linear += count * linear;
    g.expert += count * D(l.expert_linear) / D(p.ep) / tp;
    g.other += count * D(l.attn_other + l.mlp_bias + l.router + l.norms);
  };
  add_layer(c.dense_layer, s.dense);
  add_layer(c.moe_layer, s.moe);
  if (s.first) {
    g.embedding = D(m.vocab * m.hidden) / tp;
    g.other += D(c.embedding - m.vocab * m.hidden);
  }
  if (s.last) {
    g.other += D(c.final_norm);
    // A tied head is the embedding itself on a single stage; a later stage needs its own copy.
    if (!m.tied_embeddings || !s.first) g.lm_head = D(m.vocab * m.hidden) / tp;
  }
  return g;
}

double OptimizerStateBytes(Optimizer o, int64_t hidden) {
  switch (o) {
    case Optimizer::kAdam:
    case Optimizer::kAdamW:
      return 8;  // two fp32 moments (ZeRO paper, section 3: K = 12 with the master copy)
    case Optimizer::kAdamW8bit:
    case Optimizer::kPagedAdamW8bit:
      // bitsandbytes 8-bit Adam: two uint8 moments plus one fp32 absmax per block of 2048
      // per moment (Dettmers et al. 2022, "8-bit Optimizers via Block-wise Quantization").
      return 2 + 2 * 4.0 / 2048;
    case Optimizer::kSgd:
      return 0;
    case Optimizer::kSgdMomentum:
    case Optimizer::kLion:
      return 4;  // one fp32 momentum buffer
    case Optimizer::kAdafactor:
      // Factored second moment (Shazeer & Stern 2018): rows + cols fp32 values per r x c
      // matrix, i.e. 4 * (1/r + 1/c) bytes per weight; with both sides about `hidden` wide that
      // is 8/hidden. No first moment (beta1 = None, the paper's and HF's default).
      return 8.0 / D(std::max<int64_t>(1, hidden));
  }
  return 8;
}

struct ActivationTerms {
  double replicated = 0;   ///< bytes per token per layer not split by tp (unless SP)
  double sharded = 0;      ///< bytes per token per layer split by tp
  double quadratic = 0;    ///< bytes per token per layer per context token (no flash attention)
  double flash_stats = 0;  ///< flash attention's fp32 logsumexp per token (split by tp)
};

// Saved-for-backward tensors of one transformer layer, per token, following Korthikanti et al.
// 2022 ("Reducing Activation Recomputation in Large Transformer Models", section 4.1), who
// count s*b*h*(34 + 5*a*s/h) bytes for a GPT layer with dropout in 16-bit. Their terms, each
// generalised: norm inputs 2h each; the QKV input 2h; Q and K 4h (here q and k widths, so GQA
// and MLA shrink them); V 2h; the softmax output 2as (plus dropout mask as and output 2as);
// the output projection input 2h; MLP input 2h; GeLU input 8h and output 8h (here the
// intermediate width, and four tensors for a gated MLP: gate, up, act(gate), product); one
// dropout mask h after attention and one after the MLP.
ActivationTerms LayerActivationTerms(const ModelSpec& m, bool moe_layer, double a) {
  ActivationTerms t;
  const double h = D(m.hidden);
  t.replicated += a * h * D(m.norms_per_layer);  // norm inputs
  t.replicated += a * h;                         // QKV projection input (norm output)
  t.replicated += a * h;                         // MLP input (norm output)
  if (m.dropout) t.replicated += 2 * h;          // two 1-byte dropout masks
  if (m.IsMla()) {
    // Latents feeding the up-projections: c_kv (+ rope key) and c_q.
    t.replicated += a * D(m.mla.kv_lora_rank + m.mla.qk_rope_head_dim + m.mla.q_lora_rank);
  }
  t.sharded += a * D(m.QueryWidth() + m.KeyWidth() + m.ValueWidth());  // q, k, v
  t.sharded += a * D(m.AttnOutWidth());  // attention output = output projection input
  t.flash_stats = 4 * D(m.heads);        // flash attention keeps an fp32 logsumexp per head
  if (m.qk_norm) t.sharded += a * D(m.QueryWidth() + m.KeyWidth());
  // Softmax output per context position, plus mask and dropout output with dropout.
  t.quadratic = D(m.heads) * (a + (m.dropout ? 1 + a : 0));
  const double mlp_tensors = m.mlp == MlpKind::kGated ? 4 : 2;
  if (!moe_layer) {
    t.sharded += a * mlp_tensors * D(m.intermediate);
    return t;
  }
  const MoeSpec& e = m.moe;
  // Each token is copied to k experts (the permuted expert input) and runs k expert MLPs.
  const double k = D(e.experts_per_token);
  t.sharded += k * (a * h + a * mlp_tensors * D(e.expert_intermediate));
  t.sharded += D(e.shared_experts) * a * mlp_tensors * D(e.shared_intermediate);
  t.replicated += 4 * D(e.experts);  // fp32 router probabilities
  return t;
}

// Bytes per token of one layer. Without flash attention the softmax output is kept unless
// `quadratic` is false (selective recomputation drops it); with flash only the logsumexp is.
double PerTokenLayerBytes(const ActivationTerms& t, const Parallel& p, bool flash, bool quadratic,
                          double context) {
  const double rep_div = p.sequence_parallel ? D(p.tp) : 1;
  double bytes = t.replicated / rep_div + t.sharded / D(p.tp);
  if (flash) bytes += t.flash_stats / D(p.tp);
  if (!flash && quadratic) bytes += t.quadratic * context / D(p.tp);
  return bytes;
}

}  // namespace

int64_t LoraParams(const ModelSpec& m, const LoraTargets& t, int64_t rank) {
  const int64_t h = m.hidden;
  int64_t per_layer_dense = 0;
  int64_t per_layer_moe = 0;
  // A LoRA pair on a d_in x d_out weight adds rank * (d_in + d_out) parameters.
  const auto pair = [rank](int64_t in, int64_t out) { return rank * (in + out); };
  int64_t attn = 0;
  if (m.IsMla()) {
    const MlaSpec& a = m.mla;
    const int64_t q_out = m.QueryWidth();
    if (t.q)
      attn +=
          a.q_lora_rank > 0 ? pair(h, a.q_lora_rank) + pair(a.q_lora_rank, q_out) : pair(h, q_out);
    if (t.k || t.v) {
      attn += pair(h, a.kv_lora_rank + a.qk_rope_head_dim) +
              pair(a.kv_lora_rank, m.heads * (a.qk_nope_head_dim + a.v_head_dim));
    }
  } else {
    if (t.q) attn += pair(h, m.QueryWidth());
    if (t.k) attn += pair(h, m.KeyWidth());
    if (t.v) attn += pair(h, m.ValueWidth());
  }
  if (t.o) attn += pair(m.AttnOutWidth(), h);
  const auto mlp = [&](int64_t width) {
    int64_t n = 0;
    if (t.gate && m.mlp == MlpKind::kGated) n += pair(h, width);
    if (t.up) n += pair(h, width);
    if (t.down) n += pair(width, h);
    return n;
  };
  per_layer_dense = attn + mlp(m.intermediate);
  if (m.IsMoe()) {
    per_layer_moe = attn + m.moe.shared_experts * mlp(m.moe.shared_intermediate) +
                    (t.experts ? m.moe.experts * mlp(m.moe.expert_intermediate) : 0);
  }
  int64_t total = 0;
  for (int64_t i = 0; i < m.layers; ++i) {
    total += m.IsMoeLayer(i) ? per_layer_moe : per_layer_dense;
  }
  if (t.lm_head) total += pair(h, m.vocab);
  return total;
}

namespace {

// Memory of one pipeline stage. Each method adds one group of the breakdown and its detail.
class StageEstimator {
 public:
  StageEstimator(const MemoryInput& in, int64_t stage)
      : in_(in),
        m_(in.model),
        w_(in.workload),
        p_(in.parallel),
        prec_(in.precision),
        tech_(in.techniques),
        s_(LayersOfStage(m_, p_.pp, stage)),
        g_(ParamsOnGpu(m_, in.params, p_, s_)),
        bits_(Bits(prec_.weights, prec_.quant)),
        fp32_model_(prec_.weights == WeightFormat::kFp32 || prec_.weights == WeightFormat::kTf32),
        full_training_(w_.kind == WorkloadKind::kPretrain ||
                       w_.kind == WorkloadKind::kFullFinetune),
        act_bytes_(fp32_model_ ? 4 : 2),
        shard_(D(std::max<int64_t>(1, p_.ShardGroup()))) {
    r_.stage = stage;
    // Training keeps 16-bit weights for fp8 compute (Transformer Engine casts per step).
    linear_bits_ =
        (full_training_ && prec_.weights == WeightFormat::kFp8) ? 16 : bits_.bits_per_weight;
    emb_bits_ = bits_.embeddings_16bit ? (fp32_model_ ? 32 : 16) : bits_.embedding_bits;
    // A GGUF file without output.weight quantises token_embd with the output's type.
    if (IsGguf(prec_.weights) && m_.tied_embeddings) emb_bits_ = bits_.lm_head_bits;
    // torchtune's QLoRA stores the output projection in NF4 too (FrozenNF4Linear);
    // bitsandbytes and PEFT keep it in 16 bits: precision.quantize_lm_head chooses.
    const bool quantised_head = prec_.quantize_lm_head && !IsFloatTrainable(prec_.weights);
    head_bits_ =
        bits_.embeddings_16bit ? (quantised_head ? linear_bits_ : emb_bits_) : bits_.lm_head_bits;
  }

  MemoryResult Run() {
    Weights();
    if (w_.IsTraining()) {
      TrainingState();
      Offload();
      TrainingBuffers();
      TrainingActivations();
    } else {
      KvCache();
      InferenceActivations();
    }
    Runtime();
    return std::move(r_);
  }

 private:
  void Weights() {
    const bool gguf = IsGguf(prec_.weights);
    // Norms and biases: fp32 in GGUF files and fp32 models, else the 16-bit compute type.
    const double other_bytes = (fp32_model_ || gguf) ? 4 : 2;
    const double linear = gguf ? GgufLinearBytes() : (g_.linear + g_.expert) * linear_bits_ / 8;
    const double embedding = g_.embedding * emb_bits_ / 8 + g_.lm_head * head_bits_ / 8;
    const double other = g_.other * other_bytes;
    Record("weights.linear", linear);
    Record("weights.embedding_and_head", embedding);
    Record("weights.norms_biases_routers", other);
    weights_ = linear + embedding + other;
  }

  // GGUF mixtures pick a type per tensor and layer (llama.cpp's llama_tensor_get_type).
  double GgufLinearBytes() const {
    const ParamCounts& c = in_.params;
    const GgufModel gm{m_.layers, m_.kv_heads > 0 && m_.heads / m_.kv_heads >= 4,
                       m_.layers == 80 && !m_.IsMoe()};
    const WeightFormat f = prec_.weights;
    double bits = 0;
    for (int64_t i = s_.begin; i < s_.end; ++i) {
      const LayerParams& l = m_.IsMoeLayer(i) ? c.moe_layer : c.dense_layer;
      const auto t = [&](GgufTensor kind) { return GgufBits(f, kind, i, gm); };
      const double qk = D(l.attn_linear - l.attn_v - l.attn_o);
      const double experts_down = D(l.expert_down) / D(p_.ep);
      const double experts_rest = D(l.expert_linear - l.expert_down) / D(p_.ep);
      bits += qk * t(GgufTensor::kAttnQK) + D(l.attn_v) * t(GgufTensor::kAttnV) +
              D(l.attn_o) * t(GgufTensor::kAttnOut) +
              (D(l.mlp_linear - l.mlp_down) + experts_rest) * t(GgufTensor::kFfnUpGate) +
              (D(l.mlp_down) + experts_down) * t(GgufTensor::kFfnDown);
    }
    return bits / D(p_.tp) / 8;
  }

  // ZeRO and FSDP shard over data x context parallel ranks; routed experts over what is left of
  // that group once expert parallelism has taken its share.
  double Sharded(double bytes_per_param) const {
    const double expert_shard = std::max(1.0, shard_ / D(p_.ep));
    return (g_.Total() - g_.expert) * bytes_per_param / shard_ +
           g_.expert * bytes_per_param / expert_shard;
  }

  void TrainingState() {
    const double opt_bytes = OptimizerStateBytes(in_.optimizer, m_.hidden);
    if (full_training_) {
      // Megatron accumulates 16-bit training's gradients in fp32 (main_grad).
      const bool fp32_grads =
          fp32_model_ || (in_.framework != nullptr && in_.framework->fp32_gradients);
      const double grad_b = fp32_grads ? 4 : 2;
      const double master_b = (!fp32_model_ && prec_.master == MasterWeights::kFp32) ? 4 : 0;
      if (p_.zero >= 3) weights_ = Sharded(weights_ / std::max(1.0, g_.Total()));
      gradients_ = p_.zero >= 2 ? Sharded(grad_b) : g_.Total() * grad_b;
      master_ = p_.zero >= 1 ? Sharded(master_b) : g_.Total() * master_b;
      moments_ = p_.zero >= 1 ? Sharded(opt_bytes) : g_.Total() * opt_bytes;
      if (tech_.optimizer_in_backward) {
        // Each parameter is stepped as soon as its gradient is ready, so only about one
        // tensor's gradient is alive at a time (torchtune optimizer_in_bwd): the largest.
        const double largest =
            std::max({D(in_.params.largest_linear) / D(p_.tp), g_.embedding, g_.lm_head});
        gradients_ = largest * grad_b;
      }
      return;
    }
    // LoRA / QLoRA: the base is frozen; only the adapters train.
    const double adapters = D(LoraParams(m_, w_.lora_targets, w_.lora_rank)) *
                            (D(s_.Count()) / D(m_.layers)) / D(p_.tp);
    const double adapter_b = prec_.adapters_fp32 ? 4 : 2;
    const double master_b = prec_.adapters_fp32 || prec_.master == MasterWeights::kNone ? 0 : 4;
    Record("weights.lora_adapters", adapters * adapter_b);
    Record("lora_adapter_params_per_gpu", adapters);
    if (p_.zero >= 3) weights_ /= shard_;
    weights_ += adapters * adapter_b;
    gradients_ = adapters * adapter_b / (p_.zero >= 2 ? shard_ : 1);
    master_ = adapters * master_b / (p_.zero >= 1 ? shard_ : 1);
    moments_ = adapters * opt_bytes / (p_.zero >= 1 ? shard_ : 1);
  }

  void Offload() {
    const bool paged = in_.optimizer == Optimizer::kPagedAdamW8bit;
    if (paged || tech_.offload_optimizer || tech_.offload_params) {
      // Paged 8-bit Adam lives in CUDA unified memory that bitsandbytes evicts to host RAM
      // under pressure, outside PyTorch's allocator; offloaded states live in host RAM.
      offloaded_ += moments_ + master_;
      moments_ = master_ = 0;
    }
    if (tech_.offload_params) {
      offloaded_ += weights_ + gradients_;
      weights_ = gradients_ = 0;
    }
  }

  void AddBuffer(const char* key, double bytes) {
    Record(key, bytes);
    buffers_ += bytes;
  }

  // Sub-items for explain and the result's memory.detail; skipped on the planner's hot path.
  void Record(const char* key, double bytes) {
    if (in_.with_detail) r_.detail[key] = bytes;
  }

  void TrainingBuffers() {
    // Units all-gathered for compute under ZeRO-3/FSDP or parameter offload: the layer being
    // computed and the one prefetched (FSDP's default forward/backward prefetch), plus the
    // root unit (embedding, head, final norm), which stays gathered through the step.
    // The largest layer this stage holds, split over tp (norms and routers are replicated).
    const auto unit_params = [&](const LayerParams& l) {
      return D(l.attn_linear + l.mlp_linear) / D(p_.tp) + D(l.expert_linear) / D(p_.ep * p_.tp) +
             D(l.attn_other + l.mlp_bias + l.router + l.norms);
    };
    const double per_layer_params =
        std::max(s_.dense > 0 ? unit_params(in_.params.dense_layer) : 0.0,
                 s_.moe > 0 ? unit_params(in_.params.moe_layer) : 0.0);
    const double gathered_bits = full_training_ ? (fp32_model_ ? 32 : 16) : linear_bits_;
    if ((p_.zero >= 3 && shard_ > 1) || tech_.offload_params) {
      const double layer_unit = per_layer_params * gathered_bits / 8;
      const double root_unit = g_.embedding * emb_bits_ / 8 + g_.lm_head * head_bits_ / 8;
      // What is gathered ahead of the unit in use: the next unit (FSDP), or DeepSpeed's
      // prefetch bucket when that is larger (small layers).
      const double prefetch = std::max(
          layer_unit, (in_.framework != nullptr ? in_.framework->zero3_prefetch_elements : 0) *
                          gathered_bits / 8);
      AddBuffer("buffers.gathered_units", layer_unit + prefetch + root_unit);
      if (tech_.offload_params && full_training_) {
        // One layer's gradients wait on the GPU for their reduce-scatter and copy to host.
        AddBuffer("buffers.unit_gradients", per_layer_params * (fp32_model_ ? 4 : 2));
      }
    }
    // Quantised frozen bases are dequantised to 16 bits one linear at a time for the matmul.
    if (!IsFloatTrainable(prec_.weights)) {
      AddBuffer("buffers.dequantised_weight", D(in_.params.largest_linear) / D(p_.tp) * 2);
    }
    // Data-parallel gradient buckets. Plain DDP (ZeRO 0) keeps a flat copy of every gradient
    // for its all-reduce: PyTorch's docs for gradient_as_bucket_view (default False) put the
    // saving of turning it on at "the total gradients size". Sharded stages reduce-scatter
    // through buckets of bucket_cap_mb = 25 MiB, two in flight.
    const bool own_buffer = in_.framework != nullptr && in_.framework->grad_buffer;
    if (p_.Dp() > 1 && p_.zero == 0 && !own_buffer) {
      AddBuffer("buffers.gradient_buckets", gradients_);
    }
    if (p_.Dp() > 1 && (p_.zero == 1 || p_.zero == 2)) {
      const double ds = in_.framework != nullptr ? in_.framework->reduce_bucket_elements : 0;
      // DeepSpeed allocates its contiguous bucket whole, in the 16-bit training dtype.
      AddBuffer("buffers.gradient_buckets",
                ds > 0 ? ds * (fp32_model_ ? 4 : 2) : 2 * 25.0 * 1024 * 1024);
    }
  }

  void TrainingActivations() {
    const double a = act_bytes_;
    const double tokens = D(w_.micro_batch) * D(w_.seq_len) / D(p_.cp);
    const double context = D(w_.seq_len);
    const bool flash = tech_.flash_attention;
    const bool keep_scores = tech_.recompute == Recompute::kNone;
    const ActivationTerms dense_t = LayerActivationTerms(m_, false, a);
    const ActivationTerms moe_t = LayerActivationTerms(m_, true, a);
    const auto layer = [&](const ActivationTerms& t, bool scores) {
      return tokens * PerTokenLayerBytes(t, p_, flash, scores, context);
    };
    // LoRA keeps x @ A (rank wide) for each adapted linear.
    double lora_extra = 0;
    if (w_.IsPeft()) {
      const LoraTargets& t = w_.lora_targets;
      int n = 0;
      for (bool on : {t.q, t.k, t.v, t.o, t.gate, t.up, t.down}) n += on ? 1 : 0;
      lora_extra = tokens * a * D(w_.lora_rank) * n;
    }
    double stored = 0;
    double working = 0;
    if (tech_.recompute == Recompute::kFull) {
      // Only each layer's input is kept (2sbh per layer; SP splits it over tp); the layer being
      // recomputed in backward holds its full set once.
      const double rep_div = p_.sequence_parallel ? D(p_.tp) : 1;
      stored = D(s_.Count()) * tokens * a * D(m_.hidden) / rep_div;
      working =
          std::max(s_.dense > 0 ? layer(dense_t, true) : 0, s_.moe > 0 ? layer(moe_t, true) : 0) +
          lora_extra;
    } else {
      stored = D(s_.dense) * layer(dense_t, keep_scores) + D(s_.moe) * layer(moe_t, keep_scores) +
               D(s_.Count()) * lora_extra;
      if (tech_.recompute == Recompute::kSelective && !flash) {
        // Selective recomputation re-runs the attention core, whose s^2 softmax output is then
        // alive for one layer only.
        working = tokens * D(m_.heads) * context * a / D(p_.tp);
      }
    }
    // 1F1B: stage i holds pp - i micro-batches in flight (Narayanan et al. 2021), capped by how
    // many micro-batches a step has.
    const int64_t in_flight = std::min(p_.pp - r_.stage, std::max<int64_t>(1, w_.grad_accum));
    stored *= D(in_flight);
    if (tech_.offload_activations) {
      offloaded_ += stored;
      Record("activations.offloaded_to_host", stored);
      stored = 0;
    }
    Record("activations.layers", stored);
    Record("activations.recompute_working_set", working);
    activations_ = stored + working;
    if (!s_.last) return;
    // Logits and loss: b*s*V/tp logits in the compute type, upcast to fp32 for the loss, plus
    // fp32 log-probabilities kept for backward; a chunked loss upcasts one chunk at a time.
    // Also the final norm's input and lm_head's input.
    const double vocab_tokens = tokens * D(m_.vocab) / D(p_.tp);
    const double upcast = fp32_model_ ? 4 : 8;
    const double per = tech_.chunked_loss ? a + upcast / D(std::max<int64_t>(1, tech_.loss_chunks))
                                          : (fp32_model_ ? 0 : a) + upcast;
    const double logits = vocab_tokens * per + tokens * 2 * a * D(m_.hidden);
    Record("activations.logits_and_loss", logits);
    activations_ += logits;
  }

  void KvCache() {
    const double kv_b = BytesPerElement(prec_.kv_cache);
    double per_token_layer = 0;
    if (m_.IsMla()) {
      // MLA caches the compressed latent and the shared RoPE key, replicated on tp ranks.
      per_token_layer = D(m_.mla.kv_lora_rank + m_.mla.qk_rope_head_dim) * kv_b;
    } else {
      // KV heads split over tp; beyond kv_heads each GPU keeps one replica.
      const double kv_heads_gpu = std::ceil(D(m_.kv_heads) / D(p_.tp));
      per_token_layer = 2 * kv_heads_gpu * D(m_.head_dim) * kv_b;
    }
    const double per_token = per_token_layer * D(s_.Count());
    Record("kv_cache.bytes_per_token", per_token);
    // Sliding-window layers keep only the window's tokens (vLLM's hybrid KV cache manager,
    // llama.cpp's SWA cache, transformers' HybridCache).
    const double context = D(w_.prompt_tokens + w_.output_tokens);
    const double local = D(m_.LocalLayers(s_.begin, s_.end));
    const double window = std::min(context, D(m_.sliding_window));
    kv_ =
        per_token_layer * ((D(s_.Count()) - local) * context + local * window) * D(w_.concurrency);
  }

  void InferenceActivations() {
    const double a = act_bytes_;
    const double tp = D(p_.tp);
    const double mlp_width =
        std::max(D(m_.intermediate), D(m_.moe.experts_per_token * m_.moe.expert_intermediate +
                                       m_.moe.shared_experts * m_.moe.shared_intermediate));
    // Per prefilled token: the residual stream and norm output, then the wider of the MLP's
    // intermediates (gate, up, act) and attention's q, k, v and output, plus without flash
    // attention the score matrix in the compute type and its fp32 softmax.
    const double mlp = a * (m_.mlp == MlpKind::kGated ? 3 : 2) * mlp_width / tp;
    double attn = a * D(m_.QueryWidth() + m_.KeyWidth() + m_.ValueWidth() + m_.AttnOutWidth()) / tp;
    if (!tech_.flash_attention) attn += D(m_.heads) / tp * D(w_.prompt_tokens) * (a + 4);
    const double working =
        D(w_.prefill_chunk_tokens) * (2 * a * D(m_.hidden) + std::max(mlp, attn));
    // Sampling reads the last position's logits, in fp32, for every sequence.
    const double logits = s_.last ? D(w_.concurrency) * D(m_.vocab) / tp * 4 : 0;
    Record("activations.prefill_working_set", working);
    Record("activations.logits", logits);
    activations_ = working + logits;
  }

  void Runtime() {
    MemoryBreakdown& b = r_.per_gpu;
    b.weights = weights_;
    b.gradients = gradients_;
    b.optimizer_states = moments_ + master_;
    // Weights, gradients, optimizer states and KV cache are exact counts; a measured peak
    // corrects only the parts that are modelled (calibration.h).
    b.activations = activations_ * in_.modelled_scale;
    b.kv_cache = kv_;
    b.buffers = buffers_ * in_.modelled_scale;
    Record("optimizer_states.master_weights", master_);
    Record("optimizer_states.moments", moments_);
    const RuntimeOptions& rt = in_.runtime;
    const double reserve = rt.reserve_bytes >= 0 ? rt.reserve_bytes : in_.gpu.runtime_reserve_bytes;
    const double comm =
        p_.gpus > 1 ? (rt.comm_reserve_bytes >= 0 ? rt.comm_reserve_bytes : 0.5 * kGiB) : 0;
    const double slack = rt.allocator_slack * b.Allocated();
    // A serving engine's CUDA graphs (vLLM) live outside PyTorch's allocator.
    const double graphs = in_.framework != nullptr && in_.framework->serving && !w_.IsTraining()
                              ? in_.framework->graph_bytes
                              : 0;
    b.runtime = reserve + comm + slack + graphs;
    if (graphs > 0) Record("runtime.cuda_graphs", graphs);
    Record("runtime.reserve", reserve);
    Record("runtime.communicators", comm);
    Record("runtime.allocator_slack", slack);
    r_.offloaded_bytes_per_gpu = offloaded_;
  }

  const MemoryInput& in_;
  const ModelSpec& m_;
  const Workload& w_;
  const Parallel& p_;
  const Precision& prec_;
  const MemoryTechniques& tech_;
  const StageLayers s_;
  const GpuParams g_;
  const FormatBits bits_;
  const bool fp32_model_;
  const bool full_training_;
  const double act_bytes_;  ///< bytes of one saved activation element (bf16 2, fp32 4)
  const double shard_;      ///< ranks ZeRO shards over
  double linear_bits_ = 16;
  double emb_bits_ = 16;
  double head_bits_ = 16;
  double weights_ = 0, gradients_ = 0, master_ = 0, moments_ = 0;
  double activations_ = 0, kv_ = 0, buffers_ = 0, offloaded_ = 0;
  MemoryResult r_;
};

}  // namespace

MemoryResult EstimateMemory(const MemoryInput& in) {
  // The most loaded stage: the first holds the embedding and the most in-flight micro-batches,
  // the last the head and the logits. Evaluate both and report the larger.
  MemoryResult best = StageEstimator(in, 0).Run();
  if (in.parallel.pp > 1) {
    MemoryResult last = StageEstimator(in, in.parallel.pp - 1).Run();
    if (last.per_gpu.Total() > best.per_gpu.Total()) best = std::move(last);
  }
  return best;
}

}  // namespace gpuplan
