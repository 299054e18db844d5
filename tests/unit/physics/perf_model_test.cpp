// SPDX-License-Identifier: MIT
// The time model: FLOPs worked by hand, the roofline's arithmetic on catalog figures, and the
// practitioners' observations on scaling, which must come out of the numbers rather than be
// written in.
#include <gtest/gtest.h>

#include <cmath>

#include "test_util.h"

namespace gpuplan {
namespace {

using testing::Json;
using testing::Result;

Json Train(const char* kind, const char* recompute, int gpus, const char* gpu = "h100-sxm-80gb") {
  return {{"model", {{"preset", "llama-3.1-8b"}}},
          {"workload", {{"kind", kind}, {"micro_batch", 1}, {"seq_len", 2048}, {"grad_accum", 1}}},
          {"memory_techniques", {{"recompute", recompute}}},
          {"parallel", {{"gpus", gpus}}},
          {"gpu", gpu}};
}

double Training(const Json& r, const char* key) {
  return r["performance"]["training"][key].get<double>();
}

TEST(TrainingFlops, SixNPlusAttention) {
  // Llama 3.1 8B, seq 2048: N = 8,030,261,248 - 525,336,576 (the embedding lookup) =
  // 7,504,924,672 matmul parameters; 6N = 45,029,548,032; attention 6 x 32 layers x 2048 x
  // (4096 + 4096) = 3,221,225,472 (llm-foundry's 12 L d s). Total 48,250,773,504.
  const Json r = Result(Train("pretrain", "none", 1));
  EXPECT_EQ(Training(r, "flops_per_token"), 48250773504.0);
  EXPECT_EQ(Training(r, "hardware_flops_per_token"), 48250773504.0);
  // Full recomputation adds a forward pass of hardware work, not of model FLOPs: 2N +
  // 2 x 32 x 2048 x 8192 = 15,009,849,344 + 1,073,741,824.
  const Json full = Result(Train("pretrain", "full", 1));
  EXPECT_EQ(Training(full, "flops_per_token"), 48250773504.0);
  EXPECT_EQ(Training(full, "hardware_flops_per_token"), 64334364672.0);
  // LoRA's frozen base: 4N + 6 x adapters (41,943,040 at rank 16, all linear) + attention:
  // 30,019,698,688 + 251,658,240 + 3,221,225,472 = 33,492,582,400.
  EXPECT_EQ(Training(Result(Train("lora", "none", 1)), "flops_per_token"), 33492582400.0);
}

TEST(TrainingTime, OneGpuRunsItsKernelsThenStepsTheOptimizer) {
  // One H100, no communication, plain PyTorch (eager pointwise ops), 2048 tokens. Per layer:
  // GEMMs (k, n) = qkv (4096, 6144), o (4096, 4096), gate+up (4096, 28672), down (14336,
  // 4096): 2 x 2048 x 218,103,808 = 893,353,197,568 FLOPs forward, x3 with backward, at
  // 0.74 x 989.4e12 = 732.156e12 FLOP/s, plus 9 us for each of the 12 launches: 3.76851 ms.
  // Attention: 2 x 2048 x 1024 (causal half of 2048) x 8192 = 3.43597e10 FLOPs forward, x3.5
  // with backward, at 989.4e12 x 0.58 x 2048 / (2048 + 600): 0.270961 ms. Pointwise, 16-bit
  // units per token forward: two eager RMSNorms 2 x 18 x 4096, two residual adds 2 x 3 x
  // 4096, rotary 10 x (4096 + 1024), eager SwiGLU 5 x 14336, attention output 2 x 4096:
  // 303,104 units, 2 bytes, x3 with backward, x 2048 tokens at 3.35e12 x 0.8: 1.38975 ms.
  // The head: 2 x 2048 x 4096 x 128256 FLOPs x3 at the same rate plus 3 launches (8.84347
  // ms), the eager loss (18 units per logit) and final norm (3 x 18 x 4096) over the tokens:
  // 3.86642 ms. Kernels: 32 layers + head = 0.186445 s (GEMMs 0.129436, attention 0.008671,
  // pointwise 0.048339), x1.2 for what a step loses between them = 0.223734 s. Then the
  // AdamW step, memory-bound: 28 bytes x 8,030,261,248 parameters at 3.35 TB/s x 0.66 =
  // 0.101695 s. 2048 / 0.325429 s = 6,293.23 tokens/s; MFU 6,293.23 x 48,250,773,504 /
  // 989.4e12 = 0.30691. Scaling efficiency leaves the optimizer step out: one GPU scores 1.
  const Json r = Result(Train("pretrain", "none", 1));
  const Json& in = r["explain"]["/performance/training/tokens_per_s"]["inputs"];
  EXPECT_NEAR(in["micro_batch_gemm_s"].get<double>(), 0.129436, 1e-6);
  EXPECT_NEAR(in["micro_batch_attention_s"].get<double>(), 0.008671, 1e-6);
  EXPECT_NEAR(in["micro_batch_pointwise_s"].get<double>(), 0.048339, 1e-6);
  EXPECT_EQ(in["micro_batch_fp8_cast_s"].get<double>(), 0.0);
  EXPECT_NEAR(in["compute_s"].get<double>(), 0.223734, 1e-6);
  const double optimizer = 8030261248.0 * 28 / (3.35e12 * 0.66);
  EXPECT_NEAR(optimizer, 0.101695, 1e-6);
  EXPECT_NEAR(Training(r, "step_s"), 0.325429, 1e-6);
  EXPECT_NEAR(Training(r, "tokens_per_s"), 6293.23, 0.01);
  EXPECT_NEAR(Training(r, "mfu"), 0.30691, 1e-5);
  EXPECT_EQ(Training(r, "scaling_efficiency"), 1.0);
  // time = tokens / rate; the pretraining default is Chinchilla's 20 tokens per parameter.
  EXPECT_EQ(Training(r, "tokens"), 20 * 8030261248.0);
  EXPECT_NEAR(Training(r, "gpu_hours"), Training(r, "time_s") / 3600, 1e-9);
}

TEST(TrainingTime, ZeroShardsTheOptimizerStep) {
  // ZeRO-1 over 8 H100s: each GPU steps 1/8 of the 8,030,261,248 parameters, 28 bytes each at
  // 2.211 TB/s: 0.101695 / 8 = 0.012712 s.
  Json req = Train("pretrain", "none", 8);
  req["parallel"]["zero"] = 1;
  const Json r = Result(req);
  EXPECT_NEAR(r["explain"]["/performance/training/tokens_per_s"]["inputs"]["optimizer_step_s"]
                  .get<double>(),
              8030261248.0 * 28 / (3.35e12 * 0.66) / 8, 1e-12);
}

TEST(TrainingTime, PipelineBubble) {
  // 1F1B with p = 4 stages and m = 4 micro-batches: a step is (m + p - 1) slots of the busiest
  // stage. Llama 3.1 8B, 2048 tokens, full recomputation, on H100s: a layer's kernels take
  // 7.22606 ms (the GEMMs four times, 4 x 893,353,197,568 FLOPs at 732.156e12 plus 16 x 9 us;
  // attention 4.5 x 3.43597e10 at 989.4e12 x 0.58 x 2048 / 2648; 303,104 pointwise units x 2
  // bytes x 4 x 2048 at 2.68e12), the head 15.6583 ms (4 x 2 x 2048 x 4096 x 128256 at
  // 732.156e12 plus 4 x 9 us, and the eager loss and final norm, 2 x 2048 x (18 x 128256 + 3
  // x 18 x 4096) bytes at 2.68e12). The last stage (8 layers + head, 73.4667 ms) against a
  // balanced (32 layers + head) / 4 = 61.7230 ms: scaling efficiency = 4/7 x 61.7230 / 73.4667
  // = 0.480085.
  Json req = Train("pretrain", "full", 4);
  req["parallel"] = {{"gpus", 4}, {"pp", 4}};
  req["workload"]["grad_accum"] = 4;
  EXPECT_NEAR(Training(Result(req), "scaling_efficiency"), 0.480085, 1e-6);
}

TEST(TrainingTime, DataParallelTrafficBeyondTheBackwardPass) {
  // Llama 2 7B on two RTX 4090s over PCIe 4 (32 GB/s x 0.8 = 25.6 GB/s), plain DDP, 512
  // tokens. Compute: a layer's GEMMs 3 x 2 x 512 x 4096 x (12288 + 4096 + 22016 + 11008) at
  // Ada's 0.93 x 165.2e12 plus 12 x 9 us, attention 3.5 x 2 x 512 x 256 x 8192 at 165.2e12 x
  // 0.737 x 0.83 x 512 / 1112, and (2 x 18 x 4096 + 6 x 4096 + 10 x 8192 + 5 x 11008 + 2 x
  // 4096) eager pointwise units x 2 bytes x 3 x 512 at 1008e9 x 0.8: 5.52441 ms; the head
  // (3 x 2 x 512 x 4096 x 32000 FLOPs, 3 launches, the eager loss and final norm) 3.66012
  // ms; x1.2: 0.216530 s. The gradient all-reduce moves 2 x 1/2 x 13,476,831,232 bytes in
  // 0.526439 s, in ceil(13,476,831,232 / 25 MiB) = 515 buckets of 55.8 us latency each
  // ((12.5 + 6.1 log2 2) x 3 over PCIe): 0.555176 s. The backward's two thirds (0.144353 s)
  // hide part of it: 0.410823 s stays exposed, the last bucket (the 262,144,000-byte embedding
  // gradient, 10.296 ms) among it. The 0.144353 s overlapped run 18.9% slower (0.027283 s),
  // and the AdamW step reads and writes 28 bytes x 6,738,415,616 at 1,008 GB/s x 0.66:
  // 0.283603 s. Step: 0.938238 s.
  Json req = {{"model", {{"preset", "llama-2-7b"}}},
              {"workload", {{"kind", "pretrain"}, {"micro_batch", 1}, {"seq_len", 512}}},
              {"memory_techniques", {{"recompute", "none"}}},
              {"parallel", {{"gpus", 2}, {"zero", 0}}},
              {"gpu", "rtx-4090-24gb"}};
  const Json r = Result(req);
  const Json& in = r["explain"]["/performance/training/tokens_per_s"]["inputs"];
  const double compute = 0.2165296;
  EXPECT_NEAR(in["compute_s"].get<double>(), compute, 1e-6);
  const double latency = 515 * (12.5e-6 + 6.1e-6) * 3;
  const double comm = 13476831232.0 / 25.6e9 + latency;
  EXPECT_NEAR(in["dp_comm_s"].get<double>(), 0.555176, 1e-6);
  EXPECT_NEAR(in["dp_latency_s"].get<double>(), latency, 1e-12);
  EXPECT_NEAR(in["dp_last_bucket_s"].get<double>(), 262144000.0 / 25.6e9 + 55.8e-6, 1e-12);
  EXPECT_NEAR(in["dp_exposed_s"].get<double>(), comm - compute * 2 / 3, 1e-6);
  EXPECT_NEAR(in["dp_contention_s"].get<double>(), 0.189 * compute * 2 / 3, 1e-6);
  EXPECT_NEAR(in["optimizer_step_s"].get<double>(), 0.283603, 1e-6);
  EXPECT_NEAR(Training(r, "step_s"), 0.938238, 1e-6);
}

TEST(TrainingTime, LastBucketAndFirstGatherAreExposed) {
  // Llama 3.1 8B, 16 H100s (two nodes), micro-batch 8 x 2048: the reductions fit behind the
  // backward, yet the step keeps what nothing can hide. DDP: the last bucket is the
  // embedding's gradient, 128,256 x 4096 x 2 = 1,050,673,152 bytes, all-reduced over 16 ranks
  // at min(360, 8 x 50 x 0.8) = 320 GB/s: 2 x 15/16 x 1,050,673,152 / 320e9 = 6.15629 ms, plus
  // the latency 12.5 + 6.1 x 4 = 36.9 us and 2 x 2 network crossings of 10.6 us: 6.23559 ms.
  Json ddp = Train("pretrain", "none", 16);
  ddp["workload"]["micro_batch"] = 8;
  const Json dr = Result(ddp);
  const Json& d = dr["explain"]["/performance/training/tokens_per_s"]["inputs"];
  EXPECT_NEAR(d["dp_last_bucket_s"].get<double>(), 6.15629e-3 + 36.9e-6 + 42.4e-6, 1e-8);
  EXPECT_NEAR(d["dp_exposed_s"].get<double>(), d["dp_last_bucket_s"].get<double>(), 1e-12);
  // FSDP: before the forward, the root unit (embedding and head, 2 x 525,336,576 parameters)
  // and the first layer (218,112,000) are gathered in bf16: 15/16 x 2,537,570,304 bytes /
  // 320e9 = 7.434288 ms, two all-gathers of 36.9 + 10.6 us latency each.
  Json fsdp = ddp;
  fsdp["parallel"]["zero"] = 3;
  const Json fr = Result(fsdp);
  const Json& f = fr["explain"]["/performance/training/tokens_per_s"]["inputs"];
  EXPECT_NEAR(f["dp_first_gather_s"].get<double>(), 7.434288e-3 + 2 * 47.5e-6, 1e-8);
}

double PerGpuRate(const char* gpu, int gpus) {
  Json req = Train("pretrain", "full", gpus, gpu);
  req["model"] = {{"preset", "llama-2-7b"}};
  req["parallel"]["zero"] = 3;
  return Training(Result(req), "tokens_per_s_per_gpu");
}

TEST(ScalingRules, SpeedUpIsSubLinearAndCrossingNodesCostsMore) {
  // Adding cards never scales linearly, and 8 -> 16 cards across nodes loses more
  // than 4 -> 8 inside one. H100 PCIe servers: 8 cards a node, a shared 100 Gb/s NIC.
  const double r4 = PerGpuRate("h100-pcie-80gb", 4);
  const double r8 = PerGpuRate("h100-pcie-80gb", 8);
  const double r16 = PerGpuRate("h100-pcie-80gb", 16);
  EXPECT_LE(r8, r4);
  EXPECT_LT(r16, r8);
  EXPECT_GT(r8 / r4, r16 / r8);  // the loss from crossing nodes is the larger one
}

TEST(ScalingRules, SecondNodeNeverDoublesTheRate) {
  // Eight to sixteen cards is where scaling usually starts to fall off. On every card of the
  // catalog, going from one full node to two (plain DDP, and FSDP) must cost scaling efficiency
  // and give less than twice the rate: the last bucket, the collectives' latency across the
  // network and the contention grow with the ring, whatever the link.
  for (const GpuSpec& g : testing::ShippedCatalog().gpus) {
    for (int zero : {0, 3}) {
      const auto run = [&](int64_t gpus) {
        Json req = Train("pretrain", "selective", static_cast<int>(gpus), g.id.c_str());
        req["workload"]["micro_batch"] = 4;
        req["parallel"]["zero"] = zero;
        return Result(req)["performance"]["training"];
      };
      const Json one = run(g.gpus_per_node);
      const Json two = run(2 * g.gpus_per_node);
      EXPECT_LT(two["scaling_efficiency"].get<double>(), one["scaling_efficiency"].get<double>())
          << g.id << " zero " << zero;
      EXPECT_LT(two["scaling_efficiency"].get<double>(), 1.0) << g.id;
      if (zero == 0) {
        // ZeRO-3 halves each GPU's optimizer step on twice the GPUs, which can outweigh what the
        // second node costs: only plain DDP is held below twice the rate.
        EXPECT_LT(two["tokens_per_s"].get<double>(), 2 * one["tokens_per_s"].get<double>()) << g.id;
      }
    }
  }
}

TEST(ScalingRules, TensorParallelOverPcieIsPoor) {
  // Model parallelism beyond two cards drops speed even on NVLink, and badly over
  // PCIe: compare tp = 4 inside an NVLink A100 box with tp = 4 over PCIe on RTX 4090s.
  const auto scaling = [](const char* gpu) {
    Json req = Train("lora", "full", 4, gpu);
    req["parallel"] = {{"gpus", 4}, {"tp", 4}};
    return Training(Result(req), "scaling_efficiency");
  };
  const double nvlink = scaling("a100-sxm-80gb");
  const double pcie = scaling("rtx-4090-24gb");
  EXPECT_LT(nvlink, 1.0);
  EXPECT_LT(pcie, nvlink - 0.1);
}

TEST(Decode, BandwidthBoundTpotAndComputeBoundPrefill) {
  // Llama 3.1 8B in bf16 on an H100, one sequence of 1024 + 256 tokens. Each step reads the
  // weights but the embedding table (8,030,261,248 - 525,336,576 parameters x 2 =
  // 15,009,849,344 bytes) and the KV cache at the average context of 1024 + 128 tokens
  // (131,072 x 1152 = 150,994,944): 15,160,844,288 bytes at 3350e9 x 0.66 = 6.857 ms. Prefill:
  // 2 x 7,504,924,672 x 1024 + 32 x 1024^2 x 8192 FLOPs at 989.4e12 x 0.45 = 35.14 ms.
  const Json r = Result({{"model", {{"preset", "llama-3.1-8b"}}},
                         {"workload",
                          {{"kind", "inference"},
                           {"prompt_tokens", 1024},
                           {"output_tokens", 256},
                           {"concurrency", 1}}},
                         {"gpu", "h100-sxm-80gb"}});
  const Json& p = r["performance"]["inference"];
  EXPECT_NEAR(p["tpot_ms"].get<double>(), 15160844288.0 / (3350e9 * 0.66) * 1e3, 1e-6);
  EXPECT_EQ(p["bound"], "memory");
  const double prefill = 2 * 7504924672.0 * 1024 + 32 * 1024.0 * 1024 * 8192;
  EXPECT_NEAR(p["ttft_ms"].get<double>(), prefill / (989.4e12 * 0.45) * 1e3, 1e-6);
  EXPECT_FALSE(r["performance"].contains("training"));
}

TEST(Serving, MaxConcurrencyFollowsMemoryAndTargets) {
  Json req = {{"model", {{"preset", "llama-3.1-8b"}}},
              {"workload",
               {{"kind", "inference"},
                {"prompt_tokens", 2048},
                {"output_tokens", 512},
                {"concurrency", 8}}},
              {"gpu", "h100-sxm-80gb"}};
  const int64_t memory_only = Result(req)["performance"]["inference"]["max_concurrency"];
  // Memory: (80 GiB / 1.2 - runtime - weights) over 131,072 bytes x 2560 tokens a sequence is
  // a few hundred sequences.
  EXPECT_GT(memory_only, 100);
  EXPECT_LT(memory_only, 300);
  req["constraints"] = {{"tpot_ms", 15}};
  const Json tight = Result(req);
  const int64_t latency_bound = tight["performance"]["inference"]["max_concurrency"];
  EXPECT_LT(latency_bound, memory_only);
  EXPECT_GE(latency_bound, 8);
  EXPECT_TRUE(tight["performance"]["inference"]["meets_targets"].get<bool>());
  req["constraints"] = {{"tpot_ms", 1}};  // below what even one sequence can do
  const Json impossible = Result(req);
  EXPECT_EQ(impossible["performance"]["inference"]["max_concurrency"], 0);
  EXPECT_FALSE(impossible["performance"]["inference"]["meets_targets"].get<bool>());
}

TEST(Cost, PricePerHourJobAndMillionTokens) {
  // The lowest H100 SXM rental the shipped catalog lists in the global market (the default):
  // Vast.ai's 2.4024 USD per GPU-hour (2026-10-19), or the request's own.
  Json req = Train("pretrain", "none", 8);
  req["workload"]["tokens"] = 1e9;
  Json r = Result(req);
  EXPECT_NEAR(r["cost"]["usd_per_hour"].get<double>(), 8 * 2.4024, 1e-9);
  EXPECT_EQ(r["cost"]["offer"]["provider"], "Vast.ai");
  const double hours = Training(r, "time_s") / 3600;
  EXPECT_NEAR(r["cost"]["usd_total"].get<double>(), 8 * 2.4024 * hours, 1e-6);
  EXPECT_NEAR(r["cost"]["usd_per_million_tokens"].get<double>(), 8 * 2.4024 * hours / 1000, 1e-9);
  req["pricing"] = {{"usd_per_gpu_hour", 1.5}};
  EXPECT_NEAR(Result(req)["cost"]["usd_per_hour"].get<double>(), 12.0, 1e-12);
  // A card without a price gets nulls, never an invented figure.
  req.erase("pricing");
  req["gpu"] = "a30-24gb";
  EXPECT_TRUE(Result(req)["cost"]["usd_per_hour"].is_null());
}

TEST(Reliability, CheckpointsInterruptionsAndLostTime) {
  // Llama 3.1 8B full training in bf16 + AdamW: a checkpoint is 8,030,261,248 x (2 + 4 + 8) =
  // 112,423,657,472 bytes; at 2 GB/s (the assumed storage) 56.21 s. 1024 GPUs fail 1024 x
  // 1.9733e-5 = 0.020207 times an hour: job MTBF 178,157 s; Young/Daly interval sqrt(2 x 56.21 x
  // 178,157) = 4,475 s.
  Json req = Train("pretrain", "none", 1024);
  req["workload"]["tokens"] = 1e12;
  const Json r = Result(req);
  const Json& rel = r["reliability"];
  EXPECT_EQ(rel["checkpoint_bytes"], 112423657472);
  EXPECT_NEAR(rel["checkpoint_write_s"].get<double>(), 112423657472.0 / 2e9, 1e-9);
  const double rate = 419.0 / (16384.0 * 54 * 24);
  const double hours = Training(r, "time_s") / 3600;
  EXPECT_NEAR(rel["expected_interruptions"].get<double>(), rate * 1024 * hours, 1e-9);
  const double mtbf = 3600 / (rate * 1024);
  const double interval = std::sqrt(2 * 112423657472.0 / 2e9 * mtbf);
  EXPECT_NEAR(rel["checkpoint_interval_s"].get<double>(), interval, 1e-6);
  EXPECT_NEAR(interval, 4475, 1);
  // Serving has no run to checkpoint.
  EXPECT_TRUE(Result({{"model", {{"preset", "llama-3.1-8b"}}},
                      {"workload", {{"kind", "inference"}}},
                      {"gpu", "h100-sxm-80gb"}})["reliability"]
                  .is_null());
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

TEST(EagerDecode, AStepWithoutGraphsWaitsOnTheHostsLaunches) {
  // Llama 3.1 8B under vLLM on one H200, batch 1. With CUDA graphs the step reads the weights
  // and cache at the card's bandwidth (about 4.8 ms). With enforce_eager the host launches each
  // layer's kernels: 32 layers x 0.593 ms (18.99 ms for the step on one H200 host, the
  // hand-written eager step of tests/reference/h200-2026-12): 18.99 ms.
  testing::Json r = {{"model", {{"preset", "llama-3.1-8b"}}},
                     {"gpu", "h200-sxm-141gb"},
                     {"framework", "vllm"},
                     {"workload",
                      {{"kind", "inference"},
                       {"concurrency", 1},
                       {"prompt_tokens", 1024},
                       {"output_tokens", 128}}}};
  const double graphs = testing::Result(r)["performance"]["inference"]["tpot_ms"];
  EXPECT_LT(graphs, 6.0);
  r["serving"] = {{"enforce_eager", true}};
  const testing::Json eager = testing::Result(r);
  EXPECT_NEAR(eager["performance"]["inference"]["tpot_ms"].get<double>(), 18.99, 1e-9);
  EXPECT_EQ(eager["explain"]["/performance/inference/tpot_ms"]["inputs"]["host_bound"], 1.0);
}

}  // namespace
}  // namespace gpuplan
