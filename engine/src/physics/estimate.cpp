// SPDX-License-Identifier: MIT
#include "physics/estimate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "core/units.h"
#include "physics/error_bands.h"
#include "physics/stack_figures.h"

namespace gpuplan {
namespace {

double D(int64_t v) { return static_cast<double>(v); }

std::string Gib(double bytes) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / kGiB);
  return buf;
}

void AddWarnings(const Request& r, const ParamCounts& c, Estimate* e) {
  const ModelSpec& m = r.model;
  const Parallel& p = r.parallel;
  const auto warn = [e](std::string code, std::map<std::string, double> params, std::string msg) {
    e->warnings.push_back(Note{std::move(code), std::move(params), std::move(msg)});
  };
  if (m.declared_params > 0) {
    const double diff = std::fabs(D(c.total) - D(m.declared_params)) / D(m.declared_params);
    if (diff > 0.01) {
      warn("params_mismatch", {{"declared", D(m.declared_params)}, {"derived", D(c.total)}},
           "the stated params (" + std::to_string(m.declared_params) +
               ") differ from the architecture's count (" + std::to_string(c.total) +
               ") by more than 1%; the architecture's count is used");
    }
  }
  if (!m.IsMla() && p.tp > m.kv_heads && p.tp % m.kv_heads == 0) {
    warn("kv_heads_replicated", {{"tp", D(p.tp)}, {"kv_heads", D(m.kv_heads)}},
         "tensor parallel exceeds the key/value heads: each GPU keeps a replica of one KV head");
  }
  if (r.workload.IsTraining() && p.zero > 0 && p.ShardGroup() <= 1) {
    warn("zero_without_data_parallel", {{"zero", D(p.zero)}},
         "ZeRO shards over data-parallel ranks; with one there is nothing to shard");
  }
  if (p.sequence_parallel && p.tp == 1) {
    warn("sequence_parallel_without_tp", {},
         "sequence parallelism splits activations over tp ranks; tp is 1");
  }
  const GpuSpec& g = r.gpu;
  const WeightFormat wf = r.precision.weights;
  const bool needs_fp8 = wf == WeightFormat::kFp8 || r.precision.kv_cache == KvFormat::kFp8;
  if (needs_fp8 && g.fp8_flops <= 0) {
    warn("precision_not_native", {},
         g.name + " has no fp8 units: fp8 is storage only, computed in " +
             (g.bf16_flops > 0 ? "bf16" : "fp16"));
  }
  if ((wf == WeightFormat::kBf16) && g.bf16_flops <= 0 && g.fp16_flops > 0) {
    warn("precision_not_native", {}, g.name + " has no bf16 units: runs in fp16 (or emulated)");
  }
  const std::string& gen = g.generation;
  if (r.techniques.flash_attention && (gen == "volta" || gen == "turing")) {
    warn("flash_attention_unsupported", {},
         "FlashAttention 2 needs Ampere or newer; on " + g.name +
             " the memory-efficient SDPA kernel gives the same memory, at lower speed");
  }
  if (r.optimizer == Optimizer::kPagedAdamW8bit && r.workload.IsTraining()) {
    warn("paged_optimizer_states", {},
         "paged 8-bit Adam keeps its states in CUDA unified memory, outside PyTorch's allocator: "
         "they are not in the per-GPU total and page to host RAM under pressure");
  }
  if (p.cp > 1) {
    warn("parallel_communication_not_modelled", {{"cp", D(p.cp)}},
         "context-parallel ring attention traffic is not in the time estimate: it is optimistic "
         "for cp above 1");
  }
  if (r.workload.IsTraining() && r.workload.seq_len % p.cp != 0) {
    warn("seq_len_not_divisible_by_cp", {{"seq_len", D(r.workload.seq_len)}, {"cp", D(p.cp)}},
         "context parallel splits the sequence evenly; seq_len is not a multiple of cp");
  }
}

