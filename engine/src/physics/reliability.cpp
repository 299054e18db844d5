// SPDX-License-Identifier: MIT
#include "physics/reliability.h"

#include <cmath>

#include "physics/memory_model.h"

namespace gpuplan {

ReliabilityEstimate EstimateReliability(const Setup& r, const ParamCounts& c,
                                        const TrainingPerf& perf) {
  ReliabilityEstimate e;
  const Workload& w = r.workload;
  // A checkpoint holds what a restart needs: trainable weights, the fp32 master copy and the
  // optimizer moments (not the gradients). Full training in bf16 + AdamW: 2 + 4 + 8 bytes per
  // parameter; LoRA/QLoRA save only the adapters and their optimizer state.
  const bool sixteen =
      r.precision.weights != WeightFormat::kFp32 && r.precision.weights != WeightFormat::kTf32;
  const double master = sixteen && r.precision.master == MasterWeights::kFp32 ? 4 : 0;
  double moments = 8;
  switch (r.optimizer) {
    case Optimizer::kAdamW8bit:
    case Optimizer::kPagedAdamW8bit:
      moments = 2;
      break;
    case Optimizer::kSgd:
    case Optimizer::kAdafactor:
      moments = 0;
      break;
    case Optimizer::kSgdMomentum:
    case Optimizer::kLion:
      moments = 4;
      break;
    default:
      break;
  }
  if (w.IsPeft()) {
    const double adapters = static_cast<double>(LoraParams(r.model, w.lora_targets, w.lora_rank));
    // bf16 adapters carry an fp32 master copy unless master_weights is none.
    const double adapter_master =
        r.precision.adapters_fp32 || r.precision.master == MasterWeights::kNone ? 0 : 4;
    e.checkpoint_bytes =
        adapters * ((r.precision.adapters_fp32 ? 4 : 2) + adapter_master + moments);
  } else {
    e.checkpoint_bytes = static_cast<double>(c.total) * ((sixteen ? 2 : 4) + master + moments);
  }
  e.storage_bytes_per_s =
      r.host.storage_bytes_per_s > 0 ? r.host.storage_bytes_per_s : kDefaultStorageBytesPerS;
  e.checkpoint_write_s = e.checkpoint_bytes / e.storage_bytes_per_s;
  const double gpus = static_cast<double>(r.parallel.gpus);
  const double hours = perf.time_s / 3600;
  e.expected_interruptions = kInterruptionsPerGpuHour * gpus * hours;
  // Young (1974) / Daly (2006): the interval that minimises checkpoint plus rework time is
  // sqrt(2 x C x M), C the write time, M the job's mean time between failures.
  const double mtbf_s = 3600 / (kInterruptionsPerGpuHour * gpus);
  e.checkpoint_interval_s = std::sqrt(2 * e.checkpoint_write_s * mtbf_s);
  const double writes = e.checkpoint_interval_s > 0 ? perf.time_s / e.checkpoint_interval_s : 0;
  // Each failure loses on average half an interval of work plus a restart.
  e.expected_lost_s = e.expected_interruptions * (e.checkpoint_interval_s / 2 + kRestartSeconds) +
                      writes * e.checkpoint_write_s;
  return e;
}

}  // namespace gpuplan
