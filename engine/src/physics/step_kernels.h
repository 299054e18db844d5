// SPDX-License-Identifier: MIT
// A training micro-batch's compute time from its kernels: each matmul by its shape and number
// format, the attention core at the flash kernels' rate, and the memory-bound work (norms,
// rotary, activations, residual adds, the loss, LoRA's side path, FP8 casts) as bytes over the
// card's bandwidth. One tensor-parallel rank's share, per layer kind and for the head, so a
// pipeline stage sums its own.
#pragma once

#include "model/model_spec.h"
#include "physics/setup.h"

namespace gpuplan {

/// What a card's kernels achieve, per generation (step_kernels.cpp documents each value's
/// source; `basis` says it in words).
struct KernelRates {
  double gemm = 0.74;      ///< large bf16 GEMMs' share of the dense bf16 peak
  double gemm_fp8 = 0.74;  ///< large FP8 GEMMs' share of the FP8 peak
  /// Each GEMM's fixed cost beyond its FLOPs: launch, pipeline fill and the last partial wave.
  double gemm_overhead_s = 9e-6;
  double gemm_fp8_overhead_s = 11.5e-6;
  /// Flash attention forward and backward at head dim 128 on long sequences, share of the
  /// dense 16-bit peak (FLOPs counted causal-halved, backward 2.5x forward).
  double attention = 0.58;
  double elementwise_bandwidth = 0.8;  ///< memory-bound kernels' share of memory bandwidth
  bool measured = true;                ///< false: borrowed from another generation
  const char* basis = "";
};
KernelRates KernelRatesOf(const GpuSpec& gpu);

/// One micro-batch's time on one rank, by kind of kernel.
struct KernelTimes {
  double gemm_s = 0;
  double attention_s = 0;
  double pointwise_s = 0;  ///< norms, rotary, activations, residual adds, the loss, LoRA
  double fp8_cast_s = 0;   ///< casting GEMM inputs to FP8 and transposing them for backward
  double Total() const { return gemm_s + attention_s + pointwise_s + fp8_cast_s; }
  KernelTimes& operator+=(const KernelTimes& o);
};
KernelTimes operator*(double k, const KernelTimes& t);

/// One micro-batch's kernels: one dense layer, one MoE layer, and the head with its loss (the
/// embedding's lookup and gradient scatter are negligible). Forward, backward and whatever the
/// recomputation policy repeats.
struct MicroBatchKernels {
  KernelTimes dense_layer;
  KernelTimes moe_layer;
  KernelTimes head;
  /// Hardware FLOPs these kernels execute, per micro-batch on this rank (for the reported
  /// efficiency).
  double flops = 0;
};
MicroBatchKernels MicroBatchKernelTimes(const Setup& r, const ParamCounts& c);

/// What a step loses beyond the kernels it runs (launch gaps, synchronisation, host work):
/// kernel time x this factor (step_kernels.cpp documents the fit).
double StepKernelOverhead();

}  // namespace gpuplan
