// SPDX-License-Identifier: MIT
// What a well-formed setup should know before it runs (warnings), and the marks a calibration
// leaves on the figures it changed.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "physics/estimate_parts.h"

namespace gpuplan {

using text::D;

void AddWarnings(const Setup& r, const ParamCounts& c, Estimate* e) {
  const ModelSpec& m = r.model;
  const Parallel& p = r.parallel;
  const auto warn = [e](std::string code, std::map<std::string, double> params, std::string msg) {
    e->warnings.push_back(Note{std::move(code), std::move(params), std::move(msg)});
  };
  if (m.declared_params > 0) {
    const double diff = std::fabs(D(c.total) - D(m.declared_params)) / D(m.declared_params);
    if (diff > 0.01) {
      warn("params_mismatch", {{"declared", D(m.declared_params)}, {"derived", D(c.total)}},
           "the stated params (" + std::to_string(m.declared_params) +
               ") differ from the architecture's count (" + std::to_string(c.total) +
               ") by more than 1%; the architecture's count is used");
    }
  }
  if (!m.IsMla() && p.tp > m.kv_heads && p.tp % m.kv_heads == 0) {
    warn("kv_heads_replicated", {{"tp", D(p.tp)}, {"kv_heads", D(m.kv_heads)}},
         "tensor parallel exceeds the key/value heads: each GPU keeps a replica of one KV head");
  }
  if (r.workload.IsTraining() && p.zero > 0 && p.ShardGroup() <= 1) {
    warn("zero_without_data_parallel", {{"zero", D(p.zero)}},
         "ZeRO shards over data-parallel ranks; with one there is nothing to shard");
  }
  const int64_t on_gpu = r.serving.gpu_layers;
  if (!r.workload.IsTraining() && on_gpu >= 0 && on_gpu <= m.layers) {
    e->warnings.push_back(
        Note{"layers_on_cpu",
             {{"n_gpu_layers", D(on_gpu)}, {"layers", D(m.layers)}},
             "serving.n_gpu_layers keeps " + std::to_string(m.layers - on_gpu) +
                 " layers and the output layer in host memory, decoded by the CPU at an assumed "
                 "50 GB/s of host memory bandwidth",
             "/serving/n_gpu_layers"});
  }
  const int64_t cpu_moe = r.serving.cpu_moe_layers;
  if (!r.workload.IsTraining() && m.IsMoe() && cpu_moe > 0) {
    e->warnings.push_back(
        Note{"experts_on_cpu",
             {{"n_cpu_moe", D(cpu_moe)}, {"layers", D(m.layers)}},
             "serving.n_cpu_moe keeps the routed experts of the first " + std::to_string(cpu_moe) +
                 " layers in host memory; the CPU reads the experts each token routes to at an "
                 "assumed 50 GB/s of host memory bandwidth",
             "/serving/n_cpu_moe"});
  }
  if (p.sequence_parallel && p.tp == 1) {
    warn("sequence_parallel_without_tp", {},
         "sequence parallelism splits activations over tp ranks; tp is 1");
  }
  const GpuSpec& g = r.gpu;
  const WeightFormat wf = r.precision.weights;
  const bool needs_fp8 = IsFp8(wf) || r.precision.kv_cache == KvFormat::kFp8;
  if (needs_fp8 && g.fp8_flops <= 0) {
    warn("precision_not_native", {},
         g.name + " has no fp8 units: fp8 is storage only, computed in " +
             (g.bf16_flops > 0 ? "bf16" : "fp16"));
  }
  if (IsFp4(wf)) {
    const std::string block = wf == WeightFormat::kNvfp4 ? "nvfp4" : "mxfp4";
    const bool native =
        std::find(g.block_scaled.begin(), g.block_scaled.end(), block) != g.block_scaled.end();
    if (!native || g.fp4_flops <= 0) {
      warn("precision_not_native", {},
           g.name + " has no " + block + " tensor cores: " + block +
               " is storage only, dequantised and computed in " +
               (g.bf16_flops > 0 ? "bf16" : "fp16"));
    }
  }
  if ((wf == WeightFormat::kBf16) && g.bf16_flops <= 0 && g.fp16_flops > 0) {
    warn("precision_not_native", {}, g.name + " has no bf16 units: runs in fp16 (or emulated)");
  }
  const std::string& gen = g.generation;
  if (r.techniques.flash_attention && (gen == "volta" || gen == "turing")) {
    warn("flash_attention_unsupported", {},
         "FlashAttention 2 needs Ampere or newer; on " + g.name +
             " the memory-efficient SDPA kernel gives the same memory, at lower speed");
  }
  if (r.optimizer == Optimizer::kPagedAdamW8bit && r.workload.IsTraining()) {
    warn("paged_optimizer_states", {},
         "paged 8-bit Adam keeps its states in CUDA unified memory, outside PyTorch's allocator: "
         "they are not in the per-GPU total and page to host RAM under pressure");
  }
  if (p.cp > 1) {
    warn("parallel_communication_not_modelled", {{"cp", D(p.cp)}},
         "context-parallel ring attention traffic is not in the time estimate: it is optimistic "
         "for cp above 1");
  }
  if (r.workload.IsTraining() && r.workload.seq_len % p.cp != 0) {
    warn("seq_len_not_divisible_by_cp", {{"seq_len", D(r.workload.seq_len)}, {"cp", D(p.cp)}},
         "context parallel splits the sequence evenly; seq_len is not a multiple of cp");
  }
}

// Marks every figure a calibration factor changed, so no calibrated number passes as a plain
// estimate, and warns when the factors come from another card.
void AddCalibration(const Setup& r, Estimate* e) {
  const CalibrationFactors& c = r.calibration;
  if (!c.Any()) return;
  auto mark = [e](const std::string& ptr, const std::string& what) {
    const auto it = e->explain.find(ptr);
    if (it != e->explain.end()) it->second.assumptions.push_back(what);
  };
  const std::string on = c.measured_on.empty() ? "a measured run" : c.measured_on;
  auto factor = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "x%.3g", v);
    return std::string(buf);
  };
  if (c.memory != 1) {
    const std::string m = "calibrated on " + on + ": modelled memory " + factor(c.memory);
    mark("/memory/per_gpu_bytes/activations", m);
    mark("/memory/per_gpu_bytes/buffers", m);
  }
  if (c.allocator_slack >= 0) {
    mark("/memory/per_gpu_bytes/runtime", "calibrated on " + on + ": allocator slack " +
                                              factor(c.allocator_slack) + " of the tensors");
  }
  if (c.compute != 1 || c.interconnect != 1) {
    const std::string t = "calibrated on " + on + ": compute efficiency " + factor(c.compute) +
                          ", interconnect bandwidth " + factor(c.interconnect);
    mark("/performance/training/tokens_per_s", t);
    mark("/performance/inference/ttft_ms", t);
  }
  if (c.bandwidth != 1 || c.interconnect != 1) {
    mark("/performance/inference/tpot_ms", "calibrated on " + on + ": memory bandwidth " +
                                               factor(c.bandwidth) + ", interconnect bandwidth " +
                                               factor(c.interconnect));
  }
  if (!c.measured_on.empty() && c.measured_on != r.gpu.id) {
    e->warnings.push_back(Note{"calibration_other_card",
                               {},
                               "calibration factors measured on " + c.measured_on +
                                   " are applied to " + r.gpu.id +
                                   ": a different card may not share them; measure on it",
                               "/calibration/measured_on"});
  }
}

}  // namespace gpuplan
