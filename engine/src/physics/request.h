// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/hardware.h"
#include "model/model_spec.h"
#include "model/parallelism.h"
#include "model/workload.h"
#include "physics/calibration_factors.h"
#include "stacks/policy.h"

namespace gpuplan {

/// Bounds and preferences for `plan` (contract: constraints). Read and checked by estimate too.
struct Constraints {
  int64_t max_gpus = 0;  ///< 0 = no limit given
  std::vector<std::string> gpus;
  std::string objective = "default";
  double node_power_w = 0;
  double rack_power_w = 0;
  std::string cooling;
  double budget_usd = 0;
  double deadline_s = 0;
  double ttft_ms = 0;
  double tpot_ms = 0;
  bool quantize = false;                 ///< plan may try lighter weight formats for serving
  std::map<std::string, double> wait_s;  ///< expected queue per card id (wait or switch)
};

/// What a request sets of its stack's training policy (contract, second round:
/// precision.optimizer_states, memory_techniques.compile, parallel.pp_schedule,
/// parallel.virtual_stages, parallel.overlap). Unset, the profile's value stands.
struct TrainingOverrides {
  std::optional<StateDtype> optimizer_states;
  std::optional<Pipeline> pipeline;
  std::optional<bool> tp_comm_overlap;
  std::optional<bool> grad_reduce_overlap;
  std::optional<bool> param_gather_overlap;
  std::optional<bool> kbit_fp32_upcast;  ///< precision.kbit_fp32_upcast
  /// torch.compile: Inductor's min-cut partitioner recomputes pointwise ops instead of saving
  /// them, so the eager extras (fp32 norm and RoPE copies, expanded K/V) are not kept.
  bool compile = false;
};

/// The request's `serving` settings (contract, second round): each unset one keeps the
/// engine's default at `version`.
struct ServingOverrides {
  std::string version;                    ///< "" = the profile's current version
  std::optional<double> memory_fraction;  ///< gpu_memory_utilization, kv_cache_free_..._fraction
  std::optional<double> static_fraction;  ///< SGLang's mem_fraction_static
  std::optional<int64_t> max_seqs;        ///< max_num_seqs
  std::optional<int64_t> max_batched_tokens;  ///< max_num_batched_tokens; llama.cpp n_ubatch
  int64_t max_model_len = 0;                  ///< 0 = the model's context
  bool enforce_eager = false;                 ///< no CUDA graphs
  std::optional<int64_t> block_size;
  int64_t n_ctx = 0;              ///< llama.cpp: the context allocated for all slots (0: as needed)
  int64_t n_gpu_layers = -1;      ///< llama.cpp: layers on the GPUs (-1: all)
  int64_t n_cpu_moe = -1;         ///< llama.cpp: layers whose routed experts stay on the CPU
  std::optional<double> k_bytes;  ///< llama.cpp --cache-type-k, bytes per element
  std::optional<double> v_bytes;  ///< llama.cpp --cache-type-v
};

/// One validated request with every default filled in.
struct Request {
  ModelSpec model;
  std::string model_preset;  ///< catalog id when the model came from a preset
  std::string model_repo;    ///< its Hugging Face repository, when the catalog names one
  Workload workload;
  Precision precision;
  Optimizer optimizer = Optimizer::kAdamW;
  MemoryTechniques techniques;
  Parallel parallel;
  GpuSpec gpu;
  double headroom = 0.2;
  HostSpec host;
  RuntimeOptions runtime;
  Constraints constraints;
  double usd_per_gpu_hour = -1;    ///< price override (request's pricing); < 0 = the card's
  MarketChoice market;             ///< pricing.market: whose offers price the cards
  CalibrationFactors calibration;  ///< from a measured run (calibrate); all 1 = none
  const StackProfile* framework = nullptr;  ///< the request's `framework`; null = none named
  TrainingOverrides training;               ///< the request's own policy settings
  ServingOverrides serving;                 ///< the request's serving-engine settings
};

/// The policies the request runs under: its framework's, else plain PyTorch's.
inline const StackProfile& StackOf(const Request& r) {
  return r.framework != nullptr ? *r.framework : PlainPytorch();
}

/// The training policy the request runs under: its stack's, with the request's settings.
inline TrainingPolicy TrainingPolicyOf(const Request& r) {
  TrainingPolicy p = StackOf(r).training;
  p.overlap.grad_reduce = GradReduceOverlapAt(p.overlap, r.parallel.zero);
  const TrainingOverrides& o = r.training;
  if (o.optimizer_states) p.optimizer_states = *o.optimizer_states;
  if (o.pipeline) p.pipeline = *o.pipeline;
  if (o.tp_comm_overlap) p.overlap.tp_comm = *o.tp_comm_overlap;
  if (o.grad_reduce_overlap) p.overlap.grad_reduce = *o.grad_reduce_overlap;
  if (o.param_gather_overlap) p.overlap.param_gather = *o.param_gather_overlap;
  if (o.kbit_fp32_upcast) p.kbit_fp32_upcast = *o.kbit_fp32_upcast;
  if (o.compile) {
    p.saved.norm_fp32_copy = false;
    p.saved.rope_fp32_copy = false;
    p.saved.kv_expanded = false;
  }
  return p;
}

/// Serving: the data-parallel ranks (parallel.gpus / (tp x pp x cp)) split the requested
/// concurrency, each running its own batch and KV cache (vLLM's --data-parallel-size, SGLang's
/// --dp with --enable-dp-attention); the sequences one rank runs. Training: the concurrency.
inline int64_t RankConcurrency(const Workload& w, const Parallel& p) {
  const int64_t dp = w.IsTraining() ? 1 : std::max<int64_t>(1, p.Dp());
  return (w.concurrency + dp - 1) / dp;
}
inline int64_t RankConcurrency(const Request& r) { return RankConcurrency(r.workload, r.parallel); }

/// The serving policy the request runs under: its engine's at the requested version, with
/// the request's settings.
inline ServingPolicy ServingPolicyOf(const Request& r) {
  const ServingOverrides& o = r.serving;
  ServingPolicy p = AtVersion(StackOf(r).engine, o.version);
  if (o.memory_fraction) p.memory_fraction = *o.memory_fraction;
  if (o.static_fraction) p.static_fraction = *o.static_fraction;
  if (o.enforce_eager) p.graph_bytes = 0;
  if (o.block_size) p.block_tokens = *o.block_size;
  if (o.n_ctx > 0) p.context_tokens = o.n_ctx;
  if (o.n_gpu_layers >= 0) p.gpu_layers = o.n_gpu_layers;
  if (o.n_cpu_moe >= 0) p.cpu_moe_layers = o.n_cpu_moe;
  if (o.k_bytes) p.k_bytes = *o.k_bytes;
  if (o.v_bytes) p.v_bytes = *o.v_bytes;
  // Whole prompts in a batch: the longest prompt the model takes is one batch.
  const int64_t model_len = o.max_model_len > 0 ? o.max_model_len : r.model.max_context;
  const bool whole = p.whole_prompts && model_len > 0 && model_len <= p.chunked_above;
  for (CapTier& t : p.caps) {
    if (whole) t.max_batched_tokens = std::max(model_len, p.whole_prompt_min_tokens);
    if (o.max_batched_tokens) t.max_batched_tokens = *o.max_batched_tokens;
    if (o.max_seqs) t.max_seqs = *o.max_seqs;
  }
  return p;
}

/// The engine's settings on the request's card and layout, with the request's own.
inline ServingDefaults EngineDefaultsOf(const Request& r, const Parallel& layout) {
  return DefaultsOn(ServingPolicyOf(r), r.gpu, layout);
}

}  // namespace gpuplan
