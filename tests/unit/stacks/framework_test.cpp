// SPDX-License-Identifier: MIT
// Framework profiles: each engine's documented memory behaviour, worked by hand
// from the projects' defaults (catalog/stacks.json names the sources).
#include <gtest/gtest.h>

#include <cmath>

#include "test_util.h"

namespace gpuplan::testing {
namespace {

// Llama 3.1 8B: 8,030,261,248 parameters (Meta's model card); bf16 weights 16,060,522,496 B.
// KV cache per token: 32 layers x 2 (K, V) x 8 KV heads x 128 x 2 B = 131,072 B.
constexpr double kWeights8b = 16060522496.0;
constexpr double kKvPerToken8b = 131072.0;
constexpr double kH100 = 80 * kGiB;  // 85,899,345,920 B

Json Serving(const char* framework, const char* gpu, int concurrency) {
  return {{"model", {{"preset", "llama-3.1-8b"}}},
          {"gpu", gpu},
          {"framework", framework},
          {"workload", {{"kind", "inference"}, {"concurrency", concurrency}}}};
}

TEST(Framework, VllmTakesItsShareOfTheCardAndTheKvCacheGetsTheRest) {
  const Json r = Result(Serving("vllm", "h100-sxm-80gb", 64));
  const Json& f = r["framework"];
  // vLLM sizes its pool after a profile run at its own limits (8192 tokens, 1024 sequences on
  // an 80 GiB Hopper card), whatever the request: the forward pass holds 8192 x (2 x 4096 +
  // 3 x 14336) x 2 = 838,860,800 B; the sampler 1024 rows x 128,256 x 18 B = 2,364,014,592 B
  // beside the pass's 8192 x 4096 x 2 = 67,108,864 B of hidden states: 2,431,123,456 B, the
  // larger. The pool: 0.92 x the card's usable 79.19 GiB (78,227,245,839.2 B) - weights
  // 16,060,522,496 - 2,431,123,456 - CUDA graphs 536,870,912 = 59,198,728,975.2 B, in whole
  // 16-token blocks of 2,097,152 B: 59,198,406,656 B.
  EXPECT_DOUBLE_EQ(Detail(r, "activations.profile_sampler"), 2431123456.0);
  EXPECT_DOUBLE_EQ(f["kv_pool_bytes"].get<double>(), 59198406656.0);
  const double other = r["memory"]["total_bytes"].get<double>() - PerGpu(r, "kv_cache");
  EXPECT_NEAR(f["engine_bytes"].get<double>(), other + 59198406656.0, 1.0);
  const double tokens = f["kv_pool_tokens"].get<double>();
  EXPECT_LE(tokens * kKvPerToken8b, f["kv_pool_bytes"].get<double>());
  EXPECT_GT((tokens + 1) * kKvPerToken8b, f["kv_pool_bytes"].get<double>());
  // 1024 + 256 tokens a sequence.
  EXPECT_EQ(f["kv_pool_sequences"].get<double>(), std::floor(tokens / 1280));
  // Hopper with 80 GiB: 1024 sequences, 8192-token chunks; its CUDA graphs count as runtime.
  EXPECT_EQ(f["max_seqs"], 1024);
  EXPECT_EQ(f["max_batched_tokens"], 8192);
  EXPECT_EQ(Detail(r, "runtime.cuda_graphs"), 0.5 * kGiB);
  EXPECT_FALSE(r["request_normalized"]["workload"].contains("prefill_chunk_tokens"));
  // An Ampere card keeps vLLM's smaller defaults: 256 sequences, 2048-token chunks.
  const Json a = Result(Serving("vllm", "a100-sxm-80gb", 64));
  EXPECT_EQ(a["framework"]["max_seqs"], 256);
  EXPECT_EQ(a["framework"]["max_batched_tokens"], 2048);
}

TEST(Framework, VllmCapsConcurrencyAtMaxNumSeqs) {
  Json q = Serving("vllm", "a100-sxm-80gb", 300);
  q["workload"]["output_tokens"] = 16;
  q["workload"]["prompt_tokens"] = 16;
  const Json r = Result(q);
  // 32 tokens a sequence fit thousands of times over; vLLM runs 256 at once on this card.
  EXPECT_EQ(r["performance"]["inference"]["max_concurrency"], 256);
  bool warned = false;
  for (const Json& w : r["warnings"]) warned = warned || w["code"] == "engine_max_seqs";
  EXPECT_TRUE(warned);
}

TEST(Framework, SglangKeepsAReserveAndGivesTheRestToWeightsAndKv) {
  const Json r = Result(Serving("sglang", "h100-sxm-80gb", 8));
  // 80 GiB, tp 1: chunked_prefill_size 8192, cuda_graph_max_bs 256, so the reserve is
  // 512 + 1.5 x 8192 + 2 x 256 + 1 x 1 / 8 x 1024 = 13,440 MiB (above the 10 GiB floor):
  // 14,092,861,440 B. Pool = the usable 79.19 GiB (85,029,615,042.56 B) - 14,092,861,440 -
  // 16,060,522,496 = 54,876,231,106.56 B.
  EXPECT_NEAR(r["framework"]["kv_pool_bytes"].get<double>(), 54876231106.56, 1.0);
  EXPECT_TRUE(r["framework"]["max_seqs"].is_null());
  // A 24 GiB card: 2048-token chunks.
  EXPECT_EQ(Result(Serving("sglang", "rtx-4090-24gb", 1))["framework"]["max_batched_tokens"], 2048);
}

TEST(Framework, TensorRtLlmTakesNineTenthsOfWhatIsFree) {
  const Json r = Result(Serving("tensorrt_llm", "h100-sxm-80gb", 8));
  const Json& f = r["framework"];
  EXPECT_EQ(f["max_seqs"], 2048);
  EXPECT_EQ(f["max_batched_tokens"], 8192);
  // What is free stays free: a tenth of it.
  const double other = r["memory"]["total_bytes"].get<double>() - PerGpu(r, "kv_cache");
  EXPECT_NEAR(kH100 - other - f["kv_pool_bytes"].get<double>(), 0.1 * (kH100 - other), 1.0);
}

TEST(Framework, LlamaCppAllocatesTheContextAskedForAndSplitsByLayers) {
  const Json r = Result(Serving("llama_cpp", "h100-sxm-80gb", 4));
  // 4 slots x (1024 + 256) tokens x 131,072 B = 671,088,640 B.
  EXPECT_EQ(r["framework"]["kv_pool_bytes"].get<double>(), 671088640.0);
  EXPECT_EQ(r["framework"]["kv_pool_tokens"].get<double>(), 5120.0);
  EXPECT_EQ(r["framework"]["kv_pool_sequences"].get<double>(), 4.0);
  EXPECT_EQ(r["framework"]["max_batched_tokens"], 512);
  Json tp = Serving("llama_cpp", "h100-sxm-80gb", 1);
  tp["parallel"] = {{"gpus", 2}, {"tp", 2}};
  const Json bad = Result(tp);
  ASSERT_FALSE(bad["infeasible"].empty());
  EXPECT_EQ(bad["infeasible"][0]["code"], "framework_layout");
  // The planner splits a 70B model by layers.
  const Json plan = Json::parse(ShippedEngine().Plan(Json{
      {"model", {{"preset", "llama-3.1-70b"}}},
      {"framework", "llama_cpp"},
      {"workload", {{"kind", "inference"}}},
      {"constraints", {{"gpus", {"h100-sxm-80gb"}}}}}.dump()));
  ASSERT_TRUE(plan["ok"]) << plan.dump(1);
  const Json& par = plan["result"]["recommendations"][0]["parallel"];
  EXPECT_EQ(par["tp"], 1);
  EXPECT_GT(par["pp"].get<int>(), 1);
}

Json Training(const char* framework, int gpus, int zero) {
  Json q = {{"model", {{"preset", "llama-3.1-8b"}}},
            {"gpu", "h100-sxm-80gb"},
            {"framework", framework},
            {"workload", {{"kind", "full_finetune"}, {"seq_len", 2048}}},
            {"parallel", {{"gpus", gpus}}}};
  if (zero >= 0) q["parallel"]["zero"] = zero;
  return q;
}

TEST(Framework, MegatronKeepsFp32GradientsInOneBuffer) {
  // bf16 weights with fp32 main_grad: 2 + 4 + 12 = 18 bytes per parameter (Megatron-LM's
  // distributed-optimizer table); gradients 8,030,261,248 x 4 = 32,121,044,992 B.
  const Json r = Result(Training("megatron", 8, 0));
  EXPECT_EQ(PerGpu(r, "gradients"), 32121044992.0);
  EXPECT_EQ(Detail(r, "buffers.gradient_buckets"), 0.0);  // the all-reduce uses that buffer
  // With the distributed optimizer, 6 + 12/d: the 12 bytes shard over 8 ranks.
  const Json d = Result(Training("megatron", 8, 1));
  EXPECT_EQ(PerGpu(d, "optimizer_states"), 8030261248.0 * 12 / 8);
  EXPECT_EQ(PerGpu(d, "gradients"), 32121044992.0);
  // ZeRO-2/3 are not Megatron's.
  EXPECT_EQ(Result(Training("megatron", 8, 3))["infeasible"][0]["code"], "framework_layout");
}

TEST(Framework, DeepSpeedHoldsItsContiguousGradientBucket) {
  // reduce_bucket_size 5e8 elements in bf16: 1,000,000,000 B, against PyTorch's two 25 MiB.
  EXPECT_EQ(Detail(Result(Training("deepspeed", 8, 2)), "buffers.gradient_buckets"), 1e9);
  EXPECT_EQ(Detail(Result(Training("pytorch_fsdp", 8, 2)), "buffers.gradient_buckets"),
            2 * 25.0 * 1024 * 1024);
  Json tp = Training("deepspeed", 8, 1);
  tp["parallel"]["tp"] = 2;
  EXPECT_EQ(Result(tp)["infeasible"][0]["code"], "framework_layout");
}

TEST(Framework, FsdpShardsFullyByDefault) {
  const Json r = Result(Training("pytorch_fsdp", 8, -1));
  EXPECT_EQ(r["request_normalized"]["parallel"]["zero"], 3);
  // ZeRO-3 over 8 ranks: 16,060,522,496 / 8 = 2,007,565,312 B of weights per GPU.
  EXPECT_EQ(PerGpu(r, "weights"), kWeights8b / 8);
  // One GPU has nothing to shard over.
  EXPECT_EQ(Result(Training("pytorch_fsdp", 1, -1))["request_normalized"]["parallel"]["zero"], 0);
}

TEST(Framework, AServingEngineRefusesTrainingAndTheReverse) {
  Json q = Training("vllm", 1, -1);
  Json env = Envelope(q);
  ASSERT_FALSE(env["ok"]);
  EXPECT_EQ(env["errors"][0]["code"], "framework_mismatch");
  EXPECT_EQ(env["errors"][0]["path"], "/framework");
  env = Envelope(Serving("megatron", "h100-sxm-80gb", 1));
  ASSERT_FALSE(env["ok"]);
  EXPECT_EQ(env["errors"][0]["code"], "framework_mismatch");
  env = Envelope(Serving("vllm-0.9", "h100-sxm-80gb", 1));
  ASSERT_FALSE(env["ok"]);
  EXPECT_EQ(env["errors"][0]["path"], "/framework");
}

TEST(Framework, WithoutOneNothingChanges) {
  Json q = Serving("vllm", "h100-sxm-80gb", 8);
  q.erase("framework");
  const Json r = Result(q);
  EXPECT_TRUE(r["framework"].is_null());
  EXPECT_EQ(Detail(r, "runtime.cuda_graphs"), 0.0);
  EXPECT_EQ(r["request_normalized"]["workload"]["prefill_chunk_tokens"], 8192);
}

}  // namespace
}  // namespace gpuplan::testing
