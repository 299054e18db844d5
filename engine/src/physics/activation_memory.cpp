// SPDX-License-Identifier: MIT
// Activations on one GPU of a stage: what training saves for backward (layers, in-flight
// micro-batches, logits and loss), and serving's transient prefill working set and logits.
#include <algorithm>
#include <iterator>

#include "physics/stage.h"

namespace gpuplan {
namespace {

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
// dropout mask h after attention and one after the MLP. The stack's policy adds what its code
// keeps beyond that, op by op.
ActivationTerms LayerActivationTerms(const ModelSpec& m, const SavedActivations& saved,
                                     bool moe_layer, double a, bool norms_train) {
  ActivationTerms t;
  const double h = D(m.hidden);
  t.replicated += a * h * D(m.norms_per_layer);  // norm inputs
  t.replicated += a * h;                         // QKV projection input (norm output)
  t.replicated += a * h;                         // MLP input (norm output)
  if (m.dropout) t.replicated += 2 * h;          // two 1-byte dropout masks
  if (saved.norm_fp32_copy) {
    // The fp32 input in place of the 16-bit one, and the normalised value the trained scale
    // multiplies (policy.h).
    t.replicated += ((4 - a) + (norms_train ? a : 0)) * h * D(m.norms_per_layer);
  }
  if (m.IsMla()) {
    // Latents feeding the up-projections: c_kv (+ rope key) and c_q.
    t.replicated += a * D(m.mla.kv_lora_rank + m.mla.qk_rope_head_dim + m.mla.q_lora_rank);
  }
  // Repeating grouped K and V to every query head makes them query-wide (MLA already is).
  const bool expand = saved.kv_expanded && !m.IsMla();
  const double k_width = expand ? D(m.heads * m.head_dim) : D(m.KeyWidth());
  const double v_width = expand ? D(m.heads * m.head_dim) : D(m.ValueWidth());
  t.sharded += a * (D(m.QueryWidth()) + k_width + v_width);  // q, k, v
  t.sharded += a * D(m.AttnOutWidth());  // attention output = output projection input
  t.flash_stats = 4 * D(m.heads);        // flash attention keeps an fp32 logsumexp per head
  if (m.qk_norm) t.sharded += a * D(m.QueryWidth() + m.KeyWidth());
  if (saved.rope_fp32_copy) {
    // The rotated parts of q and k, in fp32 (MLA rotates only its rope dimensions).
    t.sharded += 4 * (m.IsMla() ? D((m.heads + 1) * m.mla.qk_rope_head_dim)
                                : D(m.QueryWidth() + m.KeyWidth()));
  }
  // Softmax output per context position, plus mask and dropout output with dropout.
  t.quadratic = D(m.heads) * (a + (m.dropout ? 1 + a : 0));
  const double mlp_tensors =
      m.mlp == MlpKind::kGated ? saved.gated_mlp_tensors : saved.plain_mlp_tensors;
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

// Micro-batches whose activations a stage holds at once, in whole-stage units.
double InFlight(const Pipeline& pipe, int64_t pp, int64_t stage, int64_t micro_batches) {
  const int64_t m = std::max<int64_t>(1, micro_batches);
  switch (pipe.schedule) {
    case PipelineSchedule::kGpipe:
      return D(m);  // every forward runs before the first backward
    case PipelineSchedule::kInterleaved: {
      // Megatron-LM's interleaved 1F1B warms up 2 (pp - stage - 1) + (v - 1) pp chunk
      // forwards, at most m x v, before its first backward; one chunk holds 1/v of the
      // stage's layers. Stage 0 holds pp + (pp - 1) / v micro-batches (Korthikanti et al.
      // 2022, section 4.2.3).
      const int64_t v = std::max<int64_t>(1, pipe.virtual_stages);
      const int64_t chunks = std::min((pp - stage - 1) * 2 + (v - 1) * pp + 1, m * v);
      return D(chunks) / D(v);
    }
    case PipelineSchedule::k1F1B:
      break;
  }
  // 1F1B: stage i holds pp - i micro-batches in flight (Narayanan et al. 2021), capped by how
  // many micro-batches a step has.
  return D(std::min(pp - stage, m));
}

// torchtitan's op-level selective checkpointing (`_apply_ac_to_transformer_block`, mode
// "selective", option "op" in parallelize_llama.py) saves, per block, the outputs of the
// save-listed ops: attention (sdpa, with its logsumexp) and every matmul but every second one
// in forward order (q, k, v, o, then gate, up, down, or fc1, fc2: q, v, gate and down are
// kept), plus the block's input that recomputation starts from. Pointwise ops (norms, RoPE,
// the activation) are recomputed. Bytes per token of one layer.
double OpSelectiveLayerBytes(const ModelSpec& m, const Parallel& p, double a, bool moe) {
  const double tp = D(p.tp);
  const double rep_div = p.sequence_parallel ? tp : 1;
  const double width = moe ? D(m.moe.experts_per_token * m.moe.expert_intermediate +
                               m.moe.shared_experts * m.moe.shared_intermediate)
                           : D(m.intermediate);
  const bool gated = m.mlp == MlpKind::kGated;
  // Matmul outputs in order; every second one is recomputed.
  const double outputs[] = {D(m.QueryWidth()) / tp,
                            D(m.KeyWidth()) / tp,
                            D(m.ValueWidth()) / tp,
                            D(m.hidden),
                            width / tp,
                            gated ? width / tp : D(m.hidden),
                            gated ? D(m.hidden) : 0};
  double kept = 0;
  for (size_t i = 0; i < std::size(outputs); i += 2) kept += outputs[i];
  const double attention = D(m.AttnOutWidth()) / tp;
  const double logsumexp = D(m.heads) / tp * 4 / a;  // fp32, in units of a-byte elements
  return a * (D(m.hidden) / rep_div + kept + attention + logsumexp);
}

// Every n-th block is fully recomputed (torchtitan's layer-frequency option counts blocks from
// one and wraps those whose count is a multiple of n): of `count` blocks, count / n.
int64_t RecomputedBlocks(int64_t count, int64_t every) { return every > 0 ? count / every : 0; }

// Per token of one layer, what LoRA's adapters keep for backward beyond the layer's own saved
// tensors. lora_B keeps lora_A's rank-wide output for each adapted linear. Where the adapters
// are fp32 and the activations 16-bit, each adapted linear also keeps its own copy of its
// input (the policy's lora_input_copy_bytes per element, policy.h), one per linear even where
// several share an input (q, k and v); the 16-bit input the adapters would otherwise share is
// then kept by nothing, as a frozen linear saves no input for a weight gradient it does not
// compute: the attention and MLP inputs (norm outputs) and the down projection's input leave
// the count. The attention output stays (attention's backward keeps it), and so does an MoE
// layer's MLP input (the router and experts keep it). Adapters on routed experts (fused
// expert tensors in transformers 5, reached through PEFT's target_parameters) are not
// modelled. Measured on one H200 (tests/reference/h200-2026-12): a 1.24B Llama, LoRA r16 on
// every linear, 4 x 1024 tokens, saved 3.77 GB more with fp32 adapters than with bf16 ones;
// this counts 16 layers x 4096 tokens x (81,920 - 24,576) B = 3.76 GB.
double LoraLayerBytes(const Stage& s, bool moe_layer) {
  const Workload& w = s.in.workload;
  const ModelSpec& m = s.in.model;
  const LoraTargets& t = w.lora_targets;
  const double a = s.act_bytes;
  // A k-bit base's LoRA layer (peft/tuners/lora/bnb.py, Linear4bit.forward) casts only when
  // autocast is off (requires_conversion = not torch.is_autocast_enabled()); under autocast
  // its input reaches lora_A in the activations' dtype, which autocast's cast leaves as it is.
  double copy = s.in.precision.adapters_fp32 && a < 4 ? s.in.training.lora_input_copy_bytes : 0;
  if (!IsFloatTrainable(s.in.precision.weights) && copy < 4) copy = 0;
  const double h = D(m.hidden);
  const double tp = D(s.in.parallel.tp);
  const double rep = s.in.parallel.sequence_parallel ? tp : 1;
  int adapted = 0;
  double copies = 0;  // elements
  double freed = 0;   // bytes
  const auto adapt = [&](bool on, double width) {
    if (!on) return;
    ++adapted;
    copies += width;
  };
  if (m.IsMla()) {
    const MlaSpec& l = m.mla;
    adapt(t.q, h / rep);
    adapt(t.q && l.q_lora_rank > 0, D(l.q_lora_rank));
    adapt(t.k || t.v, h / rep);
    adapt(t.k || t.v, D(l.kv_lora_rank));
  } else {
    for (const bool on : {t.q, t.k, t.v}) adapt(on, h / rep);
  }
  if (t.q || t.k || t.v) freed += a * h / rep;
  adapt(t.o, D(m.AttnOutWidth()) / tp);
  // A dense layer's MLP, or an MoE layer's shared experts (one MLP of all of them).
  const double width =
      moe_layer ? D(m.moe.shared_experts * m.moe.shared_intermediate) : D(m.intermediate);
  if (width > 0) {
    const bool gated = m.mlp == MlpKind::kGated;
    adapt(t.gate && gated, h / rep);
    adapt(t.up, h / rep);
    adapt(t.down, width / tp);
    if (!moe_layer && ((t.gate && gated) || t.up)) freed += a * h / rep;
    if (t.down) freed += a * width / tp;
  }
  // lora_A's output is in the adapter's dtype where the input was cast to it.
  const double rank_part = D(w.lora_rank) * (copy > 0 ? copy : a) * D(adapted);
  return copy > 0 ? rank_part + copy * copies - freed : rank_part;
}

double LoraActivationBytes(const Stage& s, double tokens) {
  const StageLayers& l = s.layers;
  if (!s.in.workload.IsPeft() || l.Count() == 0) return 0;
  const double dense = l.dense > 0 ? D(l.dense) * LoraLayerBytes(s, false) : 0;
  const double moe = l.moe > 0 ? D(l.moe) * LoraLayerBytes(s, true) : 0;
  return tokens * (dense + moe) / D(l.Count());
}

// Logits and loss: b*s*V/tp logits in the compute type, upcast to fp32 for the loss, plus
// fp32 log-probabilities kept for backward and any further fp32 copy the stack's loss makes
// (policy.h); a chunked loss upcasts one chunk at a time. Also the final norm's input and
// lm_head's input, in the activations' type. The logits stay 16-bit when an upcast k-bit
// model runs under autocast.
double LogitsAndLossBytes(const Stage& s, double tokens) {
  const MemoryTechniques& tech = s.in.techniques;
  const double a = s.act_bytes;
  const double logit = s.fp32_model ? 4 : 2;
  const double vocab_tokens = tokens * D(s.in.model.vocab) / D(s.in.parallel.tp);
  const double upcast = s.fp32_model ? 0 : 4;
  const double loss = upcast + 4 + 4 * D(s.in.training.extra_fp32_logit_copies);
  const double per = tech.chunked_loss ? logit + loss / D(std::max<int64_t>(1, tech.loss_chunks))
                                       : (s.fp32_model ? 0 : logit) + loss;
  return vocab_tokens * per + tokens * 2 * a * D(s.in.model.hidden);
}

}  // namespace

TrainingActivations TrainingActivationBytes(const Stage& s, const Detail& d, double* offloaded) {
  const ModelSpec& m = s.in.model;
  const Workload& w = s.in.workload;
  const Parallel& p = s.in.parallel;
  const MemoryTechniques& tech = s.in.techniques;
  const SavedActivations& saved = s.in.training.saved;
  const double a = s.act_bytes;
  const double tokens = D(w.micro_batch) * D(w.seq_len) / D(p.cp);
  const double context = D(w.seq_len);
  const bool flash = tech.flash_attention;
  const bool keep_scores = tech.recompute == Recompute::kNone;
  const ActivationTerms dense_t = LayerActivationTerms(m, saved, false, a, s.full_training);
  const ActivationTerms moe_t = LayerActivationTerms(m, saved, true, a, s.full_training);
  const auto layer = [&](const ActivationTerms& t, bool scores) {
    return tokens * PerTokenLayerBytes(t, p, flash, scores, context);
  };
  const double lora_extra = LoraActivationBytes(s, tokens);
  if (lora_extra > 0) d.Record("activations.lora_adapters", lora_extra * D(s.layers.Count()));
  const StageLayers& l = s.layers;
  const double rep_div = p.sequence_parallel ? D(p.tp) : 1;
  const double layer_input = tokens * a * D(m.hidden) / rep_div;
  // The stage's first layer, whose saved tensors backward frees last.
  const bool first_moe = l.moe > 0 && m.IsMoeLayer(l.begin);
  const ActivationTerms& first_t = first_moe ? moe_t : dense_t;
  double stored = 0;
  double first = 0;
  double working = 0;
  if (tech.recompute == Recompute::kFull) {
    // Only each layer's input is kept (2sbh per layer; SP splits it over tp); the layer being
    // recomputed in backward holds its full set once.
    stored = D(l.Count()) * layer_input;
    first = layer_input;
    working = std::max(l.dense > 0 ? layer(dense_t, true) : 0, l.moe > 0 ? layer(moe_t, true) : 0) +
              lora_extra;
  } else if (tech.recompute == Recompute::kOpSelective) {
    stored = (D(l.dense) * OpSelectiveLayerBytes(m, p, a, false) +
              D(l.moe) * OpSelectiveLayerBytes(m, p, a, true)) *
                 tokens +
             D(l.Count()) * lora_extra;
    first = OpSelectiveLayerBytes(m, p, a, first_moe) * tokens + lora_extra;
    // Backward recomputes one block's unsaved ops at a time.
    working = std::max(l.dense > 0 ? layer(dense_t, true) : 0, l.moe > 0 ? layer(moe_t, true) : 0);
  } else if (tech.recompute == Recompute::kEveryNLayers) {
    // The recomputed blocks keep their input; the others keep everything (no recomputation).
    const int64_t full = RecomputedBlocks(l.Count(), tech.recompute_every);
    const double kept_share = l.Count() > 0 ? D(l.Count() - full) / D(l.Count()) : 0;
    stored = kept_share * (D(l.dense) * layer(dense_t, true) + D(l.moe) * layer(moe_t, true)) +
             D(full) * layer_input + D(l.Count()) * lora_extra;
    // Blocks are counted from one: the first is recomputed only when every block is.
    first = (tech.recompute_every == 1 ? layer_input : layer(first_t, true)) + lora_extra;
    if (full > 0) {
      working =
          std::max(l.dense > 0 ? layer(dense_t, true) : 0, l.moe > 0 ? layer(moe_t, true) : 0);
    }
  } else {
    stored = D(l.dense) * layer(dense_t, keep_scores) + D(l.moe) * layer(moe_t, keep_scores) +
             D(l.Count()) * lora_extra;
    first = layer(first_t, keep_scores) + lora_extra;
    if (tech.recompute == Recompute::kSelective && !flash) {
      // Selective recomputation re-runs the attention core, whose s^2 softmax output is then
      // alive for one layer only.
      working = tokens * D(m.heads) * context * a / D(p.tp);
    }
  }
  if (l.Count() == 0) first = 0;
  TrainingActivations out;
  out.per_micro_batch = stored;
  out.saved = stored * InFlight(s.in.training.pipeline, p.pp, s.index, w.grad_accum);
  if (tech.offload_activations) {
    *offloaded += out.saved;
    d.Record("activations.offloaded_to_host", out.saved);
    out.saved = out.per_micro_batch = 0;
  }
  out.first_layer = first;
  out.recompute = working;
  // Backward through one layer holds the gradient arriving on the residual stream and the one
  // it passes down (2 x tokens x h), and, in the MLP's backward, the gradients of its
  // intermediates: gate and up together for a gated MLP, the activation's input for a plain
  // one (width / tp; k routed copies plus the shared experts in an MoE layer).
  if (l.Count() > 0) {
    const double width = first_moe ? D(m.moe.experts_per_token * m.moe.expert_intermediate +
                                       m.moe.shared_experts * m.moe.shared_intermediate)
                                   : D(m.intermediate);
    const double grads = m.mlp == MlpKind::kGated ? 2 : 1;
    out.backward_working = 2 * layer_input + tokens * a * grads * width / D(p.tp);
  }
  if (p.cp > 1 && l.Count() > 0) {
    // Ring attention (TransformerEngine's AttnFuncWithCPAndKVP2P) keeps, until a layer's
    // forward ends, every K/V chunk the ring brought (cp buffers), the partial output of each
    // step and their fp32 sum; it saves for backward only the local q, one K/V chunk and the
    // output, as without cp. Its backward passes K/V and their gradients round the ring in
    // two buffers.
    const double kv = tokens * a * D(m.KeyWidth() + m.ValueWidth()) / D(p.tp);
    const double o = tokens * a * D(m.AttnOutWidth()) / D(p.tp);
    out.forward_working = D(p.cp) * (kv + o) + o * 4 / a;
    out.backward_working += 4 * kv;
    d.Record("activations.context_parallel_ring", out.forward_working);
  }
  d.Record("activations.layers", out.saved);
  d.Record("activations.first_layer", out.first_layer);
  d.Record("activations.recompute_working_set", out.recompute);
  d.Record("activations.backward_working_set", out.backward_working);
  if (l.last) {
    out.logits_and_loss = LogitsAndLossBytes(s, tokens);
    d.Record("activations.logits_and_loss", out.logits_and_loss);
  }
  return out;
}

double InferenceActivationBytes(const Stage& s, const Detail& d) {
  const ModelSpec& m = s.in.model;
  const Workload& w = s.in.workload;
  const double a = s.act_bytes;
  const double tp = D(s.in.parallel.tp);
  const double mlp_width =
      std::max(D(m.intermediate), D(m.moe.experts_per_token * m.moe.expert_intermediate +
                                    m.moe.shared_experts * m.moe.shared_intermediate));
  // Per prefilled token: the residual stream and norm output, then the wider of the MLP's
  // intermediates (gate, up, act) and attention's q, k, v and output, plus without flash
  // attention the score matrix in the compute type and its fp32 softmax.
  const double mlp = a * (m.mlp == MlpKind::kGated ? 3 : 2) * mlp_width / tp;
  double attn = a * D(m.QueryWidth() + m.KeyWidth() + m.ValueWidth() + m.AttnOutWidth()) / tp;
  if (!s.in.techniques.flash_attention) attn += D(m.heads) / tp * D(w.prompt_tokens) * (a + 4);
  const double per_token = 2 * a * D(m.hidden) + std::max(mlp, attn);
  const ServingPolicy& engine = s.in.serving;
  if (engine.profile_run) {
    // The engine's own profile run sets the peak its budget holds, whatever the request: a
    // forward pass over its batched-token limit, then its sampler over max_seqs rows of the
    // whole vocabulary (logits are gathered to every tensor-parallel rank) beside that pass's
    // hidden states (policy.h).
    const ServingDefaults lim = DefaultsOn(engine, s.in.gpu, s.in.parallel);
    const double batch = D(lim.max_batched_tokens);
    const double rows =
        D(lim.max_seqs > 0 ? std::min(lim.max_seqs, lim.max_batched_tokens) : w.concurrency);
    const double forward = batch * per_token;
    const double sampler =
        s.layers.last ? batch * a * D(m.hidden) + rows * D(m.vocab) * engine.sampler_bytes_per_logit
                      : 0;
    d.Record("activations.profile_forward", forward);
    d.Record("activations.profile_sampler", sampler);
    return std::max(forward, sampler);
  }
  if (engine.worst_case_graph) {
    // One ubatch over the whole context, every tensor in f32; ggml-alloc reuses memory, so
    // the buffer is the hidden state and the largest stage (policy.h). Layers split over
    // GPUs: each holds its stage's graph, the last one the logits.
    const double ub = D(DefaultsOn(engine, s.in.gpu, s.in.parallel).max_batched_tokens);
    const double ctx = engine.context_tokens > 0
                           ? D(engine.context_tokens)
                           : D(w.concurrency) * D(w.prompt_tokens + w.output_tokens);
    constexpr double f32 = 4;
    const double qkvo = D(m.QueryWidth() + m.KeyWidth() + m.ValueWidth() + m.AttnOutWidth());
    double attention = ub * ctx * 2 + ub * qkvo * f32;  // f16 KQ mask, then q, k, v, output
    if (!s.in.techniques.flash_attention) attention += ub * ctx * D(m.heads) * f32;
    const double mlp_stage = ub * (m.mlp == MlpKind::kGated ? 2 : 1) * mlp_width * f32;
    const double output = s.layers.last && s.output_on_gpu ? ub * D(m.vocab) * f32 : 0;
    const double buffer = ub * D(m.hidden) * f32 + std::max({attention, mlp_stage, output});
    d.Record("activations.compute_buffer", buffer);
    return buffer;
  }
  const double working = D(w.prefill_chunk_tokens) * per_token;
  // Sampling reads the last position's logits, in fp32, for every sequence.
  const double logits = s.layers.last ? D(w.concurrency) * D(m.vocab) / tp * 4 : 0;
  d.Record("activations.prefill_working_set", working);
  d.Record("activations.logits", logits);
  return working + logits;
}

}  // namespace gpuplan
