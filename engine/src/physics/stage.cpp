// SPDX-License-Identifier: MIT
#include "physics/stage.h"

#include <algorithm>

#include "model/gguf.h"

namespace gpuplan {
namespace {

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

// TRL prepares a k-bit base only when the quantised weights are not sharded (sft_trainer.py:
// "one should never call ... prepare_model_for_kbit_training when doing QLoRA + FSDP /
// DS-Zero3"), so ZeRO-3 over more than one rank skips the upcast.
bool KbitUpcast(const MemoryInput& in) {
  const WeightFormat f = in.precision.weights;
  const bool bnb = f == WeightFormat::kNf4 || f == WeightFormat::kInt8;
  const bool sharded = in.parallel.zero >= 3 && in.parallel.ShardGroup() > 1;
  return in.training.kbit_fp32_upcast && in.workload.IsPeft() && bnb && !sharded;
}

}  // namespace

Stage::Stage(const MemoryInput& input, int64_t stage)
    : in(input),
      index(stage),
      layers(LayersOfStage(input.model, input.parallel.pp, stage)),
      params(ParamsOnGpu(input.model, input.params, input.parallel, layers)),
      bits(Bits(input.precision.weights, input.precision.quant)),
      fp32_model(input.precision.weights == WeightFormat::kFp32 ||
                 input.precision.weights == WeightFormat::kTf32),
      full_training(input.workload.kind == WorkloadKind::kPretrain ||
                    input.workload.kind == WorkloadKind::kFullFinetune),
      kbit_upcast(KbitUpcast(input)),
      act_bytes(fp32_model || kbit_upcast ? 4 : 2),
      shard(D(std::max<int64_t>(1, input.parallel.ShardGroup()))) {
  const Precision& prec = input.precision;
  const int64_t on_gpu = input.serving.gpu_layers;
  if (!input.workload.IsTraining() && on_gpu >= 0 && input.model.layers > 0) {
    gpu_layer_share = std::min(1.0, D(on_gpu) / D(input.model.layers));
    output_on_gpu = on_gpu > input.model.layers;
  }
  if (!input.workload.IsTraining() && input.model.IsMoe()) {
    cpu_moe_layers = std::max<int64_t>(0, input.serving.cpu_moe_layers);
  }
  // Training keeps 16-bit weights for fp8 compute (Transformer Engine casts per step).
  linear_bits = (full_training && prec.weights == WeightFormat::kFp8) ? 16 : bits.bits_per_weight;
  expert_bits = bits.expert_bits > 0 ? bits.expert_bits : linear_bits;
  emb_bits = bits.embeddings_16bit ? (fp32_model || kbit_upcast ? 32 : 16) : bits.embedding_bits;
  // A GGUF file without output.weight quantises token_embd with the output's type.
  if (IsGguf(prec.weights) && input.model.tied_embeddings) emb_bits = bits.lm_head_bits;
  // torchtune's QLoRA stores the output projection in NF4 too (FrozenNF4Linear);
  // bitsandbytes and PEFT keep it in 16 bits: precision.quantize_lm_head chooses.
  const bool quantised_head = prec.quantize_lm_head && !IsFloatTrainable(prec.weights);
  head_bits = bits.embeddings_16bit ? (quantised_head ? linear_bits : emb_bits) : bits.lm_head_bits;
}

void Detail::Write(const char* key, double bytes) const { (*out_)[key] = bytes; }

}  // namespace gpuplan
