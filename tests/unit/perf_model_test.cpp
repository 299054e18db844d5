// SPDX-License-Identifier: MIT
// The time model: FLOPs worked by hand, the roofline's arithmetic on catalog figures, and the
// seeds' observations, which must come out of the numbers rather than be written in.
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

TEST(TrainingTime, OneGpuRunsAtTheFittedEfficiency) {
  // One H100, no communication: tokens/s = 989.4e12 x 0.45 (Hopper's fitted efficiency) /
  // 48,250,773,504 = 9,227.7; MFU is the efficiency itself and scaling is perfect.
  const Json r = Result(Train("pretrain", "none", 1));
  EXPECT_NEAR(Training(r, "tokens_per_s"), 989.4e12 * 0.45 / 48250773504.0, 1e-6);
  EXPECT_NEAR(Training(r, "mfu"), 0.45, 1e-12);
  EXPECT_EQ(Training(r, "scaling_efficiency"), 1.0);
  // time = tokens / rate; the pretraining default is Chinchilla's 20 tokens per parameter.
  EXPECT_EQ(Training(r, "tokens"), 20 * 8030261248.0);
  EXPECT_NEAR(Training(r, "gpu_hours"), Training(r, "time_s") / 3600, 1e-9);
}

TEST(TrainingTime, PipelineBubble) {
  // 1F1B with p = 4 stages and m = 4 micro-batches: a step is (m + p - 1) slots of the busiest
  // stage. Llama 3.1 8B with full recomputation: 64,334,364,672 FLOPs per token, of which the
  // head is (6 + 2) x 128256 x 4096 = 4,202,692,608 and each layer 1,879,114,752. The last
  // stage (8 layers + head) has 19,235,610,624 against a balanced 16,083,591,168, so scaling
  // efficiency = 4/7 x 16,083,591,168 / 19,235,610,624 = 0.47779.
  Json req = Train("pretrain", "full", 4);
  req["parallel"] = {{"gpus", 4}, {"pp", 4}};
  req["workload"]["grad_accum"] = 4;
  EXPECT_NEAR(Training(Result(req), "scaling_efficiency"),
              4.0 / 7.0 * 16083591168.0 / 19235610624.0, 1e-9);
}

TEST(TrainingTime, DataParallelTrafficBeyondTheBackwardPass) {
  // Llama 2 7B on two RTX 4090s over PCIe 4 (32 GB/s x 0.8): the gradient all-reduce moves
  // 2 x 1/2 x 6,738,415,616 x 2 bytes = 13.48 GB in 0.52644 s. Compute: 512 tokens x
  // (6 x 6,607,343,616 + 6 x 32 x 512 x 8192) = 2.07101e13 FLOPs at 165.2e12 x 0.58 = 0.21614 s;
  // the backward two thirds (0.14409 s) hide part of the traffic, 0.38235 s stays exposed.
  Json req = {{"model", {{"preset", "llama-2-7b"}}},
              {"workload", {{"kind", "pretrain"}, {"micro_batch", 1}, {"seq_len", 512}}},
              {"memory_techniques", {{"recompute", "none"}}},
              {"parallel", {{"gpus", 2}, {"zero", 0}}},
              {"gpu", "rtx-4090-24gb"}};
  const Json r = Result(req);
  const double compute = 512 * (6 * 6607343616.0 + 6 * 32 * 512 * 8192.0) / (165.2e12 * 0.58);
  const double comm = 13476831232.0 / (32e9 * 0.8);
  EXPECT_NEAR(Training(r, "step_s"), compute + (comm - compute * 2 / 3), 1e-9);
}

double PerGpuRate(const char* gpu, int gpus) {
  Json req = Train("pretrain", "full", gpus, gpu);
  req["model"] = {{"preset", "llama-2-7b"}};
  req["parallel"]["zero"] = 3;
  return Training(Result(req), "tokens_per_s_per_gpu");
}

TEST(Seeds, SpeedUpIsSubLinearAndCrossingNodesCostsMore) {
  // Seed 003: adding cards never scales linearly, and 8 -> 16 cards across nodes loses more
  // than 4 -> 8 inside one. H100 PCIe servers: 8 cards a node, a shared 100 Gb/s NIC.
  const double r4 = PerGpuRate("h100-pcie-80gb", 4);
  const double r8 = PerGpuRate("h100-pcie-80gb", 8);
  const double r16 = PerGpuRate("h100-pcie-80gb", 16);
  EXPECT_LE(r8, r4);
  EXPECT_LT(r16, r8);
  EXPECT_GT(r8 / r4, r16 / r8);  // the loss from crossing nodes is the larger one
}

TEST(Seeds, TensorParallelOverPcieIsPoor) {
  // Seed 001: model parallelism beyond two cards drops speed even on NVLink, and badly over
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
  // The catalog's indicative H100 SXM price, 2.95 USD per GPU-hour, or the request's own.
  Json req = Train("pretrain", "none", 8);
  req["workload"]["tokens"] = 1e9;
  Json r = Result(req);
  EXPECT_NEAR(r["cost"]["usd_per_hour"].get<double>(), 8 * 2.95, 1e-9);
  const double hours = Training(r, "time_s") / 3600;
  EXPECT_NEAR(r["cost"]["usd_total"].get<double>(), 8 * 2.95 * hours, 1e-6);
  EXPECT_NEAR(r["cost"]["usd_per_million_tokens"].get<double>(), 8 * 2.95 * hours / 1000, 1e-9);
  req["pricing"] = {{"usd_per_gpu_hour", 1.5}};
  EXPECT_NEAR(Result(req)["cost"]["usd_per_hour"].get<double>(), 12.0, 1e-12);
  // A card without a price gets nulls, never an invented figure.
  req.erase("pricing");
  req["gpu"] = "a100-sxm-40gb";
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
