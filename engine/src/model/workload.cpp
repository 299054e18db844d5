// SPDX-License-Identifier: MIT
#include "model/workload.h"

namespace gpuplan {

std::string_view Name(WorkloadKind k) {
  switch (k) {
    case WorkloadKind::kPretrain:
      return "pretrain";
    case WorkloadKind::kFullFinetune:
      return "full_finetune";
    case WorkloadKind::kLora:
      return "lora";
    case WorkloadKind::kQlora:
      return "qlora";
    case WorkloadKind::kInference:
      return "inference";
  }
  return "inference";
}

std::string_view Name(Optimizer o) {
  switch (o) {
    case Optimizer::kAdamW:
      return "adamw";
    case Optimizer::kAdam:
      return "adam";
    case Optimizer::kAdamW8bit:
      return "adamw_8bit";
    case Optimizer::kPagedAdamW8bit:
      return "paged_adamw_8bit";
    case Optimizer::kSgd:
      return "sgd";
    case Optimizer::kSgdMomentum:
      return "sgd_momentum";
    case Optimizer::kAdafactor:
      return "adafactor";
    case Optimizer::kLion:
      return "lion";
  }
  return "adamw";
}

std::string_view Name(Recompute r) {
  switch (r) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
    case Recompute::kOpSelective:
      return "op_selective";
    case Recompute::kEveryNLayers:
      return "every_n_layers";
  }
  return "none";
}

}  // namespace gpuplan
