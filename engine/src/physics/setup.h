// SPDX-License-Identifier: MIT
// One fixed setup in plain resolved values: what the physics takes. The question it came from
// (plan/question.h) keeps what was asked; the setup keeps what runs, its stack's policies
// resolved once with the request's own settings on top.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "model/hardware.h"
#include "model/model_spec.h"
#include "model/parallelism.h"
#include "model/workload.h"
#include "physics/calibration_factors.h"
#include "stacks/policy.h"
#include "stacks/settings.h"

namespace gpuplan {

/// What the site allows and the answer must meet, checked by every estimate (contract:
/// constraints.node_power_w, rack_power_w, cooling, ttft_ms, tpot_ms); 0 or "" = not given.
struct Targets {
  double node_power_w = 0;
  double rack_power_w = 0;
  std::string cooling;
  double ttft_ms = 0;
  double tpot_ms = 0;
};

/// What a GPU-hour costs and where (contract: pricing).
struct Pricing {
  double usd_per_gpu_hour = -1;  ///< the request's own price; < 0 = the card's in `market`
  MarketChoice market;           ///< whose offers price the cards
};

/// One setup with every default filled in and its stack's policies resolved.
struct Setup {
  ModelSpec model;
  Workload workload;
  Precision precision;
  Optimizer optimizer = Optimizer::kAdamW;
  MemoryTechniques techniques;
  Parallel parallel;
  GpuSpec gpu;
  double headroom = 0.2;
  HostSpec host;
  RuntimeOptions runtime;
  CalibrationFactors calibration;  ///< from a measured run (calibrate); all 1 = none
  Targets targets;
  Pricing pricing;
  /// The stack that runs it: the request's `framework`, plain PyTorch when none is named.
  const StackProfile* stack = &PlainPytorch();
  std::string engine_version;  ///< serving.version: the engine release ("" = the profile's)
  TrainingPolicy training;     ///< the stack's training policy with the request's settings
  ServingPolicy serving;       ///< the engine's policy at engine_version with the settings

  /// Whether the request named a framework (plain PyTorch has no id).
  bool StackNamed() const { return stack->id[0] != '\0'; }
  /// The named stack; null when none was named.
  const StackProfile* NamedStack() const { return StackNamed() ? stack : nullptr; }
};

/// Runs `s` on stack `p` with the request's settings: the one place policies are resolved.
inline void UseStack(Setup* s, const StackProfile& p, const TrainingOverrides& training = {},
                     const ServingOverrides& serving = {}) {
  s->stack = &p;
  s->engine_version = serving.version;
  s->training = WithSettings(p.training, training);
  s->serving = WithSettings(p.engine, serving, s->model.max_context);
}

/// Serving: the data-parallel ranks (parallel.gpus / (tp x pp x cp)) split the requested
/// concurrency, each running its own batch and KV cache (vLLM's --data-parallel-size, SGLang's
/// --dp with --enable-dp-attention); the sequences one rank runs. Training: the concurrency.
inline int64_t RankConcurrency(const Workload& w, const Parallel& p) {
  const int64_t dp = w.IsTraining() ? 1 : std::max<int64_t>(1, p.Dp());
  return (w.concurrency + dp - 1) / dp;
}
inline int64_t RankConcurrency(const Setup& s) { return RankConcurrency(s.workload, s.parallel); }

/// The engine's settings on the setup's card and `layout`.
inline ServingDefaults EngineDefaults(const Setup& s, const Parallel& layout) {
  return DefaultsOn(s.serving, s.gpu, layout);
}

}  // namespace gpuplan
