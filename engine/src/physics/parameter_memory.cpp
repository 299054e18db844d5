// SPDX-License-Identifier: MIT
// What the parameters cost one GPU of a stage: the weights in their storage format, and for
// training the gradients, optimizer states, what offloading moves to the host, and the
// buffers that gathering and reducing them add.
#include <algorithm>

#include "model/gguf.h"
#include "physics/stage.h"

namespace gpuplan {
namespace {

// Optimizer state per trainable parameter when the states are fp32.
double Fp32StateBytes(Optimizer o, int64_t hidden) {
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

// GGUF mixtures pick a type per tensor and layer (llama.cpp's llama_tensor_get_type).
double GgufLinearBytes(const Stage& s) {
  const ModelSpec& m = s.in.model;
  const ParamCounts& c = s.in.params;
  const GgufModel gm{m.layers, m.kv_heads > 0 && m.heads / m.kv_heads >= 4,
                     m.layers == 80 && !m.IsMoe()};
  const WeightFormat f = s.in.precision.weights;
  const double ep = D(s.in.parallel.ep);
  double bits = 0;
  for (int64_t i = s.layers.begin; i < s.layers.end; ++i) {
    const LayerParams& l = m.IsMoeLayer(i) ? c.moe_layer : c.dense_layer;
    const auto t = [&](GgufTensor kind) { return GgufBits(f, kind, i, gm); };
    const double qk = D(l.attn_linear - l.attn_v - l.attn_o);
    // Experts kept on the CPU (--n-cpu-moe) are not on the GPU.
    const double on_gpu = i < s.cpu_moe_layers ? 0 : 1;
    const double experts_down = on_gpu * D(l.expert_down) / ep;
    const double experts_rest = on_gpu * D(l.expert_linear - l.expert_down) / ep;
    bits += qk * t(GgufTensor::kAttnQK) + D(l.attn_v) * t(GgufTensor::kAttnV) +
            D(l.attn_o) * t(GgufTensor::kAttnOut) +
            (D(l.mlp_linear - l.mlp_down) + experts_rest) * t(GgufTensor::kFfnUpGate) +
            (D(l.mlp_down) + experts_down) * t(GgufTensor::kFfnDown);
  }
  return bits / D(s.in.parallel.tp) / 8;
}

// ZeRO and FSDP shard over data x context parallel ranks; routed experts over what is left of
// that group once expert parallelism has taken its share.
double Sharded(const Stage& s, double bytes_per_param) {
  const double expert_shard = std::max(1.0, s.shard / D(s.in.parallel.ep));
  return (s.params.Total() - s.params.expert) * bytes_per_param / s.shard +
         s.params.expert * bytes_per_param / expert_shard;
}

// One layer's parameters on this GPU, split over tp (norms and routers are replicated).
double UnitParams(const Stage& s, const LayerParams& l) {
  const Parallel& p = s.in.parallel;
  return D(l.attn_linear + l.mlp_linear) / D(p.tp) + D(l.expert_linear) / D(p.ep * p.tp) +
         D(l.attn_other + l.mlp_bias + l.router + l.norms);
}

// The largest layer this stage holds (dense or MoE), on this GPU.
double LargestUnitParams(const Stage& s) {
  const ParamCounts& c = s.in.params;
  return std::max(s.layers.dense > 0 ? UnitParams(s, c.dense_layer) : 0.0,
                  s.layers.moe > 0 ? UnitParams(s, c.moe_layer) : 0.0);
}

// The stage stays gathered and accumulates unsharded fp32 gradients through the step
// (ZeRO-3 under pipeline parallelism, policy.h).
bool UnshardedUnderPp(const Stage& s) {
  const Parallel& p = s.in.parallel;
  return p.zero >= 3 && p.pp > 1 && s.shard > 1 && s.in.training.gather.unsharded_under_pp;
}

TrainingState FullTrainingState(const Stage& s, double weights) {
  const MemoryInput& in = s.in;
  const Parallel& p = in.parallel;
  const TrainingPolicy& policy = in.training;
  TrainingState t;
  const bool fp32_grads = s.fp32_model || policy.fp32_grad_accumulation;
  const double grad_b = fp32_grads ? 4 : 2;
  const double master_b = (!s.fp32_model && in.precision.master == MasterWeights::kFp32) ? 4 : 0;
  const double opt_bytes = OptimizerStateBytes(in.optimizer, in.model.hidden,
                                               policy.optimizer_states, s.fp32_model ? 4 : 2);
  const double all = s.params.Total();
  t.weights = p.zero >= 3 ? Sharded(s, weights / std::max(1.0, all)) : weights;
  t.gradients = p.zero >= 2 ? Sharded(s, grad_b) : all * grad_b;
  // Every micro-batch but the last adds into the unsharded fp32 gradients; the last one's
  // reduce-scatter makes the sharded ones beside them.
  if (UnshardedUnderPp(s)) t.gradients += all * 4;
  t.master = p.zero >= 1 ? Sharded(s, master_b) : all * master_b;
  t.moments = p.zero >= 1 ? Sharded(s, opt_bytes) : all * opt_bytes;
  // Backward starts at the loss: the head's gradient comes first on the last stage (a tied
  // head is the embedding), the last layer's on the others.
  const double head = s.params.lm_head > 0 ? s.params.lm_head : s.params.embedding;
  t.first_gradients = (s.layers.last ? head : LargestUnitParams(s)) * grad_b;
  if (in.techniques.optimizer_in_backward ||
      policy.gradients == GradientLifetime::kSteppedInBackward) {
    // Each parameter is stepped as soon as its gradient is ready, so only about one
    // tensor's gradient is alive at a time (torchtune optimizer_in_bwd): the largest.
    const double largest =
        std::max({D(in.params.largest_linear) / D(p.tp), s.params.embedding, s.params.lm_head});
    t.gradients = largest * grad_b;
  }
  t.first_gradients = std::min(t.first_gradients, t.gradients);
  return t;
}

// LoRA / QLoRA: the base is frozen; only the adapters train.
TrainingState AdapterTrainingState(const Stage& s, double weights, const Detail& d) {
  const MemoryInput& in = s.in;
  const Parallel& p = in.parallel;
  const Precision& prec = in.precision;
  TrainingState t;
  const double adapters = D(LoraParams(in.model, in.workload.lora_targets, in.workload.lora_rank)) *
                          (D(s.layers.Count()) / D(in.model.layers)) / D(p.tp);
  const double adapter_b = prec.adapters_fp32 ? 4 : 2;
  const double master_b = prec.adapters_fp32 || prec.master == MasterWeights::kNone ? 0 : 4;
  const double opt_bytes =
      OptimizerStateBytes(in.optimizer, in.model.hidden, in.training.optimizer_states, adapter_b);
  d.Record("weights.lora_adapters", adapters * adapter_b);
  d.Record("lora_adapter_params_per_gpu", adapters);
  t.weights = p.zero >= 3 ? weights / s.shard : weights;
  t.weights += adapters * adapter_b;
  t.gradients = adapters * adapter_b / (p.zero >= 2 ? s.shard : 1);
  t.master = adapters * master_b / (p.zero >= 1 ? s.shard : 1);
  t.moments = adapters * opt_bytes / (p.zero >= 1 ? s.shard : 1);
  // The first gradients backward makes: one layer's adapters (the base is frozen).
  t.first_gradients = adapters * adapter_b / D(std::max<int64_t>(1, s.layers.Count()));
  return t;
}

// Units all-gathered for compute under ZeRO-3/FSDP or parameter offload: the layer being
// computed and the one prefetched (FSDP's default forward/backward prefetch), plus the root
// unit (embedding, head, final norm), which stays gathered through the step. Without
// resharding after forward, every layer gathered in forward waits for its backward.
double GatheredUnits(const Stage& s) {
  const ParamCounts& c = s.in.params;
  const ParamGather& gather = s.in.training.gather;
  const double gathered_bits = s.full_training ? (s.fp32_model ? 32 : 16) : s.linear_bits;
  const double root_unit = s.params.embedding * s.emb_bits / 8 + s.params.lm_head * s.head_bits / 8;
  if (!gather.reshard_after_forward || UnshardedUnderPp(s)) {
    const double dense = s.layers.dense > 0 ? D(s.layers.dense) * UnitParams(s, c.dense_layer) : 0;
    const double moe = s.layers.moe > 0 ? D(s.layers.moe) * UnitParams(s, c.moe_layer) : 0;
    return (dense + moe) * gathered_bits / 8 + root_unit;
  }
  const double layer_unit = LargestUnitParams(s) * gathered_bits / 8;
  // What is gathered ahead of the unit in use: the next unit (FSDP), or DeepSpeed's
  // prefetch bucket when that is larger (small layers).
  const double prefetch = std::max(layer_unit, gather.prefetch_elements * gathered_bits / 8);
  return layer_unit + prefetch + root_unit;
}

}  // namespace

// The state in the policy's dtype. 8-bit optimizers quantise their own states whatever it is.
double OptimizerStateBytes(Optimizer o, int64_t hidden, StateDtype dtype, double param_bytes) {
  const double fp32 = Fp32StateBytes(o, hidden);
  if (dtype == StateDtype::kFp32 || o == Optimizer::kAdamW8bit || o == Optimizer::kPagedAdamW8bit) {
    return fp32;
  }
  return fp32 * (dtype == StateDtype::kBf16 ? 2 : param_bytes) / 4;
}

namespace {

// The share of this stage's MoE layers whose routed experts stay on the CPU.
double CpuMoeShare(const Stage& s) {
  if (s.cpu_moe_layers <= 0 || s.layers.moe <= 0) return 0;
  int64_t on_cpu = 0;
  for (int64_t i = s.layers.begin; i < std::min(s.layers.end, s.cpu_moe_layers); ++i) {
    on_cpu += s.in.model.IsMoeLayer(i) ? 1 : 0;
  }
  return D(on_cpu) / D(s.layers.moe);
}

}  // namespace

double WeightBytes(const Stage& s, const Detail& d) {
  const WeightFormat f = s.in.precision.weights;
  const bool gguf = IsGguf(f);
  const GpuParams& g = s.params;
  // Norms and biases: fp32 in GGUF files and fp32 models, else the 16-bit compute type.
  const double other_bytes = (s.fp32_model || s.kbit_upcast || gguf) ? 4 : 2;
  const double linear =
      gguf ? GgufLinearBytes(s)
           : g.linear * s.linear_bits / 8 + g.expert * s.expert_bits / 8 * (1 - CpuMoeShare(s));
  // An untied input table an engine keeps in host memory is not on the GPU.
  const bool table_on_host = !s.full_training && s.in.workload.kind == WorkloadKind::kInference &&
                             s.in.serving.input_embedding_on_host && !s.in.model.tied_embeddings;
  const double table = table_on_host ? 0 : g.embedding * s.emb_bits / 8;
  const double head = g.lm_head * s.head_bits / 8;
  const double other = g.other * other_bytes;
  // Layers left on the CPU (llama.cpp's n_gpu_layers) take their share of the layers' weights
  // to host memory, and the output layer unless it is offloaded too.
  const double share = s.gpu_layer_share;
  const double output = s.output_on_gpu ? head : 0;
  d.Record("weights.linear", linear * share);
  d.Record("weights.embedding_and_head", table + output);
  d.Record("weights.norms_biases_routers", other * share);
  return (linear + other) * share + table + output;
}

double HostWeightBytes(const Stage& s) {
  if (s.gpu_layer_share >= 1 && s.output_on_gpu && s.cpu_moe_layers == 0) return 0;
  const Detail none(false, nullptr);
  Stage all = s;
  all.gpu_layer_share = 1;
  all.output_on_gpu = true;
  all.cpu_moe_layers = 0;
  return WeightBytes(all, none) - WeightBytes(s, none);
}

double HostExpertBytes(const Stage& s) {
  if (s.cpu_moe_layers == 0) return 0;
  const Detail none(false, nullptr);
  Stage gpu = s;
  gpu.cpu_moe_layers = 0;
  return WeightBytes(gpu, none) - WeightBytes(s, none);
}

TrainingState TrainingStateBytes(const Stage& s, double weights, const Detail& d) {
  return s.full_training ? FullTrainingState(s, weights) : AdapterTrainingState(s, weights, d);
}

double Offload(const Stage& s, TrainingState* t) {
  const MemoryTechniques& tech = s.in.techniques;
  double moved = 0;
  // Paged 8-bit Adam lives in CUDA unified memory that bitsandbytes evicts to host RAM under
  // pressure, outside PyTorch's allocator; offloaded states live in host RAM.
  if (s.in.optimizer == Optimizer::kPagedAdamW8bit || tech.offload_optimizer ||
      tech.offload_params) {
    moved += t->moments + t->master;
    t->moments = t->master = 0;
  }
  if (tech.offload_params) {
    moved += t->weights + t->gradients;
    t->weights = t->gradients = t->first_gradients = 0;
  }
  return moved;
}

TrainingBuffers TrainingBufferBytes(const Stage& s, double gradients, const Detail& d) {
  const MemoryInput& in = s.in;
  const Parallel& p = in.parallel;
  const GradientBuckets& buckets = in.training.buckets;
  TrainingBuffers out;
  const auto add = [&](const char* key, double bytes, double* part) {
    d.Record(key, bytes);
    *part += bytes;
  };
  if ((p.zero >= 3 && s.shard > 1) || in.techniques.offload_params) {
    add("buffers.gathered_units", GatheredUnits(s), &out.steady);
    if (in.techniques.offload_params && s.full_training) {
      // One layer's gradients wait on the GPU for their reduce-scatter and copy to host.
      // From the start of backward, when the first unit's land, to its end.
      add("buffers.unit_gradients", LargestUnitParams(s) * (s.fp32_model ? 4 : 2), &out.steady);
    }
  }
  // Quantised frozen bases are dequantised to 16 bits one linear at a time for the matmul.
  if (!IsFloatTrainable(in.precision.weights)) {
    add("buffers.dequantised_weight", D(in.params.largest_linear) / D(p.tp) * 2, &out.steady);
  }
  // Data-parallel gradient buckets. Plain DDP (ZeRO 0) keeps a flat copy of every gradient
  // for its all-reduce: PyTorch's docs for gradient_as_bucket_view (default False) put the
  // saving of turning it on at "the total gradients size". Sharded stages reduce-scatter
  // through buckets of bucket_cap_mb = 25 MiB, two in flight, unless the stack allocates one
  // contiguous bucket whole, in the 16-bit training dtype (DeepSpeed).
  if (p.Dp() > 1 && p.zero == 0 && buckets.copy_for_allreduce) {
    add("buffers.gradient_buckets", gradients, &out.buckets);
  }
  if (p.Dp() > 1 && (p.zero == 1 || p.zero == 2)) {
    const double elements = buckets.bucket_elements;
    add("buffers.gradient_buckets",
        elements > 0 ? elements * (s.fp32_model ? 4 : 2) : 2 * 25.0 * 1024 * 1024, &out.buckets);
  }
  return out;
}

int64_t LoraParams(const ModelSpec& m, const LoraTargets& t, int64_t rank) {
  const int64_t h = m.hidden;
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
  const int64_t per_layer_dense = attn + mlp(m.intermediate);
  int64_t per_layer_moe = 0;
  if (m.IsMoe()) {
    per_layer_moe = attn + m.moe.shared_experts * mlp(m.moe.shared_intermediate) +
                    (t.experts ? m.moe.experts * mlp(m.moe.expert_intermediate) : 0);
  }
  int64_t total = m.layers * per_layer_dense;
  if (m.IsMoe()) {
    total = 0;
    for (int64_t i = 0; i < m.layers; ++i) {
      total += m.IsMoeLayer(i) ? per_layer_moe : per_layer_dense;
    }
  }
  if (t.lm_head) total += pair(h, m.vocab);
  return total;
}

}  // namespace gpuplan