void ExplainMemory(const Request& r, const ParamCounts& c, Estimate* e) {
  const MemoryResult& mr = e->memory;
  const auto& d = mr.detail;
  const auto get = [&d](const char* k) {
    const auto it = d.find(k);
    return it == d.end() ? 0.0 : it->second;
  };
  const Parallel& p = r.parallel;
  auto& x = e->explain;
  const std::string base = "/memory/per_gpu_bytes/";
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
      {"bitsandbytes, GPTQ, AWQ and fp8 formats keep embeddings, lm_head and norms in 16 bits",
       "GGUF Q4_K_M: Q4_K body, Q6_K lm_head, Q6_K attn_v/ffn_down on llama.cpp's use_more_bits "
       "layers"}};
  x[base + "gradients"] = {
      "trainable parameters on this GPU x gradient bytes (2 in bf16/fp16, 4 in fp32); "
      "/ data-parallel ranks under ZeRO-2/3; one tensor's worth with optimizer-in-backward",
      {{"zero", D(p.zero)}, {"shard_group", D(p.ShardGroup())}},
      {}};
  x[base + "optimizer_states"] = {
      "trainable parameters x (optimizer state bytes + fp32 master copy bytes); / data-parallel "
      "ranks under ZeRO-1/2/3; 0 on the GPU when offloaded or paged",
      {{"master_bytes", get("optimizer_states.master_weights")},
       {"moment_bytes", get("optimizer_states.moments")}},
      {"AdamW: two fp32 moments = 8 bytes/param; with bf16 weights, bf16 gradients and an fp32 "
       "master copy the total is 16 bytes/param (ZeRO paper)"}};
  if (r.workload.IsTraining()) {
    x[base + "activations"] = {
        "per layer and token: norm inputs, QKV input, q/k/v, attention output, MLP input and "
        "intermediates (Korthikanti et al. 2022, 34sbh + 5as^2b for GPT, generalised to GQA, "
        "gated MLP, MoE); x layers on the stage x micro_batch x seq_len / cp x in-flight "
        "micro-batches; + logits and loss buffer",
        {{"layers_bytes", get("activations.layers")},
         {"recompute_working_set_bytes", get("activations.recompute_working_set")},
         {"logits_and_loss_bytes", get("activations.logits_and_loss")},
         {"micro_batch", D(r.workload.micro_batch)},
         {"seq_len", D(r.workload.seq_len)},
         {"vocab", D(r.model.vocab)}},
        {r.techniques.flash_attention ? "flash attention keeps no s^2 scores, only a logsumexp"
                                      : "without flash attention the softmax output (a x s^2 "
                                        "per sequence) is kept unless recomputed",
         r.techniques.recompute == Recompute::kFull
             ? "full recomputation keeps only each layer's input, plus one layer during backward"
             : (r.techniques.recompute == Recompute::kSelective
                    ? "selective recomputation re-runs the attention core only"
                    : "no recomputation: every saved tensor of every layer is kept"),
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
  x[base + "buffers"] = {
      "ZeRO-3/FSDP or offload: two gathered layers (current + prefetch); quantised bases: one "
      "dequantised weight; data parallel: two 25 MiB gradient buckets",
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
  x["/memory/total_bytes"] = {"sum of the seven per-GPU parts", {}, {}};
  x["/memory/total_with_headroom_bytes"] = {
      "total_bytes x (1 + headroom)",
      {{"headroom", r.headroom}},
      {"seed 000: leave about two tenths on top for input-length swings and temporary peaks"}};
  x["/memory/capacity_bytes"] = {"the card's memory", {{"memory_bytes", r.gpu.memory_bytes}}, {}};
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
      {"seed 003: full training lands in the teens, parameter-efficient fine-tuning in single "
       "digits, inference a few times the weights"}};
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

double HostRam(const Request& r, const Estimate& e, Estimate* out) {
  // Seed 001's rules of thumb for host memory per node, plus what offloading keeps there.
  const double per_node = D(e.gpus_per_node_used);
  const double vram = r.gpu.memory_bytes;
  double rule = 0;
  std::string which;
  if (!r.workload.IsTraining()) {
    rule = 0.5 * vram * per_node;
    which = "serving: 0.5 x VRAM";
  } else if (r.parallel.gpus == 1) {
    rule = 1.5 * vram;
    which = "single-card training: 1.5 x VRAM";
  } else {
    rule = 0.8 * vram * per_node;
    which = "multi-card training: 0.8 x total VRAM of the node";
  }
  // Seed 001: dataset x preprocessing expansion (1.5-3, 2 taken) + at least 20% system overhead.
  const double data = r.host.dataset_bytes * 2.0 * 1.2;
  const double offloaded = e.memory.offloaded_bytes_per_gpu * per_node;
  const double total = std::max(rule, data) + offloaded;
  out->explain["/memory/host_ram_bytes"] = {
      "max(rule of thumb, dataset x 2 expansion x 1.2 system overhead) + offloaded state of the "
      "node's GPUs",
      {{"rule_bytes", rule},
       {"dataset_term_bytes", data},
       {"offloaded_bytes", offloaded},
       {"gpus_in_node", per_node}},
      {"seed 001 rule used: " + which}};
  return total;
}

// A layout whose data-parallel degree would be 0 (gpus < tp x pp x cp) is infeasible; keep its
// arithmetic defined so the memory figures still come out.
Parallel SafeLayout(const Parallel& p) {
  Parallel safe = p;
  if (safe.Dp() < 1) safe.gpus = safe.tp * safe.pp * safe.cp;
  return safe;
}

MemoryResult MemoryOf(const Request& r, const ParamCounts& c, bool with_detail = true) {
  const Parallel safe = SafeLayout(r.parallel);
  RuntimeOptions runtime = r.runtime;
  if (r.calibration.allocator_slack >= 0) runtime.allocator_slack = r.calibration.allocator_slack;
  const StackProfile& stack = StackOf(r);
  const MemoryInput in{
      r.model, c,       r.workload,     r.precision,  r.optimizer, r.techniques,        safe,
      r.gpu,   runtime, stack.training, stack.engine, with_detail, r.calibration.memory};
  return EstimateMemory(in);
}

void AddTraining(const Request& r, Estimate* e) {
  e->has_training = true;
  Request safe = r;
  safe.parallel = SafeLayout(r.parallel);
  const TrainingPerf& t = e->training = EstimateTraining(safe, e->params);
  const ReliabilityEstimate& rel = e->reliability = EstimateReliability(safe, e->params, t);
  e->explain["/reliability/checkpoint_bytes"] = {
      "trainable weights + fp32 master copy + optimizer moments (LoRA/QLoRA: the adapters only)",
      {},
      {}};
  e->explain["/reliability/checkpoint_write_s"] = {
      "checkpoint_bytes / storage bandwidth",
      {{"storage_bytes_per_s", rel.storage_bytes_per_s}},
      {r.host.storage_bytes_per_s > 0 ? "the request's storage bandwidth"
                                      : "2 GB/s assumed: give host.storage_bytes_per_s"}};
  e->explain["/reliability/expected_interruptions"] = {
      "1.973e-5 interruptions per GPU-hour x gpus x hours",
      {{"per_gpu_hour", kInterruptionsPerGpuHour}},
      {"rate: 419 unexpected interruptions in 54 days on 16,384 H100s (Llama 3 paper, section "
       "3.3.4)"}};
  e->explain["/reliability/checkpoint_interval_s"] = {
      "Young/Daly: sqrt(2 x checkpoint_write_s x the job's mean time between failures)", {}, {}};
  e->explain["/reliability/expected_lost_s"] = {
      "interruptions x (interval / 2 + restart) + checkpoint writes",
      {{"restart_s", kRestartSeconds}},
      {"restart time (reschedule and reload) assumed"}};
  const Efficiencies eff = DefaultEfficiencies(r.gpu);
  auto& x = e->explain;
  const std::string base = "/performance/training/";
  x[base + "flops_per_token"] = {
      "(6, or 4 for LoRA/QLoRA's frozen base) x N + 6 x adapters + 6 x layers x seq_len x (q + o "
      "widths); N = active parameters in matmuls (the tied head counts, the lookup does not)",
      {{"matmul_params", t.flops.matmul_params},
       {"hardware_flops_per_token", t.flops.hardware_per_token}},
      {"recomputation is not counted here (it is in hardware_flops_per_token)",
       "causal attention counted in full, as llm-foundry's MFU does"}};
  x[base + "tokens_per_s"] = {
      "tokens per step / step time; step = compute + pipeline bubble + tensor-parallel "
      "all-reduces + expert-parallel all-to-alls (dispatch and combine of every token's "
      "hidden state to its k experts, per MoE layer, forward and backward) + data-parallel "
      "traffic not hidden behind compute",
      {{"compute_s", t.compute_s},
       {"bubble_s", t.bubble_s},
       {"tp_comm_s", t.tp_comm_s},
       {"ep_comm_s", t.ep_comm_s},
       {"dp_comm_s", t.dp_comm_s},
       {"dp_exposed_s", t.dp_exposed_s},
       {"step_s", t.step_s},
       {"tokens_per_step", t.tokens_per_step},
       {"peak_flops", t.peak_flops},
       {"efficiency", t.efficiency},
       {"dp_bandwidth_bytes_per_s", t.dp_bandwidth},
       {"tp_bandwidth_bytes_per_s", t.tp_bandwidth}},
      {"compute efficiency: " + eff.basis,
       std::string("data-parallel traffic overlaps the last micro-batch's backward pass ") +
           "(ZeRO-3: every micro-batch's compute)",
       std::string("pipeline stages: the busiest one (ceil(L/pp) layers, the last with the ") +
           "head) sets the pace",
       "links run at 80% of their rated bandwidth (NCCL bus bandwidth)",
       t.dp_crosses_nodes ? "data parallelism crosses nodes: the inter-node network carries it"
                          : "data parallelism stays inside one node"}};
  x[base + "mfu"] = {"flops_per_token x tokens_per_s / (gpus x dense bf16 peak)", {}, {}};
  x[base + "scaling_efficiency"] = {"compute time / step time", {}, {}};
  x[base + "time_s"] = {"workload.tokens / tokens_per_s", {{"tokens", t.tokens}}, {}};
  x[base + "gpu_hours"] = {"time_s x gpus / 3600", {}, {}};
}

bool FitsAt(const Request& r, const Estimate& e, int64_t concurrency) {
  if (e.framework.max_seqs > 0 && concurrency > e.framework.max_seqs) return false;
  Request q = r;
  q.workload.SetConcurrency(concurrency);
  const MemoryResult m = MemoryOf(q, e.params, /*with_detail=*/false);
  return m.per_gpu.Total() * (1 + r.headroom) <= r.gpu.memory_bytes &&
         m.per_gpu.kv_cache <= KvPool(q, m.per_gpu);
}

// What one tensor-parallel rank reads per decode step across all pipeline stages: its share of
// every weight but the untied embedding table (a lookup reads only the batch's rows), and the
// KV cache per token of context.
std::pair<double, double> DecodeReads(const Request& r, const ParamCounts& c) {
  Request one = r;
  one.parallel.pp = 1;
  one.parallel.zero = 0;
  one.parallel.gpus = r.parallel.tp * r.parallel.cp;
  const MemoryResult m = MemoryOf(one, c);
  double weights = m.per_gpu.weights;
  if (!r.model.tied_embeddings) {
    const FormatBits b = Bits(r.precision.weights, r.precision.quant);
    const bool fp32 =
        r.precision.weights == WeightFormat::kFp32 || r.precision.weights == WeightFormat::kTf32;
    const double bits = b.embeddings_16bit ? (fp32 ? 32 : 16) : b.embedding_bits;
    weights -= D(r.model.vocab) * D(r.model.hidden) * bits / 8 / D(r.parallel.tp);
  }
  const auto kv = m.detail.find("kv_cache.bytes_per_token");
  return {weights, kv == m.detail.end() ? 0.0 : kv->second};
}

void AddServing(const Request& r, Estimate* e) {
  e->has_serving = true;
  Request safe = r;
  safe.parallel = SafeLayout(r.parallel);
  // Named, not structured bindings: the lambda below captures them (C++17).
  const std::pair<double, double> reads = DecodeReads(safe, e->params);
  const double weights = reads.first;
  const double kv_token = reads.second;
  const auto at = [&](int64_t c) {
    return EstimateInference(safe, e->params, c, weights, kv_token);
  };
  ServingEstimate& s = e->serving;
  s.at_request = at(r.workload.concurrency);
  // Offline batch jobs have no latency target: the batch grows until memory is full.
  const bool offline = r.workload.mode == InferenceMode::kOffline;
  const double ttft_target = offline ? 0 : r.constraints.ttft_ms / 1e3;
  const double tpot_target = offline ? 0 : r.constraints.tpot_ms / 1e3;
  const auto meets = [&](const InferencePerf& p) {
    return (ttft_target <= 0 || p.ttft_s <= ttft_target) &&
           (tpot_target <= 0 || p.tpot_s <= tpot_target);
  };
  // A setup that does not fit meets no target.
  s.meets_targets = meets(s.at_request) && e->fits;
  // Memory and latency both grow with concurrency, so the largest acceptable one is found by
  // doubling, then bisecting.
  const auto ok = [&](int64_t c) {
    return e->infeasible.empty() || e->infeasible[0].code == "exceeds_memory" ||
                   e->infeasible[0].code == "exceeds_engine_kv_pool"
               ? FitsAt(safe, *e, c) && meets(at(c))
               : false;
  };
  int64_t lo = 0;
  int64_t hi = 1;
  constexpr int64_t kMax = int64_t{1} << 20;
  while (hi <= kMax && ok(hi)) {
    lo = hi;
    hi *= 2;
  }
  while (hi - lo > 1 && lo < kMax) {
    const int64_t mid = lo + (hi - lo) / 2;
    (ok(mid) ? lo : hi) = mid;
  }
  s.max_concurrency = lo;
  s.max_throughput_tokens_per_s = lo > 0 ? at(lo).decode_tokens_per_s_total : 0;
  const InferencePerf& p = s.at_request;
  const Efficiencies eff = DefaultEfficiencies(r.gpu);
  auto& x = e->explain;
  const std::string base = "/performance/inference/";
  x[base + "tpot_ms"] = {
      "max(bytes read per step / (bandwidth x efficiency), FLOPs per step / (peak x efficiency)) "
      "+ two tensor-parallel all-reduces per layer + an expert-parallel dispatch and combine "
      "per MoE layer; bytes = weights (MoE: the experts the batch routes to) + the batch's KV "
      "cache at the average context (sliding-window layers: at most the window)",
      {{"bytes_per_step", p.bytes_per_step},
       {"flops_per_step", p.flops_per_step},
       {"tp_comm_s", p.tp_comm_s},
       {"ep_comm_s", p.ep_comm_s},
       {"bandwidth_efficiency", std::min(1.0, eff.decode_bandwidth * r.calibration.bandwidth)},
       {"compute_bound", p.compute_bound ? 1.0 : 0.0}},
      {"decode efficiency: " + eff.basis}};
  x[base + "ttft_ms"] = {
      "prefill of one prompt: (2N x prompt + layers x prompt^2 x (q + o widths)) / tp / (peak x "
      "efficiency) + its all-reduces; queueing not included",
      {{"prompt_tokens", D(r.workload.prompt_tokens)},
       {"prefill_efficiency", std::min(1.0, eff.prefill_compute * r.calibration.compute)}},
      {}};
  x[base + "max_concurrency"] = {
      offline ? "largest number of sequences per replica whose memory fits with the headroom "
                "(offline: no latency target)"
              : "largest number of sequences per replica whose memory fits with the headroom "
                "and whose TTFT and TPOT meet the targets",
      {{"ttft_target_ms", r.constraints.ttft_ms}, {"tpot_target_ms", r.constraints.tpot_ms}},
      {}};
  x[base + "decode_tokens_per_s_total"] = {"concurrency / TPOT", {}, {}};
}

void AddPower(const Request& r, Estimate* e) {
  PowerEstimate& p = e->power;
  const GpuSpec& g = r.gpu;
  const double per_gpu = g.board_power_w * (1 + kNodeOverheadFraction);
  p.gpu_watts = g.board_power_w;
  p.node_watts = per_gpu * D(e->gpus_per_node_used);
  p.total_watts = per_gpu * D(r.parallel.gpus);
  p.nodes = (r.parallel.gpus + g.gpus_per_node - 1) / g.gpus_per_node;
  const std::vector<std::string> overhead = {
      "servers draw 0.8x their GPU boards again for CPUs, memory, NICs and fans (DGX H100: "
      "10.2 kW for 5.6 kW of GPUs)"};
  e->explain["/power/gpu_watts"] = {
      "the card's board power", {{"board_power_w", g.board_power_w}}, {}};
  e->explain["/power/node_watts"] = {"board power x 1.8 x GPUs in one node",
                                     {{"gpus_in_node", D(e->gpus_per_node_used)}},
                                     overhead};
  e->explain["/power/total_watts"] = {
      "board power x 1.8 x GPUs of the job", {{"gpus", D(r.parallel.gpus)}}, overhead};
  const Constraints& site = r.constraints;
  // Seed 003: a site that cannot feed or cool a card makes it throttle.
  if (site.node_power_w > 0 && p.node_watts > site.node_power_w) {
    e->warnings.push_back(Note{"node_power_over_limit",
                               {{"node_watts", p.node_watts}, {"limit_w", site.node_power_w}},
                               "a node draws about " + std::to_string(std::lround(p.node_watts)) +
                                   " W, above the site's " +
                                   std::to_string(std::lround(site.node_power_w)) +
                                   " W per node: cards will throttle or the node will not fit",
                               "/constraints/node_power_w"});
  }
  if (site.rack_power_w > 0) {
    p.nodes_per_rack = static_cast<int64_t>(site.rack_power_w / std::max(1.0, p.node_watts));
    if (p.nodes_per_rack == 0) {
      e->warnings.push_back(Note{"rack_power_below_one_node",
                                 {{"node_watts", p.node_watts}, {"rack_w", site.rack_power_w}},
                                 "one node draws more than a rack's power budget",
                                 "/constraints/rack_power_w"});
    }
  }
  if (site.cooling == "air" && g.cooling == "liquid") {
    e->warnings.push_back(Note{"cooling_mismatch",
                               {},
                               g.name + " needs liquid cooling; the site offers air only",
                               "/constraints/cooling"});
  }
}

void AddCost(const Request& r, Estimate* e) {
  CostEstimate& c = e->cost;
  const double price =
      r.usd_per_gpu_hour >= 0 ? r.usd_per_gpu_hour : r.gpu.usd_per_hour.value_or(-1);
  if (price < 0) return;
  c.priced = true;
  c.usd_per_gpu_hour = price;
  c.usd_per_hour = price * D(r.parallel.gpus);
  double tokens_per_s = 0;
  if (e->has_training) {
    c.usd_total = c.usd_per_hour * e->training.time_s / 3600;
    tokens_per_s = e->training.tokens_per_s;
  } else if (e->has_serving) {
    tokens_per_s = e->serving.at_request.decode_tokens_per_s_total;
  }
  c.usd_per_million_tokens = tokens_per_s > 0 ? c.usd_per_hour / (tokens_per_s * 3600) * 1e6 : -1;
  e->explain["/cost/usd_per_hour"] = {
      "price per GPU-hour x gpus",
      {{"usd_per_gpu_hour", price}},
      {r.usd_per_gpu_hour >= 0 ? "the request's price"
                               : "the catalog's indicative on-demand price"}};
  e->explain["/cost/usd_per_million_tokens"] = {
      e->has_training
          ? "usd_per_hour / (training tokens per hour) x 10^6"
          : "usd_per_hour / (output tokens per hour at the requested concurrency) x 10^6",
      {},
      {}};
}

// A serving engine's prefill chunk depends on the card: the reader leaves 0 for it.
bool NeedsEngineDefaults(const Request& r) {
  return StackOf(r).serving && !r.workload.IsTraining() && r.workload.prefill_chunk_limit == 0;
}

Request WithEngineDefaults(const Request& r) {
  Request q = r;
  q.workload.prefill_chunk_limit =
      DefaultsOn(StackOf(r).engine, r.gpu, SafeLayout(r.parallel)).max_batched_tokens;
  q.workload.SetConcurrency(q.workload.concurrency);
  return q;
}

}  // namespace

FitCheck CheckFit(const Request& r, const ParamCounts& c) {
  if (NeedsEngineDefaults(r)) return CheckFit(WithEngineDefaults(r), c);
  FitCheck f;
  f.layout_ok =
      CheckLayout(r.model, r.parallel).empty() && LayoutProblem(StackOf(r), r.parallel).empty();
  const MemoryBreakdown b = MemoryOf(r, c, /*with_detail=*/false).per_gpu;
  f.total_bytes = b.Total();
  f.total_with_headroom_bytes = f.total_bytes * (1 + r.headroom);
  f.fits = f.layout_ok && f.total_with_headroom_bytes <= r.gpu.memory_bytes &&
           b.kv_cache <= KvPool(r, b);
  return f;
}

// Marks every figure a calibration factor changed, so no calibrated number passes as a plain
// estimate, and warns when the factors come from another card.
void AddCalibration(const Request& r, Estimate* e) {
  const CalibrationFactors& c = r.calibration;
  if (!c.Any()) return;
  auto mark = [e](const std::string& ptr, const std::string& what) {
    const auto it = e->explain.find(ptr);
    if (it != e->explain.end()) it->second.assumptions.push_back(what);
  };
  const std::string on = c.measured_on.empty() ? "a measured run" : c.measured_on;
  auto factor = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "x%.3g", v);
    return std::string(buf);
  };
  if (c.memory != 1) {
    const std::string m = "calibrated on " + on + ": modelled memory " + factor(c.memory);
    mark("/memory/per_gpu_bytes/activations", m);
    mark("/memory/per_gpu_bytes/buffers", m);
  }
  if (c.allocator_slack >= 0) {
    mark("/memory/per_gpu_bytes/runtime", "calibrated on " + on + ": allocator slack " +
                                              factor(c.allocator_slack) + " of the tensors");
  }
  if (c.compute != 1 || c.interconnect != 1) {
    const std::string t = "calibrated on " + on + ": compute efficiency " + factor(c.compute) +
                          ", interconnect bandwidth " + factor(c.interconnect);
    mark("/performance/training/tokens_per_s", t);
    mark("/performance/inference/ttft_ms", t);
  }
  if (c.bandwidth != 1 || c.interconnect != 1) {
    mark("/performance/inference/tpot_ms", "calibrated on " + on + ": memory bandwidth " +
                                               factor(c.bandwidth) + ", interconnect bandwidth " +
                                               factor(c.interconnect));
  }
  if (!c.measured_on.empty() && c.measured_on != r.gpu.id) {
    e->warnings.push_back(Note{"calibration_other_card",
                               {},
                               "calibration factors measured on " + c.measured_on +
                                   " are applied to " + r.gpu.id +
                                   ": a different card may not share them; measure on it",
                               "/calibration/measured_on"});
  }
}

