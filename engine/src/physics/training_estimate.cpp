// SPDX-License-Identifier: MIT
// Training figures: step time and throughput, the run's time and GPU-hours, and its
// reliability (checkpoints, interruptions).
#include <string>

#include "physics/estimate_parts.h"

namespace gpuplan {
namespace {

// One micro-batch's kernels over all of the model's layers and the head, on one rank.
KernelTimes MicroBatchTotal(const ParamCounts& c, const TrainingPerf& t) {
  KernelTimes k = static_cast<double>(c.dense_layers) * t.kernels.dense_layer;
  k += static_cast<double>(c.moe_layers) * t.kernels.moe_layer;
  k += t.kernels.head;
  return k;
}

}  // namespace

using text::D;

void AddTraining(const Setup& r, Estimate* e) {
  e->has_training = true;
  Setup safe = r;
  safe.parallel = SafeLayout(r.parallel);
  const TrainingPerf& t = e->training = EstimateTraining(safe, e->params);
  const ReliabilityEstimate& rel = e->reliability = EstimateReliability(safe, e->params, t);
  if (!e->with_explain) return;
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
  const KernelRates rates = KernelRatesOf(r.gpu);
  auto& x = e->explain;
  const std::string base = "/performance/training/";
  x[base + "flops_per_token"] = {
      "(6, or 4 for LoRA/QLoRA's frozen base) x N + 6 x adapters + 6 x layers x seq_len x (q + o "
      "widths); N = active parameters in matmuls (the tied head counts, the lookup does not)",
      {{"matmul_params", t.flops.matmul_params},
       {"hardware_flops_per_token", t.flops.hardware_per_token}},
      {"recomputation is not counted here (it is in hardware_flops_per_token)",
       "causal attention counted in full, as llm-foundry's MFU does"}};
  const KernelTimes kt = MicroBatchTotal(e->params, t);
  x[base + "tokens_per_s"] = {
      "tokens per step / step time; step = compute + pipeline bubble + tensor-parallel "
      "all-reduces + expert-parallel all-to-alls (dispatch and combine of every token's "
      "hidden state to its k experts, per MoE layer, forward and backward) + data-parallel "
      "traffic not hidden behind compute (dp_exposed_s: the last gradient bucket's reduction "
      "after backward, 2 (n-1)/n x bucket / bandwidth + latency (ZeRO-1/2/3: (n-1)/n, ZeRO-3's "
      "bucket the root unit); ZeRO-3's gathers of the root unit and first layer before each "
      "micro-batch's forward; and whatever outlasts the compute it overlaps) + contention "
      "(0.189 x the compute the collectives overlap) + the optimizer step (this GPU's shard x "
      "bytes read and written per parameter / (memory bandwidth x achievable share)); each "
      "collective's latency is 12.5 + 6.1 log2(n) us (x3 over PCIe) + 10.6 us per ring step "
      "across the network (2 x nodes for an all-reduce, nodes - 1 otherwise)",
      {{"compute_s", t.compute_s},
       {"bubble_s", t.bubble_s},
       {"tp_comm_s", t.tp_comm_s},
       {"ep_comm_s", t.ep_comm_s},
       {"dp_comm_s", t.dp_comm_s},
       {"dp_latency_s", t.dp_latency_s},
       {"dp_exposed_s", t.dp_exposed_s},
       {"dp_last_bucket_s", t.dp_last_bucket_s},
       {"dp_first_gather_s", t.dp_first_gather_s},
       {"dp_contention_s", t.dp_contention_s},
       {"optimizer_step_s", t.optimizer_step_s},
       {"step_s", t.step_s},
       {"tokens_per_step", t.tokens_per_step},
       {"peak_flops", t.peak_flops},
       {"efficiency", t.efficiency},
       {"micro_batch_gemm_s", kt.gemm_s},
       {"micro_batch_attention_s", kt.attention_s},
       {"micro_batch_pointwise_s", kt.pointwise_s},
       {"micro_batch_fp8_cast_s", kt.fp8_cast_s},
       {"dp_bandwidth_bytes_per_s", t.dp_bandwidth},
       {"tp_bandwidth_bytes_per_s", t.tp_bandwidth}},
      {std::string("kernel rates: ") + rates.basis,
       std::string("data-parallel traffic overlaps the last micro-batch's backward pass ") +
           "(ZeRO-3: every micro-batch's compute)",
       std::string("pipeline stages: the busiest one (ceil(L/pp) layers, the last with the ") +
           "head) sets the pace",
       "links run at 80% of their rated bandwidth (NCCL bus bandwidth)",
       "buckets: the stack's (DeepSpeed 5e8 elements), else PyTorch DDP's 25 MiB (Li et al., "
       "VLDB 2020); ZeRO-3 reduces and gathers unit by unit (Zhao et al., VLDB 2023)",
       "overlapped compute slows by 18.9% (Lee et al. 2025, arXiv 2507.03114: the average "
       "measured on A100, H100, MI250 and MI210)",
       "optimizer step at the share of memory bandwidth decode reaches; none on the GPU when "
       "the optimizer is offloaded",
       t.dp_crosses_nodes ? "data parallelism crosses nodes: the inter-node network carries it"
                          : "data parallelism stays inside one node"}};
  x[base + "mfu"] = {"flops_per_token x tokens_per_s / (gpus x dense bf16 peak)", {}, {}};
  x[base + "scaling_efficiency"] = {
      "compute time / (step time - optimizer step)",
      {},
      {"the optimizer step is left out: one GPU pays it too, and ZeRO shrinks it as GPUs are "
       "added"}};
  x[base + "time_s"] = {"workload.tokens / tokens_per_s", {{"tokens", t.tokens}}, {}};
  x[base + "gpu_hours"] = {"time_s x gpus / 3600", {}, {}};
}

}  // namespace gpuplan
