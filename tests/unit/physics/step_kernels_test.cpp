// SPDX-License-Identifier: MIT
// A training micro-batch timed kernel by kernel: FP8's casts and faster GEMMs, LoRA's side
// path, fused against eager pointwise ops, and Megatron's gradient buckets, each worked by hand.
#include <gtest/gtest.h>

#include "test_util.h"

namespace gpuplan {
namespace {

using testing::Json;
using testing::Result;

Json OneB(const char* kind, const char* weights) {
  return {{"model", {{"preset", "llama-3.2-1b"}}},
          {"workload", {{"kind", kind}, {"micro_batch", 4}, {"seq_len", 2048}}},
          {"memory_techniques", {{"recompute", "none"}}},
          {"precision", {{"weights", weights}}},
          {"gpu", "h100-sxm-80gb"}};
}

Json Inputs(const Json& request) {
  return Result(request)["explain"]["/performance/training/tokens_per_s"]["inputs"];
}

TEST(StepKernels, Fp8SpeedsUpOnlyTheLayersGemmsAndPaysForItsCasts) {
  // Llama 3.2 1B, 8192 tokens on one H100. Per layer the four GEMMs (qkv 2048 -> 3072, o
  // 2048 -> 2048, gate+up 2048 -> 16384, down 8192 -> 2048: 2 x 8192 x 2048 x 29696 FLOPs
  // forward, x3 with backward) run in FP8 at 0.74 x 1978.9e12 plus 11.5 us per launch: 16 x
  // (3 x 9.96363e11 / 1.46439e15 + 12 x 11.5 us) = 34.8693 ms; the head stays bf16: 3 x 2 x
  // 8192 x 2048 x 128256 / 732.156e12 + 3 x 9 us = 17.6608 ms. GEMMs 52.5301 ms against
  // 84.7147 ms in bf16 (the layers' GEMMs at 732.156e12 and 9 us: 67.0539 ms).
  // Casts: each GEMM input read in 16 bits and written as FP8 and its transpose (4 bytes an
  // element), forward the inputs (2048 + 2048 + 2048 + 8192 = 14336 per token), backward the
  // output gradients (3072 + 2048 + 16384 + 2048 = 23552): 4 x 37888 x 8192 bytes, and the
  // weights once a step, 60,817,408 x 4 bytes, at 3.35e12 x 0.8: 16 x 0.554058 ms = 8.86438 ms.
  const Json fp8 = Inputs(OneB("pretrain", "fp8"));
  const Json bf16 = Inputs(OneB("pretrain", "bf16"));
  EXPECT_NEAR(fp8["micro_batch_gemm_s"].get<double>(), 52.5301e-3, 1e-7);
  EXPECT_NEAR(bf16["micro_batch_gemm_s"].get<double>(), 84.7147e-3, 1e-7);
  EXPECT_NEAR(fp8["micro_batch_fp8_cast_s"].get<double>(), 8.86438e-3, 1e-8);
  EXPECT_EQ(bf16["micro_batch_fp8_cast_s"].get<double>(), 0.0);
  // Attention and the pointwise ops do not change: a 1B model gains 1.175x, far from the FP8
  // peak's 2x.
  EXPECT_EQ(fp8["micro_batch_attention_s"], bf16["micro_batch_attention_s"]);
  EXPECT_EQ(fp8["micro_batch_pointwise_s"], bf16["micro_batch_pointwise_s"]);
  EXPECT_NEAR(bf16["compute_s"].get<double>() / fp8["compute_s"].get<double>(), 1.175, 1e-3);
}

TEST(StepKernels, LoraSidePathMovesBytesForEveryAdaptedLinear) {
  // PEFT's LoRA (rank 16, all seven linears, fp32 adapters) on Llama 3.2 1B: per token and
  // layer the adapted inputs are 3 x 2048 (q, k, v) + 2048 (o) + 2 x 2048 (gate, up) + 8192
  // (down) = 20,480 and the outputs 2048 + 512 + 512 + 2048 + 2 x 8192 + 2048 = 23,552. Each
  // input is cast to fp32 (2 read, 4 written) and read by lora_A (4): 10 bytes; each output
  // written by lora_B, scaled, added and cast back, 6 x 4 = 24 bytes: 770,048 bytes forward,
  // x3 with backward. With the layer's own eager pointwise ops (2 x 18 x 2048 + 6 x 2048 + 10
  // x 2560 + 5 x 8192 + 2 x 2048 = 156,672 units, 313,344 bytes): 16 x 3 x 1,083,392 x 8192 /
  // 2.68e12 = 158.958 ms, plus the head's eager loss and final norm 2 x 8192 x (18 x 128256 +
  // 54 x 2048) / 2.68e12 = 14.7896 ms: 173.747 ms.
  const Json lora = Inputs(OneB("lora", "bf16"));
  EXPECT_NEAR(lora["micro_batch_pointwise_s"].get<double>(), 173.747e-3, 1e-6);
}

TEST(StepKernels, FusedKernelsMoveFewerBytesThanEagerOps) {
  // torch.compile fuses each norm, the rotary embedding, SwiGLU and the loss: per token and
  // layer 2 x 2 x 2048 (norms) + 6 x 2048 (residuals) + 2 x 2560 (rotary) + 3 x 8192 (SwiGLU)
  // + 2 x 2048 = 54,272 units = 108,544 bytes, x3 x 8192 x 16 / 2.68e12 = 15.9258 ms; the head
  // 2 x 8192 x (4 x 128256 + 3 x 2 x 2048) / 2.68e12 = 3.21146 ms: 19.1373 ms. Eager: 156,672
  // units (45.9746 ms) and 14.7896 ms: 60.7642 ms.
  Json compiled = OneB("pretrain", "bf16");
  compiled["memory_techniques"]["compile"] = true;
  EXPECT_NEAR(Inputs(compiled)["micro_batch_pointwise_s"].get<double>(), 19.1373e-3, 1e-7);
  EXPECT_NEAR(Inputs(OneB("pretrain", "bf16"))["micro_batch_pointwise_s"].get<double>(), 60.7642e-3,
              1e-7);
}

TEST(StepKernels, MegatronBucketsGrowWithTheDataParallelGroup) {
  // Megatron-Core's buckets hold max(40M, 1M x dp) parameters. Llama 3.1 8B over 64 H100s
  // (8 nodes) at tp 8, ZeRO-1: dp 8, so 40M-parameter buckets; each GPU's 1,003,782,656
  // parameters (8,030,261,248 / 8) of fp32 gradients make ceil(1,003,782,656 / 40e6) = 26
  // buckets, each reduce-scattered and all-gathered once: 52 collectives of (12.5 + 6.1 x 3)
  // us + 7 network crossings x 10.6 us = 105 us each: 5.46 ms of latency.
  Json r = {{"model", {{"preset", "llama-3.1-8b"}}},
            {"workload", {{"kind", "pretrain"}, {"micro_batch", 1}, {"seq_len", 4096}}},
            {"parallel", {{"gpus", 64}, {"tp", 8}, {"zero", 1}}},
            {"framework", "megatron"},
            {"gpu", "h100-sxm-80gb"}};
  // Without --overlap-grad-reduce the whole buffer is one bucket: 2 collectives.
  EXPECT_NEAR(Inputs(r)["dp_latency_s"].get<double>(), 2 * 105.0e-6, 1e-9);
  r["parallel"]["overlap"] = {{"grad_reduce", true}};
  EXPECT_NEAR(Inputs(r)["dp_latency_s"].get<double>(), 52 * 105.0e-6, 1e-9);
}

}  // namespace
}  // namespace gpuplan
