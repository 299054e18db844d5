// SPDX-License-Identifier: MIT
// Memory per GPU. Each term cites where its byte count comes from; the sum is what the
// caching allocator would hold at the step's peak, plus the runtime the allocator never sees.
#include "gpuplan/memory_model.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "gpuplan/units.h"

namespace gpuplan {
namespace {

double D(int64_t v) { return static_cast<double>(v); }

// llama.cpp's use_more_bits(i, n): the layers whose attn_v and ffn_down Q4_K_M stores in Q6_K.
double PromotedLayerFraction(int64_t layers) {
  if (layers <= 0) return 0;
  int64_t promoted = 0;
  for (int64_t i = 0; i < layers; ++i) {
    if (i < layers / 8 || i >= 7 * layers / 8 || (i - layers / 8) % 3 == 2) ++promoted;
  }
  return D(promoted) / D(layers);
}

/// Layers of each kind held by one pipeline stage.
struct StageLayers {
  int64_t dense = 0;
  int64_t moe = 0;
  bool first = true;
  bool last = true;
  int64_t Count() const { return dense + moe; }
};

StageLayers LayersOfStage(const ModelSpec& m, int64_t pp, int64_t stage) {
  StageLayers s;
  const int64_t per_stage = (m.layers + pp - 1) / pp;
  const int64_t begin = stage * per_stage;
  const int64_t end = std::min(m.layers, begin + per_stage);
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
  double promoted = 0;   ///< part of `linear` GGUF Q4_K_M stores in Q6_K
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
  const double promoted_frac = PromotedLayerFraction(m.layers);
  const auto add_layer = [&](const LayerParams& l, int64_t n) {
    const double count = D(n);
    const double linear = D(l.attn_linear + l.mlp_linear) / tp;
    g.linear += count * linear;
    g.promoted += count * promoted_frac * D(l.attn_v + l.mlp_down) / tp;
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

// Gradient and optimizer bytes per trainable parameter.
struct TrainBytes {
  double weight = 2;
  double grad = 2;
  double master = 4;
  double optimizer = 8;
  bool paged = false;
};

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

MemoryResult EstimateMemory(const MemoryInput& in) {
  const ModelSpec& m = in.model;
  const Workload& w = in.workload;
  const Parallel& p = in.parallel;
  const Precision& prec = in.precision;
  const MemoryTechniques& tech = in.techniques;

  // The most loaded stage: the first holds the embedding and the most in-flight micro-batches,
  // the last the head and the logits. Evaluate both and report the larger.
  MemoryResult best;
  const int64_t candidates[2] = {0, p.pp - 1};
  for (int64_t stage : candidates) {
    MemoryResult r;
    r.stage = stage;
    const StageLayers s = LayersOfStage(m, p.pp, stage);
    const GpuParams g = ParamsOnGpu(m, in.params, p, s);
    const FormatBits bits = Bits(prec.weights, prec.quant);
    const bool fp32_model =
        prec.weights == WeightFormat::kFp32 || prec.weights == WeightFormat::kTf32;
    const bool gguf =
        prec.weights == WeightFormat::kGgufQ4KM || prec.weights == WeightFormat::kGgufQ8_0;
    // Norms and biases: fp32 in GGUF and fp32 models, else the 16-bit compute type.
    const double other_bytes = (fp32_model || gguf) ? 4 : 2;
    const double full_training =
        w.kind == WorkloadKind::kPretrain || w.kind == WorkloadKind::kFullFinetune;
    // Training keeps 16-bit weights for fp8 compute (Transformer Engine casts per step).
    const double linear_bits =
        (full_training && prec.weights == WeightFormat::kFp8) ? 16 : bits.bits_per_weight;
    const double emb_bits =
        bits.embeddings_16bit ? (full_training && fp32_model ? 32 : 16) : bits.embedding_bits;
    // torchtune's QLoRA stores the output projection in NF4 too (FrozenNF4Linear);
    // bitsandbytes/PEFT keep it in 16 bits: precision.quantize_lm_head chooses.
    const bool quantised_head = prec.quantize_lm_head && !IsFloatTrainable(prec.weights);
    const double head_bits =
        bits.embeddings_16bit ? (quantised_head ? linear_bits : emb_bits) : bits.lm_head_bits;
    const double promoted_extra = bits.promoted_bits > 0 ? (bits.promoted_bits - linear_bits) : 0;

    double weight_bytes = (g.linear + g.expert) * linear_bits / 8 +
                          g.promoted * promoted_extra / 8 + g.embedding * emb_bits / 8 +
                          g.lm_head * head_bits / 8 + g.other * other_bytes;
    r.detail["weights.linear"] =
        (g.linear + g.expert) * linear_bits / 8 + g.promoted * promoted_extra / 8;
    r.detail["weights.embedding_and_head"] = g.embedding * emb_bits / 8 + g.lm_head * head_bits / 8;
    r.detail["weights.norms_biases_routers"] = g.other * other_bytes;

    // ZeRO and FSDP shard over data x context parallel ranks; routed experts over what is left
    // of that group once expert parallelism has taken its share.
    const double shard = D(p.ShardGroup());
    const double expert_shard = std::max(1.0, shard / D(p.ep));
    const double dense_part = g.Total() - g.expert;
    const auto sharded = [&](double per_param_dense, double per_param_expert) {
      return dense_part * per_param_dense / shard + g.expert * per_param_expert / expert_shard;
    };
    const auto unsharded = [&](double bytes_per_param) { return g.Total() * bytes_per_param; };

    double gradients = 0;
    double optimizer = 0;
    double master = 0;
    double buffers = 0;
    double offloaded = 0;
    const bool offload_params = tech.offload_params;
    const bool offload_opt = tech.offload_optimizer || offload_params;
    const bool paged = in.optimizer == Optimizer::kPagedAdamW8bit;
    const double opt_bytes = OptimizerStateBytes(in.optimizer, m.hidden);

    if (full_training) {
      const double grad_b = fp32_model ? 4 : 2;
      const double master_b = (!fp32_model && prec.master == MasterWeights::kFp32) ? 4 : 0;
      if (p.zero >= 3)
        weight_bytes = sharded(weight_bytes / std::max(1.0, g.Total()),
                               weight_bytes / std::max(1.0, g.Total()));
      gradients = p.zero >= 2 ? sharded(grad_b, grad_b) : unsharded(grad_b);
      master = p.zero >= 1 ? sharded(master_b, master_b) : unsharded(master_b);
      optimizer = p.zero >= 1 ? sharded(opt_bytes, opt_bytes) : unsharded(opt_bytes);
      if (tech.optimizer_in_backward) {
        // Each parameter is stepped as soon as its gradient is ready, so only about one
        // tensor's gradient is alive at a time (torchtune optimizer_in_bwd); take the largest.
        const double largest =
            std::max({D(in.params.largest_linear) / D(p.tp), g.embedding, g.lm_head});
        gradients = largest * grad_b;
      }
    } else if (w.IsPeft()) {
      const double adapters =
          D(LoraParams(m, w.lora_targets, w.lora_rank)) * (D(s.Count()) / D(m.layers)) / D(p.tp);
      const double adapter_b = prec.adapters_fp32 ? 4 : 2;
      const double master_b = prec.adapters_fp32 || prec.master == MasterWeights::kNone ? 0 : 4;
      r.detail["weights.lora_adapters"] = adapters * adapter_b;
      r.detail["lora_adapter_params_per_gpu"] = adapters;
      if (p.zero >= 3) weight_bytes /= shard;
      weight_bytes += adapters * adapter_b;
      gradients = adapters * adapter_b / (p.zero >= 2 ? shard : 1);
      master = adapters * master_b / (p.zero >= 1 ? shard : 1);
      optimizer = adapters * opt_bytes / (p.zero >= 1 ? shard : 1);
    }
    if (w.IsTraining() && (paged || offload_opt)) {
      // Paged 8-bit Adam lives in CUDA unified memory that bitsandbytes evicts to host RAM
      // under pressure, outside PyTorch's allocator; offloaded states live in host RAM.
      offloaded += optimizer + master;
      optimizer = 0;
      master = 0;
    }
    if (w.IsTraining() && offload_params) {
      offloaded += weight_bytes + gradients;
      weight_bytes = 0;
      gradients = 0;
    }

    // Units all-gathered for compute under ZeRO-3/FSDP or parameter offload: the layer being
    // computed and the one prefetched (FSDP's default forward/backward prefetch), plus the root
    // unit (embedding, head, final norm), which stays gathered through the step.
    const double per_layer_params =
        s.Count() > 0 ? (g.linear + g.expert * D(p.ep) + g.other) / D(s.Count()) : 0;
    const double gathered_bits = full_training ? (fp32_model ? 32 : 16) : linear_bits;
    if (w.IsTraining() && (p.zero >= 3 || offload_params) && (shard > 1 || offload_params)) {
      const double layer_unit = per_layer_params * gathered_bits / 8;
      const double root_unit = g.embedding * emb_bits / 8 + g.lm_head * head_bits / 8;
      r.detail["buffers.gathered_units"] = 2 * layer_unit + root_unit;
      buffers += 2 * layer_unit + root_unit;
      if (offload_params && full_training) {
        // One layer's gradients wait on the GPU for their reduce-scatter and copy to host.
        const double unit_grads = per_layer_params * (fp32_model ? 4 : 2);
        r.detail["buffers.unit_gradients"] = unit_grads;
        buffers += unit_grads;
      }
    }
    // Quantised frozen bases are dequantised to 16 bits one linear at a time for the matmul.
    if (w.IsTraining() && !IsFloatTrainable(prec.weights)) {
      const double dq = D(in.params.largest_linear) / D(p.tp) * 2;
      r.detail["buffers.dequantised_weight"] = dq;
      buffers += dq;
    }
    // Data-parallel gradient buckets: PyTorch DDP's bucket_cap_mb = 25, two in flight.
    if (w.IsTraining() && p.Dp() > 1 && p.zero < 3) {
      r.detail["buffers.gradient_buckets"] = 2 * 25.0 * 1024 * 1024;
      buffers += 2 * 25.0 * 1024 * 1024;
    }

    // Activations.
    double activations = 0;
    double kv = 0;
    const double a = fp32_model ? 4 : 2;
    if (w.IsTraining()) {
      const double tokens = D(w.micro_batch) * D(w.seq_len) / D(p.cp);
      const double context = D(w.seq_len);
      const bool flash = tech.flash_attention;
      const bool keep_scores = tech.recompute == Recompute::kNone;
      const ActivationTerms dense_t = LayerActivationTerms(m, false, a);
      const ActivationTerms moe_t = LayerActivationTerms(m, true, a);
      const double dense_layer =
          tokens * PerTokenLayerBytes(dense_t, p, flash, keep_scores, context);
      const double moe_layer = tokens * PerTokenLayerBytes(moe_t, p, flash, keep_scores, context);
      const double biggest_full =
          tokens * std::max(s.dense > 0 ? PerTokenLayerBytes(dense_t, p, flash, true, context) : 0,
                            s.moe > 0 ? PerTokenLayerBytes(moe_t, p, flash, true, context) : 0);
      // LoRA keeps x @ A (rank wide) for each adapted linear.
      double lora_extra = 0;
      if (w.IsPeft()) {
        const LoraTargets& t = w.lora_targets;
        const int n = t.q + t.k + t.v + t.o + t.gate + t.up + t.down;
        lora_extra = tokens * a * D(w.lora_rank) * n;
      }
      double stored = 0;
      double working = 0;
      if (tech.recompute == Recompute::kFull) {
        // Only each layer's input is kept (2sbh per layer; SP splits it over tp); the layer
        // being recomputed in backward holds its full set once.
        const double rep_div = p.sequence_parallel ? D(p.tp) : 1;
        stored = D(s.Count()) * tokens * a * D(m.hidden) / rep_div;
        working = biggest_full + tokens * a * D(w.lora_rank) * 7 * (w.IsPeft() ? 1 : 0);
      } else {
        stored = D(s.dense) * dense_layer + D(s.moe) * moe_layer + D(s.Count()) * lora_extra;
        if (tech.recompute == Recompute::kSelective && !tech.flash_attention) {
          // Selective recomputation re-runs the attention core, whose s^2 tensors are then
          // alive for one layer only.
          working = tokens * D(m.heads) * context * a / D(p.tp);
        }
      }
      // 1F1B: stage i holds pp - i micro-batches in flight (Narayanan et al. 2021), capped by
      // how many micro-batches a step has.
      const double in_flight = D(std::min(p.pp - stage, std::max<int64_t>(1, w.grad_accum)));
      stored *= in_flight;
      if (tech.offload_activations) {
        offloaded += stored;
        r.detail["activations.offloaded_to_host"] = stored;
        stored = 0;
      }
      r.detail["activations.layers"] = stored;
      r.detail["activations.recompute_working_set"] = working;
      activations = stored + working;
      if (s.last) {
        // Logits and loss: b*s*V/tp logits in the compute type, upcast to fp32 for the loss,
        // plus fp32 log-probabilities kept for backward; a chunked loss upcasts one chunk at a
        // time. Also the final norm's input and lm_head's input.
        const double vocab_tokens = tokens * D(m.vocab) / D(p.tp);
        const double upcast = fp32_model ? 4 : 8;
        const double per = tech.chunked_loss
                               ? a + upcast / D(std::max<int64_t>(1, tech.loss_chunks))
                               : (fp32_model ? 0 : a) + upcast;
        const double logits = vocab_tokens * per + tokens * 2 * a * D(m.hidden);
        r.detail["activations.logits_and_loss"] = logits;
        activations += logits;
      }
    } else {
      // Inference: KV cache plus the transient working set of one prefill chunk.
      const double seqs = D(w.concurrency);
      const double ctx = D(w.prompt_tokens + w.output_tokens);
      const double kv_b = BytesPerElement(prec.kv_cache);
      double per_token_layer = 0;
      if (m.IsMla()) {
        // MLA caches the compressed latent and the shared RoPE key, replicated on tp ranks.
        per_token_layer = D(m.mla.kv_lora_rank + m.mla.qk_rope_head_dim) * kv_b;
      } else {
        const double kv_heads_gpu = std::ceil(D(m.kv_heads) / D(p.tp));
        per_token_layer = 2 * kv_heads_gpu * D(m.head_dim) * kv_b;
      }
      kv = per_token_layer * D(s.Count()) * ctx * seqs;
      r.detail["kv_cache.bytes_per_token"] = per_token_layer * D(s.Count());
      const double chunk = D(w.prefill_chunk_tokens);
      const double h = D(m.hidden);
      const double mlp_width =
          std::max(D(m.intermediate), D(m.moe.experts_per_token * m.moe.expert_intermediate +
                                        m.moe.shared_experts * m.moe.shared_intermediate));
      // Residual stream and norm output, then the wider of the MLP's intermediates (gate, up,
      // act) and attention's q, k, v, output (plus the score matrix without flash attention).
      const double mlp = (m.mlp == MlpKind::kGated ? 3 : 2) * mlp_width / D(p.tp);
      double attn = D(m.QueryWidth() + m.KeyWidth() + m.ValueWidth() + m.AttnOutWidth()) / D(p.tp);
      if (!tech.flash_attention) {
        attn += D(m.heads) / D(p.tp) * D(w.prompt_tokens) * (a + 4);  // scores + fp32 softmax
      }
      const double working = chunk * a * (2 * h + std::max(mlp, attn));
      const double logits = s.last ? seqs * D(m.vocab) / D(p.tp) * 4 : 0;  // last position, fp32
      r.detail["activations.prefill_working_set"] = working;
      r.detail["activations.logits"] = logits;
      activations = working + logits;
    }

    MemoryBreakdown& b = r.per_gpu;
    b.weights = weight_bytes;
    b.gradients = gradients;
    b.optimizer_states = optimizer + master;
    r.detail["optimizer_states.master_weights"] = master;
    r.detail["optimizer_states.moments"] = optimizer;
    b.activations = activations;
    b.kv_cache = kv;
    b.buffers = buffers;
    const double reserve =
        in.runtime.reserve_bytes >= 0 ? in.runtime.reserve_bytes : in.gpu.runtime_reserve_bytes;
    const double comm =
        p.gpus > 1
            ? (in.runtime.comm_reserve_bytes >= 0 ? in.runtime.comm_reserve_bytes : 0.5 * kGiB)
            : 0;
    const double slack = in.runtime.allocator_slack * b.Allocated();
    b.runtime = reserve + comm + slack;
    r.detail["runtime.reserve"] = reserve;
    r.detail["runtime.communicators"] = comm;
    r.detail["runtime.allocator_slack"] = slack;
    r.offloaded_bytes_per_gpu = offloaded;
    if (stage == 0 || b.Total() > best.per_gpu.Total()) best = std::move(r);
    if (p.pp == 1) break;
  }
  return best;
}

}  // namespace gpuplan