Estimate EstimateSetup(const Request& r, bool with_levers) {
  if (NeedsEngineDefaults(r)) return EstimateSetup(WithEngineDefaults(r), with_levers);
  Estimate e;
  e.params = CountParams(r.model);
  e.infeasible = CheckLayout(r.model, r.parallel);
  const std::string problem = LayoutProblem(StackOf(r), r.parallel);
  if (!problem.empty()) e.infeasible.push_back(Note{"framework_layout", {}, problem, "/parallel"});
  e.memory = MemoryOf(r, e.params);
  e.capacity_bytes = r.gpu.memory_bytes;
  e.total_bytes = e.memory.per_gpu.Total();
  e.total_with_headroom_bytes = e.total_bytes * (1 + r.headroom);
  e.fits = e.infeasible.empty() && e.total_with_headroom_bytes <= e.capacity_bytes;
  if (e.infeasible.empty() && !e.fits) {
    e.infeasible.push_back(
        Note{"exceeds_memory",
             {{"need_bytes", e.total_with_headroom_bytes}, {"capacity_bytes", e.capacity_bytes}},
             "needs " + Gib(e.total_with_headroom_bytes) + " per GPU with " +
                 std::to_string(static_cast<int>(std::lround(r.headroom * 100))) + "% headroom; " +
                 r.gpu.name + " has " + Gib(e.capacity_bytes)});
  }
  AddFramework(r, &e);
  e.gpus_per_node_used = std::max<int64_t>(1, std::min(r.parallel.gpus, r.gpu.gpus_per_node));
  AddWarnings(r, e.params, &e);
  for (const auto& w : e.memory.warnings) e.warnings.push_back(w);
  ExplainMemory(r, e.params, &e);
  e.host_ram_bytes = HostRam(r, e, &e);
  if (r.host.ram_bytes_per_node > 0 && e.host_ram_bytes > r.host.ram_bytes_per_node) {
    e.warnings.push_back(
        Note{"host_ram_short",
             {{"need_bytes", e.host_ram_bytes}, {"have_bytes", r.host.ram_bytes_per_node}},
             "host RAM per node (" + Gib(r.host.ram_bytes_per_node) + ") is below the " +
                 Gib(e.host_ram_bytes) + " this setup wants: data loading will starve the GPUs"});
  }
  AddPower(r, &e);
  if (r.workload.IsTraining()) {
    AddTraining(r, &e);
  } else {
    AddServing(r, &e);
  }
  AddCost(r, &e);
  AddCalibration(r, &e);
  AddBands(r, &e);
  if (with_levers) {
    e.levers = MemoryLevers(r, e.total_bytes);
    if (!e.fits && e.infeasible.size() == 1 && e.infeasible[0].code == "exceeds_memory") {
      const auto fix =
          std::find_if(e.levers.begin(), e.levers.end(), [](const Lever& l) { return l.fits; });
      if (fix != e.levers.end()) {
        e.infeasible[0].message += "; setting " + fix->path + " to " + fix->value + " fits (" +
                                   Gib(fix->total_with_headroom_bytes) +
                                   "), at a cost: " + fix->cost;
      }
    }
  }
  return e;
}

}  // namespace gpuplan
