// SPDX-License-Identifier: MIT
#pragma once

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
  std::map<std::string, double> wait_s;  ///< expected queue per card id (wait or switch, M25)
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
  CalibrationFactors calibration;  ///< from a measured run (calibrate); all 1 = none
  const StackProfile* framework = nullptr;  ///< the request's `framework`; null = none named
  TrainingOverrides training;               ///< the request's own policy settings
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

}  // namespace gpuplan
