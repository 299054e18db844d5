// SPDX-License-Identifier: MIT
// The formula and inputs behind every memory figure and the parameter counts (the result's
// explain), from the figures the memory model recorded.
#include <algorithm>
#include <string>

#include "physics/estimate_parts.h"

namespace gpuplan {
namespace {

std::string RecomputeWords(const MemoryTechniques& t) {
  switch (t.recompute) {
    case Recompute::kFull:
      return "full recomputation keeps only each layer's input, plus one layer during backward";
    case Recompute::kSelective:
      return "selective recomputation re-runs the attention core only";
    case Recompute::kOpSelective:
      return "op-level selective checkpointing (torchtitan) keeps attention's output and every "
             "other matmul's (q, v, gate, down), recomputing the rest";
    case Recompute::kEveryNLayers:
      return "every " + std::to_string(t.recompute_every) +
             "-th layer is fully recomputed (its input kept), the others keep every tensor";
    case Recompute::kNone:
      break;
  }
  return "no recomputation: every saved tensor of every layer is kept";
}

using text::D;

using Explains = std::map<std::string, Explanation>;

double Recorded(const MemoryResult& m, const char* key) {
  const auto it = m.detail.find(key);
  return it == m.detail.end() ? 0.0 : it->second;
}

// Weights, gradients and optimizer states: exact counts of what each parameter keeps.
void ExplainParameterParts(const Setup& r, const ParamCounts& c, const Estimate& e, Explains* out) {
  const auto get = [&e](const char* k) { return Recorded(e.memory, k); };
  auto& x = *out;
  const std::string base = "/memory/per_gpu_bytes/";
  const Parallel& p = r.parallel;
  const std::string fmt(Name(r.precision.weights));
  x[base + "weights"] = {
      "weight matrices x bits per weight of " + fmt +
          " (group scales included) + embeddings/lm_head + norms, biases and routers; split over "
          "tp (and ep for experts), over pp stages, and over data-parallel ranks under ZeRO-3",
      {{"params_total", D(c.total)},
       {"linear_bytes", get("weights.linear")},
       {"embedding_and_head_bytes", get("weights.embedding_and_head")},
       {"norms_biases_routers_bytes", get("weights.norms_biases_routers")},
       {"lora_adapter_bytes", get("weights.lora_adapters")},
       {"tp", D(p.tp)},
       {"pp", D(p.pp)},
       {"ep", D(p.ep)},
       {"zero", D(p.zero)}},
      {"bitsandbytes, GPTQ, AWQ, fp8, MX and NVFP4 formats keep embeddings, lm_head and norms in "
       "16 bits (mxfp4_experts: only the routed experts are MXFP4)",
       "GGUF Q4_K_M: Q4_K body, Q6_K lm_head, Q6_K attn_v/ffn_down on llama.cpp's use_more_bits "
       "layers"}};
  x[base + "gradients"] = {
      "what is alive at the step's peak (/memory/total_bytes): at the end of backward every "
      "gradient, trainable parameters on this GPU x gradient bytes (2 in bf16/fp16, 4 in "
      "fp32), / data-parallel ranks under ZeRO-2/3, one tensor's worth with "
      "optimizer-in-backward; at the end of forward all when the stack keeps its gradient "
      "buffer between steps or grad_accum > 1, else only the first ones backward makes (the "
      "head's on the last stage)",
      {{"all_gradients_bytes", get("gradients.all")},
       {"grad_accum", D(r.workload.grad_accum)},
       {"zero", D(p.zero)},
       {"shard_group", D(p.ShardGroup())}},
      {"optimizer.zero_grad() sets gradients to None by default (PyTorch 2.0 on): a step's "
       "gradients are made by its backward"}};
  x[base + "optimizer_states"] = {
      "trainable parameters x (optimizer state bytes + fp32 master copy bytes); / data-parallel "
      "ranks under ZeRO-1/2/3; 0 on the GPU when offloaded or paged; when the optimizer step "
      "is the peak, + the step's temporaries: Adam(W) with torch.optim's foreach kernel "
      "(optimizer_kernel) takes the square root of every second moment at once, half the "
      "moment bytes; a for-loop step twice its largest parameter's; a fused kernel none",
      {{"master_bytes", get("optimizer_states.master_weights")},
       {"moment_bytes", get("optimizer_states.moments")},
       {"step_temporaries_bytes", get("optimizer_states.step_temporaries")}},
      {"AdamW: two fp32 moments = 8 bytes/param; with bf16 weights, bf16 gradients and an fp32 "
       "master copy the total is 16 bytes/param (ZeRO paper)",
       "torch.optim uses foreach on CUDA unless told fused=True (torch/optim/optimizer.py, "
       "_default_to_fused_or_foreach); the Hugging Face Trainer asks for fused from torch 2.8"}};
}

// Activations (training: saved for backward; serving: the prefill working set) and the KV cache.
void ExplainActivations(const Setup& r, const Estimate& e, Explains* out) {
  const auto get = [&e](const char* k) { return Recorded(e.memory, k); };
  auto& x = *out;
  const std::string base = "/memory/per_gpu_bytes/";
  if (r.workload.IsTraining()) {
    x[base + "activations"] = {
        "per layer and token: norm inputs, QKV input, q/k/v, attention output, MLP input and "
        "intermediates (Korthikanti et al. 2022, 34sbh + 5as^2b for GPT, generalised to GQA, "
        "gated MLP, MoE); x layers on the stage x micro_batch x seq_len / cp x in-flight "
        "micro-batches; at the step's peak: the end of forward holds them all + logits and "
        "loss; the end of backward, which frees each layer's as it makes its gradients, the "
        "other in-flight micro-batches' + the first layer's + the recompute working set + the "
        "backward working set (2 x tokens x hidden on the residual stream + the MLP "
        "intermediates' gradients)",
        {{"layers_bytes", get("activations.layers")},
         {"first_layer_bytes", get("activations.first_layer")},
         {"recompute_working_set_bytes", get("activations.recompute_working_set")},
         {"backward_working_set_bytes", get("activations.backward_working_set")},
         {"logits_and_loss_bytes", get("activations.logits_and_loss")},
         {"micro_batch", D(r.workload.micro_batch)},
         {"seq_len", D(r.workload.seq_len)},
         {"vocab", D(r.model.vocab)}},
        {r.techniques.flash_attention ? "flash attention keeps no s^2 scores, only a logsumexp"
                                      : "without flash attention the softmax output (a x s^2 "
                                        "per sequence) is kept unless recomputed",
         RecomputeWords(r.techniques),
         r.techniques.chunked_loss
             ? "chunked loss: 16-bit logits kept, one chunk upcast to fp32 at a time"
             : "the logits are upcast to fp32 for the loss, and fp32 log-probabilities kept"}};
  } else {
    x[base + "activations"] = {
        "transient working set of one prefill chunk (residual + the wider of the MLP "
        "intermediates and attention's q/k/v/o) + fp32 logits of the last position per sequence",
        {{"prefill_chunk_tokens", D(r.workload.prefill_chunk_tokens)},
         {"prefill_working_set_bytes", get("activations.prefill_working_set")},
         {"logits_bytes", get("activations.logits")}},
        {}};
    x[base + "kv_cache"] = {
        r.model.IsMla()
            ? "layers x (kv_lora_rank + qk_rope_head_dim) x bytes x (prompt + output) "
              "tokens x concurrency (MLA caches the compressed latent)"
            : "2 (K and V) x layers x kv_heads/tp x head_dim x bytes x (prompt + output) "
              "tokens x concurrency; sliding-window layers hold at most the window",
        {{"bytes_per_token", get("kv_cache.bytes_per_token")},
         {"sliding_window", D(r.model.sliding_window)},
         {"local_layers", D(r.model.LocalLayers(0, r.model.layers))},
         {"tokens_per_sequence", D(r.workload.prompt_tokens + r.workload.output_tokens)},
         {"concurrency", D(r.workload.concurrency)},
         {"kv_bytes_per_element", BytesPerElement(r.precision.kv_cache)}},
        {}};
  }
}

// Buffers, the runtime the allocator never sees, and the totals and fit built on the parts.
void ExplainBuffersAndTotals(const Setup& r, const ParamCounts& c, const Estimate& e,
                             Explains* out) {
  const auto get = [&e](const char* k) { return Recorded(e.memory, k); };
  auto& x = *out;
  const std::string base = "/memory/per_gpu_bytes/";
  const Parallel& p = r.parallel;
  x[base + "buffers"] = {
      "ZeRO-3/FSDP or offload: two gathered layers (current + prefetch); quantised bases: one "
      "dequantised weight; data parallel: gradient buckets (plain DDP a flat copy of every "
      "gradient, sharded stages two 25 MiB buckets or the stack's own); at the step's peak, "
      "buckets count at the end of forward only when the stack keeps them between steps or "
      "grad_accum > 1",
      {{"gathered_units_bytes", get("buffers.gathered_units")},
       {"dequantised_weight_bytes", get("buffers.dequantised_weight")},
       {"gradient_bucket_bytes", get("buffers.gradient_buckets")}},
      {}};
  x[base + "runtime"] = {
      "CUDA context + framework reserve (card default, overridable) + NCCL buffers when gpus > 1 "
      "+ allocator slack x the six tensor parts",
      {{"reserve_bytes", get("runtime.reserve")},
       {"communicator_bytes", get("runtime.communicators")},
       {"cuda_graph_bytes", get("runtime.cuda_graphs")},
       {"allocator_slack_bytes", get("runtime.allocator_slack")},
       {"allocator_slack", r.calibration.allocator_slack >= 0 ? r.calibration.allocator_slack
                                                              : r.runtime.allocator_slack}},
      {"runtime is what torch.cuda.max_memory_allocated() does not see"}};
  if (r.workload.IsTraining()) {
    const double forward = get("peak.end_of_forward");
    const double backward = get("peak.end_of_backward");
    const double step = get("peak.optimizer_step");
    const char* binds =
        step > std::max(forward, backward)
            ? "the optimizer step binds: its temporaries and every gradient outweigh the "
              "activations the passes hold"
        : forward > backward ? "the end of forward binds: saved activations outweigh the "
                               "gradients backward makes"
                             : "the end of backward binds: the gradients outweigh the "
                               "activations backward frees";
    x["/memory/total_bytes"] = {
        "sum of the seven per-GPU parts at the step's peak, the largest of three moments, each "
        "(...) x (1 + allocator_slack) + reserve + communicators: end of forward, into the "
        "loss's backward = (weights + optimizer states + gradients kept from before, else the "
        "first ones backward makes + saved activations + logits and loss + buffers alive "
        "then); end of backward = (weights + optimizer states + all "
        "gradients + activations not yet freed + recompute and backward working sets + "
        "buffers); optimizer step = (weights + optimizer states + the step's temporaries + all "
        "gradients + buffers kept between steps)",
        {{"end_of_forward_bytes", forward},
         {"end_of_backward_bytes", backward},
         {"optimizer_step_bytes", step}},
        {binds}};
  } else {
    x["/memory/total_bytes"] = {"sum of the seven per-GPU parts", {}, {}};
  }
  x["/memory/total_with_headroom_bytes"] = {
      "total_bytes x (1 + headroom)",
      {{"headroom", r.headroom}},
      {"planning rule: leave about two tenths on top for input-length swings and temporary peaks"}};
  if (r.gpu.CapacityBytes() != r.gpu.memory_bytes) {
    x["/memory/capacity_bytes"] = {
        "usable_memory_bytes: the GPU's share of the card's unified memory, not the whole pool",
        {{"memory_bytes", r.gpu.memory_bytes}, {"usable_memory_bytes", r.gpu.usable_memory_bytes}},
        {"the CPU and the OS share the pool; the GPU may wire only the catalog's "
         "usable_memory_gib (Apple silicon: macOS's default limit, "
         "recommendedMaxWorkingSetSize), which sudo sysctl iogpu.wired_limit_mb raises"}};
  } else {
    x["/memory/capacity_bytes"] = {"the card's memory", {{"memory_bytes", r.gpu.memory_bytes}}, {}};
  }
  x["/memory/fits"] = {"total_with_headroom_bytes <= capacity_bytes", {}, {}};
  x["/memory/allocated_bytes"] = {
      "total_bytes - runtime: what torch.cuda.max_memory_allocated() would report", {}, {}};
  x["/memory/offloaded_bytes_per_gpu"] = {
      "optimizer states, master copy, parameters, gradients or activations kept in host memory "
      "(offload), and paged 8-bit Adam states in CUDA unified memory",
      {},
      {}};
  x["/memory/bytes_per_parameter"] = {
      "total_bytes x gpus / params_total",
      {{"gpus", D(p.gpus)}, {"params_total", D(c.total)}},
      {"rule of thumb: full training lands in the teens, parameter-efficient fine-tuning in single "
       "digits, inference a few times the weights"}};
}

void ExplainParams(const Setup& r, const ParamCounts& c, Explains* out) {
  auto& x = *out;
  const ModelSpec& m = r.model;
  x["/model/params_total"] = {
      "embedding (+ learned positions) + lm_head (0 when tied) + final norm + layers x (attention "
      "+ MLP or experts + norms + biases)",
      {{"embedding", D(c.embedding)},
       {"lm_head", D(c.lm_head)},
       {"dense_layers", D(c.dense_layers)},
       {"dense_layer_params", D(c.dense_layer.Total())},
       {"moe_layers", D(c.moe_layers)},
       {"moe_layer_params", D(c.moe_layer.Total())}},
      {m.IsMla() ? "attention: multi-head latent attention (q_a, q_b, kv_a, kv_b, o)"
                 : "attention: q, o of heads x head_dim; k, v of kv_heads x head_dim",
       m.mlp == MlpKind::kGated ? "MLP: gate, up, down" : "MLP: up, down"}};
  x["/model/params_active"] = {
      "params_total - MoE layers x (experts - experts_per_token) x one expert's parameters",
      {{"experts", D(m.moe.experts)},
       {"experts_per_token", D(m.moe.experts_per_token)},
       {"expert_params", D(c.moe_layer.expert_one)}},
      {}};
}

}  // namespace

void ExplainMemory(const Setup& r, const ParamCounts& c, Estimate* e) {
  ExplainParameterParts(r, c, *e, &e->explain);
  ExplainActivations(r, *e, &e->explain);
  ExplainBuffersAndTotals(r, c, *e, &e->explain);
  ExplainParams(r, c, &e->explain);
}

}  // namespace gpuplan
