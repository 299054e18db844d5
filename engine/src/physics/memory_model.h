// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <map>
#include <string>
#include <vector>

#include "core/diagnostics.h"
#include "model/hardware.h"
#include "model/model_spec.h"
#include "model/parallelism.h"
#include "model/workload.h"
#include "stacks/policy.h"

namespace gpuplan {

/// Bytes on the most loaded GPU, in the contract's seven parts.
struct MemoryBreakdown {
  double weights = 0;
  double gradients = 0;
  double optimizer_states = 0;
  double activations = 0;  ///< saved for backward (training) or transient (inference), logits too
  double kv_cache = 0;
  double buffers = 0;  ///< all-gather, dequantisation and communication buffers
  double runtime = 0;  ///< CUDA context, framework reserve, NCCL, allocator slack

  /// What torch.cuda.max_memory_allocated() would count: every part but runtime.
  double Allocated() const {
    return weights + gradients + optimizer_states + activations + kv_cache + buffers;
  }
  double Total() const { return Allocated() + runtime; }
};

/// Everything the memory model needs; references stay owned by the caller.
struct MemoryInput {
  const ModelSpec& model;
  const ParamCounts& params;
  const Workload& workload;
  const Precision& precision;
  Optimizer optimizer;
  const MemoryTechniques& techniques;
  const Parallel& parallel;
  const GpuSpec& gpu;
  const RuntimeOptions& runtime;
  const TrainingPolicy& training;  ///< what the training stack keeps (stacks/policy.h)
  const ServingPolicy& serving;    ///< what the serving engine adds
  bool with_detail = true;         ///< false skips MemoryResult::detail (the planner's checks)
  double modelled_scale = 1;       ///< calibration: multiplies activations and buffers
};

/// The memory estimate with the working behind each figure.
struct MemoryResult {
  MemoryBreakdown per_gpu;
  /// Training: the seven parts at each moment a step's peak can fall on, the end of forward,
  /// the end of backward and the optimizer step (memory_model.cpp); per_gpu is the largest.
  /// Empty when serving. Fixed storage: the planner evaluates thousands of setups and
  /// allocates for none.
  std::array<MemoryBreakdown, 3> moments{};
  bool has_moments = false;
  int64_t stage = 0;                     ///< the pipeline stage reported (the most loaded one)
  std::map<std::string, double> detail;  ///< sub-items, e.g. "activations.logits"
  double offloaded_bytes_per_gpu = 0;    ///< state moved to host memory (offload, paged optimizer)
  /// Serving: the KV cache one token of context adds on this GPU, over the stage's layers
  /// (detail's "kv_cache.bytes_per_token", without the detail's allocations).
  double kv_bytes_per_token = 0;
  double host_expert_bytes = 0;  ///< of offloaded_bytes_per_gpu: routed experts on the CPU
  std::map<std::string, Explanation> explain;  ///< keyed by JSON pointer under /memory
  std::vector<Note> warnings;
};

/// Memory held outside PyTorch's allocator for communicators (NCCL) on a multi-GPU layout.
double CommReserveBytes(const RuntimeOptions& rt, const Parallel& p);

/// Memory per GPU for one fixed setup; pure function of its input.
MemoryResult EstimateMemory(const MemoryInput& in);

/// A training setup's floor: what its step holds at every one of its moments whatever its
/// micro-batch, accumulation and recomputation (the weights, optimizer states and first
/// gradients after offloading, the runtime reserve and communicators, all on the first
/// stage). EstimateMemory's total is at least this; the planner skips, on it, the setups
/// that cannot fit.
double TrainingMemoryFloor(const MemoryInput& in);

/// Trainable parameters LoRA adds for a target set and rank (whole model).
int64_t LoraParams(const ModelSpec& m, const LoraTargets& t, int64_t rank);

/// Optimizer state bytes per trainable parameter, in the policy's dtype (`param_bytes`: the
/// parameter's own element size, for StateDtype::kParam).
double OptimizerStateBytes(Optimizer o, int64_t hidden, StateDtype dtype, double param_bytes);

}  // namespace gpuplan
