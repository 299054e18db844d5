// SPDX-License-Identifier: MIT
#include "stacks/settings.h"

#include <algorithm>

namespace gpuplan {

TrainingPolicy WithSettings(const TrainingPolicy& stack, const TrainingOverrides& o) {
  TrainingPolicy p = stack;
  if (o.optimizer_states) p.optimizer_states = *o.optimizer_states;
  if (o.optimizer_kernel) p.optimizer_kernel = *o.optimizer_kernel;
  if (o.lora_input_copy_bytes) p.lora_input_copy_bytes = *o.lora_input_copy_bytes;
  if (o.pipeline) p.pipeline = *o.pipeline;
  if (o.tp_comm_overlap) p.overlap.tp_comm = *o.tp_comm_overlap;
  if (o.grad_reduce_overlap) {
    p.overlap.grad_reduce = *o.grad_reduce_overlap;
    p.overlap.grad_reduce_zero3 = *o.grad_reduce_overlap;
  }
  if (o.param_gather_overlap) {
    p.overlap.param_gather = *o.param_gather_overlap;
    p.overlap.param_gather_sharded_optimizer = *o.param_gather_overlap;
  }
  if (o.kbit_fp32_upcast) p.kbit_fp32_upcast = *o.kbit_fp32_upcast;
  if (o.compile) {
    p.saved.norm_fp32_copy = false;
    p.saved.rope_fp32_copy = false;
    p.saved.kv_expanded = false;
    p.fused_pointwise = true;  // Inductor fuses the pointwise ops between matmuls
  }
  return p;
}

ServingPolicy WithSettings(const ServingPolicy& engine, const ServingOverrides& o,
                           int64_t model_context) {
  ServingPolicy p = AtVersion(engine, o.version);
  if (o.memory_fraction) p.memory_fraction = *o.memory_fraction;
  if (o.static_fraction) p.static_fraction = *o.static_fraction;
  if (o.enforce_eager) {
    p.graph_bytes = 0;
    p.eager_decode = true;
  }
  if (o.block_size) p.block_tokens = *o.block_size;
  if (o.n_ctx > 0) p.context_tokens = o.n_ctx;
  if (o.n_gpu_layers >= 0) p.gpu_layers = o.n_gpu_layers;
  if (o.n_cpu_moe >= 0) p.cpu_moe_layers = o.n_cpu_moe;
  if (o.k_bytes) p.k_bytes = *o.k_bytes;
  if (o.v_bytes) p.v_bytes = *o.v_bytes;
  p.max_model_len = o.max_model_len;
  // Whole prompts in a batch: the longest prompt the model takes is one batch.
  const int64_t model_len = o.max_model_len > 0 ? o.max_model_len : model_context;
  const bool whole = p.whole_prompts && model_len > 0 && model_len <= p.chunked_above;
  for (CapTier& t : p.caps) {
    if (whole) t.max_batched_tokens = std::max(model_len, p.whole_prompt_min_tokens);
    if (o.max_batched_tokens) t.max_batched_tokens = *o.max_batched_tokens;
    if (o.max_seqs) t.max_seqs = *o.max_seqs;
  }
  return p;
}

}  // namespace gpuplan
