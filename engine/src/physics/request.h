// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <map>
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
};

/// The policies the request runs under: its framework's, else plain PyTorch's.
inline const StackProfile& StackOf(const Request& r) {
  return r.framework != nullptr ? *r.framework : PlainPytorch();
}

}  // namespace gpuplan
