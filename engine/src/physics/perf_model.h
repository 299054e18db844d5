// SPDX-License-Identifier: MIT
// Time and throughput: training steps (compute, tensor- and data-parallel communication,
// pipeline bubble) and serving (prefill, decode, latency). Pure functions of the request.
#pragma once

#include <cstdint>
#include <string>

#include "model/model_spec.h"
#include "physics/setup.h"
#include "physics/step_kernels.h"

namespace gpuplan {

/// Achievable fractions of a card's peaks while serving, per card generation (perf_model.cpp
/// documents each value's fit or source); training: step_kernels.h.
struct Efficiencies {
  double decode_bandwidth = 0.7;  ///< of memory bandwidth while decoding
  double prefill_compute = 0.5;   ///< of dense peak while prefilling
  /// Where the figures come from, in words: a literal, so the planner's thousands of calls
  /// allocate nothing.
  const char* basis = "";
};

/// The defaults for a card (by its generation).
Efficiencies DefaultEfficiencies(const GpuSpec& gpu);

/// FLOPs of the model per token (contract: 6N plus the attention term; recomputation excluded).
struct TrainingFlops {
  double matmul_params = 0;       ///< N: active parameters that take part in matmuls
  double model_per_token = 0;     ///< what MFU counts
  double hardware_per_token = 0;  ///< what the GPUs execute (recomputation included)
  double expert_per_token = 0;    ///< of hardware_per_token: the routed experts' matmuls
};
TrainingFlops TrainingFlopsPerToken(const Setup& r, const ParamCounts& c);
/// The share of blocks whose forward backward repeats in full: 1 for full recomputation,
/// floor(L / n) / L for every n-th block, else 0.
double RecomputedShare(const Setup& r);

/// A training step and the run.
struct TrainingPerf {
  TrainingFlops flops;
  double peak_flops = 0;      ///< per GPU, in the precision the matmuls run in
  double efficiency = 0;      ///< fraction of that peak the compute achieves
  MicroBatchKernels kernels;  ///< one micro-batch's kernels on one rank, by kind
  double compute_s = 0;       ///< per step, all micro-batches, per GPU
  double bubble_s = 0;        ///< pipeline fill and drain per step
  double tp_comm_s = 0;       ///< tensor-parallel all-reduces per step
  double tp_exposed_s = 0;    ///< the part not hidden behind compute (all unless overlapped)
  double ep_comm_s = 0;       ///< expert-parallel all-to-alls per step (not overlapped)
  double dp_comm_s = 0;       ///< data-parallel / ZeRO traffic per step, latencies included
  double dp_latency_s = 0;    ///< of which the collectives' start-up latencies (NCCL's ring model)
  double dp_gather_s = 0;     ///< of which parameter all-gathers (ZeRO-1/2 after the step)
  double dp_exposed_s = 0;    ///< the part not hidden behind compute (the two below included)
  double dp_last_bucket_s = 0;   ///< the last gradient bucket's reduction, after backward ends
  double dp_first_gather_s = 0;  ///< ZeRO-3: gathering the first units before each forward
  /// Compute slowed by the collectives that share its SMs and memory while overlapped.
  double dp_contention_s = 0;
  double optimizer_step_s = 0;  ///< the optimizer's update of this GPU's shard, memory-bound
  double step_s = 0;
  double tokens_per_step = 0;
  double tokens_per_s = 0;  ///< whole job
  double tokens_per_s_per_gpu = 0;
  double mfu = 0;                      ///< model FLOPs / (gpus x dense bf16 peak)
  double achieved_tflops_per_gpu = 0;  ///< hardware FLOPs executed per second per GPU / 10^12
  double scaling_efficiency = 0;       ///< compute_s / (step_s - optimizer_step_s)
  double tokens = 0;                   ///< the run's tokens
  double time_s = 0;
  double gpu_hours = 0;
  bool dp_crosses_nodes = false;
  double dp_bandwidth = 0;  ///< bytes/s per GPU used for data-parallel traffic
  double tp_bandwidth = 0;  ///< bytes/s per GPU used for tensor-parallel traffic
};
TrainingPerf EstimateTraining(const Setup& r, const ParamCounts& c);

/// 1F1B and GPipe: pp - 1 micro-batch slots of pipeline fill and drain a step (Narayanan et
/// al. 2021); the interleaved schedule's slots are 1/v as long. EstimateTraining's bubble is
/// these slots of the busiest stage's micro-batch, plus that stage's excess over a balanced
/// split, every micro-batch.
double PipelineFillSlots(const Pipeline& pipe, int64_t pp);

/// Serving at a given concurrency.
struct InferencePerf {
  double prefill_tokens_per_s = 0;
  double ttft_s = 0;
  double tpot_s = 0;
  double decode_tokens_per_s_per_seq = 0;
  double decode_tokens_per_s_total = 0;
  double bytes_per_step = 0;   ///< weights and KV cache read per decode step, per GPU
  double flops_per_step = 0;   ///< per GPU
  double tp_comm_s = 0;        ///< per decode step
  double ep_comm_s = 0;        ///< expert-parallel all-to-alls per decode step
  bool compute_bound = false;  ///< decode limited by compute rather than bandwidth
  bool host_bound = false;     ///< an eager decode step waits on the host's kernel launches
  /// One prompt's prefill FLOPs at the prefill efficiency, with its all-reduces: what it adds
  /// to a decode iteration it piggybacks on (chunked prefill), whose weight reads it shares.
  double prefill_compute_s = 0;
};
/// `weight_bytes_read`: the weights one tensor-parallel rank reads per token across all
/// pipeline stages (the untied embedding table excluded: only the batch's rows are read);
/// `kv_bytes_per_token`: the KV cache per token of context on that rank, all layers.
/// The bandwidth a single-stream decode streams weights and KV cache at on the request's card
/// and engine, before calibration (policy.h: decode_bytes_per_s_per_sm).
double DecodeBandwidth(const Setup& r);

/// The dense peak the matmuls of a workload run at: the weights' compute type, falling back to
/// the card's best 16-bit units when it has no units for it (a warning says so). FP4 formats
/// use the FP4 peak only where the card lists the block format (GpuSpec::block_scaled).
double MatmulPeak(const GpuSpec& g, WeightFormat w, bool training);
/// `decode_bandwidth`: DecodeBandwidth(r), worked out once by the caller, which asks at many
/// concurrencies (resolving the engine's policy each time was 6% of a serving plan in
/// WebAssembly). `host_weight_bytes`: weights of layers left on the CPU, read from host memory
/// each step.
InferencePerf EstimateInference(const Setup& r, const ParamCounts& c, int64_t concurrency,
                                double weight_bytes_read, double kv_bytes_per_token,
                                double decode_bandwidth, double host_weight_bytes = 0,
                                double host_expert_bytes = 0);

/// Host memory bandwidth a CPU reaches decoding the layers it keeps (llama.cpp's
/// n_gpu_layers): dual-channel DDR5-4800 gives 76.8 GB/s, of which ~2/3 is reached; an
/// assumption, named where it is used.
inline constexpr double kHostDecodeBandwidth = 50e9;

/// A decode step without CUDA graphs cannot end before the host has launched its kernels, one
/// by one: measured on one H200 host (tests/reference/h200-2026-12, probes-decode-rerun.json:
/// a Llama 3.1 8B decode step written over the model's own modules, torch 2.11), 18.99, 19.55
/// and 18.45 ms eager at batch 1, 8 and 32 against 6.99, 7.74 and 8.80 ms captured as a graph:
/// the eager step is the host's, about the same at every batch, 18.99 ms / 32 layers = 0.593
/// ms a layer. Transformers' own step with its dynamic cache took 59-63 ms (1.9 ms a layer);
/// an engine's leaner model code is taken to launch like the hand-written step.
inline constexpr double kEagerDecodeHostPerLayer = 18.99e-3 / 32;

/// NCCL's achievable share of a link's bandwidth (bus bandwidth / link), an assumption.
inline constexpr double kLinkEfficiency = 0.8;
/// Latency of one small all-reduce over n GPUs on NVLink: a + b log2(n) seconds, fitted on
/// gpt-fast's A100 tensor-parallel decode (tp 2, 4, 8: 18.6, 24.7, 29 us per all-reduce
/// beyond the weight reads; a = 12.5 us, b = 6.1 us). PCIe links take kPcieLatencyFactor
/// times longer (mlc-llm's PCIe A100 rows: 2.6-3.1x the NVLink figures).
inline constexpr double kAllReduceLatencyBase = 12.5e-6;
inline constexpr double kAllReduceLatencyPerDoubling = 6.1e-6;
inline constexpr double kPcieLatencyFactor = 3.0;
/// What each ring step that crosses the network adds to a collective's latency: NCCL's cost
/// model (src/graph/tuning.cc, ncclTopoTuneModel) charges such a step hwLat[NET][Ring][Simple]
/// = 14 us instead of NVLink's 3.4 us (Simple: the protocol of multi-megabyte buckets).
inline constexpr double kNetHopLatency = 14e-6 - 3.4e-6;
/// Compute overlapped with collectives runs this much slower: they take SMs and memory
/// bandwidth from it. Lee et al. 2025, "Characterizing Compute-Communication Overlap in
/// GPU-Accelerated Distributed Deep Learning" (arXiv 2507.03114), measure an average 18.9%
/// (at most 40%) on 4 A100, H100, MI250 and MI210 running GPT and Llama layers.
inline constexpr double kOverlapComputeSlowdown = 0.189;
/// PyTorch DDP's default bucket (bucket_cap_mb = 25; Li et al., "PyTorch Distributed:
/// Experiences on Accelerating Data Parallel Training", VLDB 2020, section 3.2.3).
inline constexpr double kDdpBucketBytes = 25.0 * 1024 * 1024;

}  // namespace gpuplan
