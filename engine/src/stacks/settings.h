// SPDX-License-Identifier: MIT
// What a request sets of its stack's policies, and the policies those settings make: the one
// place a profile's values and a request's own meet. The physics reads only the result.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "stacks/policy.h"

namespace gpuplan {

/// What a request sets of its stack's training policy (precision.optimizer_states,
/// optimizer_kernel,
/// memory_techniques.compile, parallel.pp_schedule, parallel.virtual_stages,
/// parallel.overlap, precision.kbit_fp32_upcast). Unset, the profile's value stands.
struct TrainingOverrides {
  std::optional<StateDtype> optimizer_states;
  std::optional<OptimizerKernel> optimizer_kernel;
  std::optional<double> lora_input_copy_bytes;  ///< set by a program that runs its own loop
  std::optional<Pipeline> pipeline;
  std::optional<bool> tp_comm_overlap;
  std::optional<bool> grad_reduce_overlap;
  std::optional<bool> param_gather_overlap;
  std::optional<bool> kbit_fp32_upcast;
  /// torch.compile: Inductor's min-cut partitioner recomputes pointwise ops instead of saving
  /// them, so the eager extras (fp32 norm and RoPE copies, expanded K/V) are not kept.
  bool compile = false;
};

/// The request's `serving` settings: each unset one keeps the engine's default at `version`.
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

/// The training policy a stack runs with the request's settings. A set gradient-reduction
/// overlap holds at every ZeRO stage (GradReduceOverlapAt reads either field).
TrainingPolicy WithSettings(const TrainingPolicy& stack, const TrainingOverrides& o);

/// The serving policy of `engine` at the requested version with the request's settings, for
/// a model whose context is `model_context` tokens.
ServingPolicy WithSettings(const ServingPolicy& engine, const ServingOverrides& o,
                           int64_t model_context);

}  // namespace gpuplan
