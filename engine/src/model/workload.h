// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/dtype.h"

namespace gpuplan {

enum class WorkloadKind { kPretrain, kFullFinetune, kLora, kQlora, kInference };
enum class InferenceMode { kOnline, kOffline };
/// What is recomputed in backward (contract: memory_techniques.recompute).
enum class Recompute {
  kNone,
  kSelective,     ///< Megatron's: the attention core (Korthikanti et al. 2022)
  kFull,          ///< every block from its input
  kOpSelective,   ///< torchtitan's op-level policy: matmul outputs but every second, attention
  kEveryNLayers,  ///< every n-th block fully recomputed (recompute_every), the rest kept
};
enum class MasterWeights { kFp32, kNone };
enum class Optimizer {
  kAdamW,
  kAdam,
  kAdamW8bit,
  kPagedAdamW8bit,
  kSgd,
  kSgdMomentum,
  kAdafactor,
  kLion,
};

/// Which linear layers get LoRA adapters.
struct LoraTargets {
  bool q = false, k = false, v = false, o = false;
  bool gate = false, up = false, down = false;
  bool lm_head = false;
  bool experts = true;  ///< adapters on routed experts' MLPs too (PEFT "all-linear" does)
};

/// What the job does, at what batch and length (contract: workload).
struct Workload {
  WorkloadKind kind = WorkloadKind::kInference;
  // Training.
  int64_t micro_batch = 1;
  int64_t seq_len = 2048;
  int64_t grad_accum = 1;
  int64_t global_batch = 0;  ///< sequences per optimizer step; 0 = micro_batch x grad_accum x dp
  bool batch_given = false;  ///< the request named global_batch or grad_accum (plan keeps it)
  double tokens = 0;         ///< tokens the whole run processes
  int64_t lora_rank = 16;
  LoraTargets lora_targets;
  // Inference.
  int64_t prompt_tokens = 1024;
  int64_t output_tokens = 256;
  int64_t concurrency = 1;
  InferenceMode mode = InferenceMode::kOnline;
  int64_t prefill_chunk_tokens = 0;    ///< tokens prefilled in one forward pass
  int64_t prefill_chunk_limit = 8192;  ///< the cap on it (the request's, else 8192)
  /// An offline batch of a finite number of requests (contract: workload.requests); count 0 =
  /// a steady stream. Means set prompt_tokens and output_tokens; the p95s the tail.
  struct RequestSet {
    int64_t count = 0;
    double prompt_mean = 0;
    double prompt_p95 = 0;
    double output_mean = 0;
    double output_p95 = 0;
  } requests;

  bool IsTraining() const { return kind != WorkloadKind::kInference; }
  /// Serves `c` sequences: the prefill chunk follows (all prompts, up to the limit).
  void SetConcurrency(int64_t c) {
    concurrency = c;
    prefill_chunk_tokens =
        prompt_tokens * c < prefill_chunk_limit ? prompt_tokens * c : prefill_chunk_limit;
  }
  bool IsPeft() const { return kind == WorkloadKind::kLora || kind == WorkloadKind::kQlora; }
};

/// Number formats (contract: precision).
struct Precision {
  WeightFormat weights = WeightFormat::kBf16;
  KvFormat kv_cache = KvFormat::kBf16;
  MasterWeights master = MasterWeights::kFp32;
  QuantOptions quant;
  bool adapters_fp32 = true;      ///< LoRA adapter weights kept in fp32 (PEFT's default)
  bool quantize_lm_head = false;  ///< quantised bases: lm_head in the base format too
};

/// Memory-saving levers (contract: memory_techniques).
struct MemoryTechniques {
  Recompute recompute = Recompute::kSelective;
  bool flash_attention = true;
  bool offload_optimizer = false;
  bool offload_params = false;
  bool offload_activations = false;
  bool chunked_loss = false;
  int64_t loss_chunks = 8;  ///< chunks of a chunked loss (torchtune CEWithChunkedOutputLoss: 8)
  bool optimizer_in_backward = false;
  int64_t recompute_every = 0;  ///< kEveryNLayers: n
};

/// Host-side facts used for host RAM checks (contract: host).
struct HostSpec {
  double ram_bytes_per_node = 0;  ///< 0 = not given
  double storage_bytes_per_s = 0;
  double dataset_bytes = 0;
  int64_t loader_workers = 0;
};

/// Overheads outside the tensors: the runtime part of the breakdown.
struct RuntimeOptions {
  double reserve_bytes = -1;       ///< CUDA context + framework reserve; < 0 = the card's default
  double allocator_slack = 0.05;   ///< caching-allocator fragmentation, fraction of tensors
  double comm_reserve_bytes = -1;  ///< NCCL buffers on multi-GPU jobs; < 0 = default
};

/// The contract's names ("lora", "paged_adamw_8bit", "selective").
std::string_view Name(WorkloadKind k);
std::string_view Name(Optimizer o);
std::string_view Name(Recompute r);

}  // namespace gpuplan
