// SPDX-License-Identifier: MIT
// The request's `serving` settings (contract, second round): each engine's own knob
// moves the figure that engine's start-up arithmetic says it moves. Values worked by hand from
// Llama 3.1 8B: bf16 weights 16,060,522,496 B; KV 131,072 B per token (32 layers x 2 x 8 KV
// heads x 128 x 2 B); an 80 GiB card is 85,899,345,920 B.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "test_util.h"

namespace gpuplan::testing {
namespace {

constexpr double kBlock = 16 * 131072.0;  // vLLM's 16-token block: 2,097,152 B

Json Serve(const char* framework, const Json& serving, int concurrency = 64) {
  Json q = {{"model", {{"preset", "llama-3.1-8b"}}},
            {"gpu", "h100-sxm-80gb"},
            {"framework", framework},
            {"workload", {{"kind", "inference"}, {"concurrency", concurrency}}}};
  if (!serving.is_null()) q["serving"] = serving;
  return q;
}

bool Warns(const Json& r, const std::string& code) {
  for (const Json& w : r["warnings"]) {
    if (w["code"] == code) return true;
  }
  return false;
}

std::string FirstInfeasible(const Json& r) {
  return r["infeasible"].empty() ? "" : r["infeasible"][0]["code"].get<std::string>();
}

TEST(ServingSettings, VllmUtilizationAndEagerModeSizeThePool) {
  // --gpu-memory-utilization 0.8 and --enforce-eager: 0.8 x the usable 79.19 GiB
  // (68,023,692,034.0 B) less the weights and the profile's peak (2,431,123,456 B: the
  // sampler's 1024 x 128,256 x 18 B beside 8192 x 4096 x 2 B of hidden states), no CUDA
  // graphs: 49,532,046,082.0 B, in whole 2,097,152-B blocks: 49,530,535,936 B.
  const Json r = Result(Serve("vllm", {{"gpu_memory_utilization", 0.8}, {"enforce_eager", true}}));
  EXPECT_EQ(Detail(r, "runtime.cuda_graphs"), 0);
  EXPECT_DOUBLE_EQ(r["framework"]["kv_pool_bytes"].get<double>(), 49530535936.0);
  EXPECT_DOUBLE_EQ(r["framework"]["kv_pool_tokens"].get<double>(), 49530535936.0 / 131072.0);
  EXPECT_EQ(r["request_normalized"]["serving"]["gpu_memory_utilization"], 0.8);
  EXPECT_EQ(r["request_normalized"]["serving"]["version"], "latest");
}

TEST(ServingSettings, OlderVllmTakesPointNineAndCapturesGraphsAfterThePool) {
  // Before 0.20 the share was 0.9 and before 0.21 the CUDA graphs (0.5 GiB) were captured
  // after the pool was sized: 0.9 x 79.19 GiB (76,526,653,538.3 B) - 16,060,522,496 -
  // 2,431,123,456 = 58,035,007,586.3 B, whole blocks: 58,034,487,296 B.
  const Json r = Result(Serve("vllm", {{"version", "0.8.5"}}));
  EXPECT_EQ(Detail(r, "runtime.cuda_graphs"), 0.5 * kGiB);
  EXPECT_DOUBLE_EQ(r["framework"]["kv_pool_bytes"].get<double>(), 58034487296.0);
}

TEST(ServingSettings, VllmV0BatchesWholePromptsAndCountsItsWorkspaces) {
  // Before 0.8.0 a batch holds whole prompts: max_model_len 20,000 makes the profile's forward
  // pass 20,000 x 102,400 B = 2,048,000,000 B (above the sampler's 256 x 128,256 x 18 +
  // 20,000 x 8,192 = 754,843,648 B on a 24 GiB card), and 0.33 GiB outside PyTorch is counted
  // (354,334,801.9 B). On an RTX 3090 (23.58 GiB usable): 0.9 x 23.58 GiB = 22,786,948,988.93 B
  // - 16,060,522,496 - 2,048,000,000 - 354,334,801.92 = 4,324,091,691.0 B, whole blocks:
  // 4,322,230,272 B = 32,976 tokens (the log of vLLM issue #10517 shows 31,232).
  Json q = Serve("vllm", {{"version", "0.6.4"}, {"max_model_len", 20000}}, 1);
  q["gpu"] = "rtx-3090-24gb";
  const Json r = Result(q);
  EXPECT_DOUBLE_EQ(Detail(r, "activations.profile_forward"), 2048000000.0);
  EXPECT_DOUBLE_EQ(r["framework"]["kv_pool_bytes"].get<double>(), 4322230272.0);
}

TEST(ServingSettings, VllmSchedulerCapsAreTheRequestsOwn) {
  const Json r = Result(Serve("vllm", {{"max_num_seqs", 32}, {"max_num_batched_tokens", 4096}}));
  EXPECT_EQ(r["framework"]["max_seqs"], 32);
  EXPECT_EQ(r["framework"]["max_batched_tokens"], 4096);
  // 64 asked, 32 run at once: the decode figures are those of 32 sequences.
  EXPECT_TRUE(Warns(r, "served_below_request"));
  const Json& p = r["performance"]["inference"];
  EXPECT_NEAR(p["decode_tokens_per_s_total"].get<double>(),
              32 * p["decode_tokens_per_s_per_seq"].get<double>(), 1e-6);
  EXPECT_LE(p["max_concurrency"], 32);
}

TEST(ServingSettings, SglangStaticFractionHoldsWeightsAndPool) {
  // --mem-fraction-static 0.8 of the usable 79.19 GiB: 68,023,692,034.05 B for the weights
  // and the pool, so the pool is 68,023,692,034.05 - 16,060,522,496 = 51,963,169,538.05 B.
  const Json r = Result(Serve("sglang", {{"mem_fraction_static", 0.8}}));
  EXPECT_NEAR(r["framework"]["kv_pool_bytes"].get<double>(), 51963169538.05, 1.0);
}

TEST(ServingSettings, MaxModelLenRejectsLongerRequests) {
  // 1,024 + 256 tokens a request against max_model_len 1,000.
  const Json r = Result(Serve("vllm", {{"max_model_len", 1000}}));
  EXPECT_EQ(FirstInfeasible(r), "exceeds_max_model_len");
  EXPECT_FALSE(r["memory"]["fits"].get<bool>());
}

TEST(ServingSettings, LlamaCppAllocatesItsContextWithItsOwnCacheTypes) {
  // n_ctx 8192 for every slot: f16 K and V take 8192 x 131,072 = 1,073,741,824 B; q8_0 keys
  // (34 bytes per 32) and q4_0 values (18 per 32) take 8192 x 32 x 8 x 128 x (34 + 18) / 32 =
  // 436,207,616 B, whatever the concurrency.
  Json q = Serve("llama_cpp", {{"n_ctx", 8192}}, 4);
  q["precision"] = {{"weights", "gguf_q4_k_m"}};
  q["gpu"] = "rtx-4090-24gb";
  EXPECT_DOUBLE_EQ(PerGpu(Result(q), "kv_cache"), 1073741824.0);
  q["serving"]["cache_type_k"] = "q8_0";
  q["serving"]["cache_type_v"] = "q4_0";
  const Json r = Result(q);
  EXPECT_DOUBLE_EQ(PerGpu(r, "kv_cache"), 436207616.0);
  EXPECT_DOUBLE_EQ(r["framework"]["kv_pool_tokens"].get<double>(), 8192.0);
  // ggml's buffers are exact: no allocator slack.
  EXPECT_EQ(Detail(r, "runtime.allocator_slack"), 0);
  // Eight slots of 1,280 tokens need 10,240 of the 8,192; six fit (7,680).
  q["workload"]["concurrency"] = 8;
  const Json over = Result(q);
  EXPECT_EQ(FirstInfeasible(over), "exceeds_engine_context");
  EXPECT_EQ(over["performance"]["inference"]["max_concurrency"], 6);
  // n_ubatch above n_batch runs n_batch tokens a pass.
  q["serving"] = {{"n_batch", 256}, {"n_ubatch", 1024}};
  EXPECT_EQ(Result(q)["framework"]["max_batched_tokens"], 256);
}

TEST(ServingSettings, APreallocatedPoolCarriesNoAllocatorSlack) {
  // vLLM's pool is one allocation: the 5% fragmentation slack covers the rest only, so it
  // does not grow with the requested concurrency and the pool does not shrink.
  const Json a = Result(Serve("vllm", nullptr, 16));
  const Json b = Result(Serve("vllm", nullptr, 128));
  EXPECT_DOUBLE_EQ(Detail(a, "runtime.allocator_slack"), Detail(b, "runtime.allocator_slack"));
  EXPECT_DOUBLE_EQ(a["framework"]["kv_pool_bytes"].get<double>(),
                   b["framework"]["kv_pool_bytes"].get<double>());
}

TEST(ServingSettings, AFullServerFillsItsPoolWhateverThePlanningHeadroom) {
  // Qwen3-32B in bf16 on one H100 (about 61 GiB of weights) leaves vLLM a pool of a few
  // 4,200-token sequences; weights + pool x 1.2 exceed 80 GiB, so the planner's
  // max_concurrency is 0, but vLLM runs the sequences its pool holds (GPUStack measured 102
  // output tokens/s at 500 queued requests: tests/reference/cases/serving-bench.json).
  Json q = {{"model", {{"preset", "qwen3-32b"}}},
            {"gpu", "h100-sxm-80gb"},
            {"framework", "vllm"},
            {"workload",
             {{"kind", "inference"},
              {"mode", "offline"},
              {"prompt_tokens", 4000},
              {"output_tokens", 200}}}};
  const Json planned = Result(q);
  const Json& p = planned["performance"]["inference"];
  EXPECT_EQ(p["max_concurrency"], 0);
  EXPECT_EQ(p["engine_concurrency"].get<double>(),
            planned["framework"]["kv_pool_sequences"].get<double>());
  EXPECT_GE(p["engine_concurrency"], 2);
  EXPECT_GT(p["max_throughput_tokens_per_s"].get<double>(), 0);
  // Without the headroom both figures are the pool's.
  q["headroom"] = 0;
  const Json bare_result = Result(q);
  const Json& bare = bare_result["performance"]["inference"];
  EXPECT_EQ(bare["max_concurrency"], p["engine_concurrency"]);
  EXPECT_DOUBLE_EQ(bare["max_throughput_tokens_per_s"].get<double>(),
                   p["max_throughput_tokens_per_s"].get<double>());
}

TEST(ServingSettings, SaturatedThroughputPaysEachRequestsPrefill) {
  // Every finished request is replaced by one that prefills its prompt: with one output token
  // per request the prefills weigh as much as the decodes, with 100,000 they vanish.
  Json q = Serve("vllm", nullptr, 8);
  q["workload"]["mode"] = "offline";
  q["workload"]["prompt_tokens"] = 512;
  q["workload"]["output_tokens"] = 100000;
  const Json long_out = Result(q)["performance"]["inference"];
  q["workload"]["output_tokens"] = 1;
  const Json short_out = Result(q)["performance"]["inference"];
  EXPECT_GT(short_out["max_throughput_tokens_per_s"].get<double>(), 0);
  EXPECT_LT(short_out["max_throughput_tokens_per_s"].get<double>(),
            0.5 * long_out["max_throughput_tokens_per_s"].get<double>());
}

TEST(ServingSettings, SettingsOfAnotherEngineAreSaidUnused) {
  const Json r = Result(Serve("vllm", {{"n_ctx", 4096}, {"mem_fraction_static", 0.8}}));
  EXPECT_TRUE(Warns(r, "field_unused"));
  const Json env = Envelope(Serve("vllm", {{"gpu_memory_utilization", 1.5}}));
  EXPECT_FALSE(env["ok"].get<bool>());
  EXPECT_EQ(env["errors"][0]["path"], "/serving/gpu_memory_utilization");
  const Json none = Result(Serve("llama_cpp", {{"split_mode", "row"}}, 1));
  EXPECT_TRUE(Warns(none, "engine_setting_not_modelled"));
}

}  // namespace
}  // namespace gpuplan::testing

namespace gpuplan::testing {
namespace {

Json Batch(double output_p95) {
  return {{"model", {{"preset", "llama-3.1-8b"}}},
          {"gpu", "h100-sxm-80gb"},
          {"framework", "vllm"},
          {"workload",
           {{"kind", "inference"},
            {"mode", "offline"},
            {"requests",
             {{"count", 1000},
              {"prompt_tokens", {{"mean", 500}, {"p95", 1500}}},
              {"output_tokens", {{"mean", 200}, {"p95", output_p95}}}}}}}};
}

TEST(ServingSettings, AFiniteBatchServesItsMeansAndWaitsForItsLongestOutputs) {
  // The set's mean lengths are the lengths served; with every output at the mean the
  // makespan is 1000 x 200 tokens at the saturated rate, and a longer tail only adds to it.
  const Json even = Result(Batch(200));
  EXPECT_EQ(even["request_normalized"]["workload"]["prompt_tokens"], 500);
  EXPECT_EQ(even["request_normalized"]["workload"]["output_tokens"], 200);
  const Json& e = even["performance"]["inference"];
  EXPECT_NEAR(e["makespan_s"].get<double>() * e["max_throughput_tokens_per_s"].get<double>(),
              200000, 1e-6);
  const Json long_tail = Result(Batch(4000));
  const Json& tail = long_tail["performance"]["inference"];
  EXPECT_GT(tail["makespan_s"].get<double>(), e["makespan_s"].get<double>() + 1);
  EXPECT_LT(tail["max_throughput_tokens_per_s"].get<double>(),
            e["max_throughput_tokens_per_s"].get<double>());
  // A 95th percentile below the mean is refused, naming the field.
  const Json env = Envelope(Batch(100));
  EXPECT_FALSE(env["ok"].get<bool>());
  EXPECT_EQ(env["errors"][0]["path"], "/workload/requests/output_tokens/p95");
}

}  // namespace
}  // namespace gpuplan::testing

namespace gpuplan::testing {
namespace {

TEST(DecodeLaw, LlamaCppStreamsQuantisedWeightsAtItsPerSmRate) {
  // Llama 2 7B in Q4_0 under llama.cpp on an RTX 4090, one sequence, tg128 (1 + 64 tokens of
  // context on average). On the GPU: 32 layers x 202,375,168 linear weights x 4.5 bits =
  // 3,642,753,024 B, the Q6_K output 131,072,000 x 6.5625 bits = 107,520,000 B, f32 norms
  // 266,240 x 4 = 1,064,960 B (the input table stays on the CPU): 3,751,337,984 B; its KV
  // cache 65 x 524,288 = 34,078,720 B. 128 SMs at 14 GB/s in series with 1,008 GB/s:
  // 1 / (1/1.008e12 + 1/1.792e12) = 645.12 GB/s, so a token takes 3,785,416,704 / 645.12e9 =
  // 5.86777 ms (llama-bench on this card: 158.4 t/s, 6.31 ms).
  const Json q = {
      {"model", {{"preset", "llama-2-7b"}}},
      {"gpu", "rtx-4090-24gb"},
      {"framework", "llama_cpp"},
      {"precision", {{"weights", "gguf_q4_0"}}},
      {"workload", {{"kind", "inference"}, {"prompt_tokens", 1}, {"output_tokens", 128}}}};
  const Json r = Result(q);
  EXPECT_DOUBLE_EQ(PerGpu(r, "weights"), 3751337984.0);
  EXPECT_NEAR(r["performance"]["inference"]["tpot_ms"].get<double>(), 5.86777142857, 1e-9);
  // Without llama.cpp the table is counted too: + 131,072,000 x 4.5 bits = 3,825,065,984 B,
  // the "3.56 GiB" llama-bench prints for "llama 7B Q4_0" (tests/reference/decode_bench_rows
  // .json, llama.cpp's own llama-bench tables).
  Json plain = q;
  plain.erase("framework");
  EXPECT_DOUBLE_EQ(PerGpu(Result(plain), "weights"), 3825065984.0);
  // 16-bit weights take cuBLAS's path: the generation's constant 0.66 of 1,008 GB/s.
  Json f16 = q;
  f16["precision"]["weights"] = "fp16";
  const Json h = Result(f16);
  EXPECT_NEAR(h["explain"]["/performance/inference/tpot_ms"]["inputs"]["bandwidth_efficiency"]
                  .get<double>(),
              0.66, 1e-12);
}

}  // namespace
}  // namespace gpuplan::testing

namespace gpuplan::testing {
namespace {

TEST(ServingSettings, LlamaCppLayersLeftOnTheCpuLiveAndRunInHostMemory) {
  // Llama 2 7B Q4_0 on an RTX 4090 with n_gpu_layers 16 of 32: half the layers' weights
  // ((3,642,753,024 + 1,064,960) / 2 = 1,821,908,992 B) and KV cache on the GPU; the output
  // layer (n_gpu_layers not above 32) stays on the CPU with the other half. A token: the GPU's
  // 1,821,908,992 + 65 x 262,144 = 1,838,948,352 B at 645.12 GB/s = 2.85054 ms, then the
  // host's 3,751,337,984 - 1,821,908,992 = 1,929,428,992 B at the assumed 50 GB/s = 38.58858
  // ms: 41.43912 ms.
  const Json q = {
      {"model", {{"preset", "llama-2-7b"}}},
      {"gpu", "rtx-4090-24gb"},
      {"framework", "llama_cpp"},
      {"precision", {{"weights", "gguf_q4_0"}}},
      {"workload", {{"kind", "inference"}, {"prompt_tokens", 1}, {"output_tokens", 128}}},
      {"serving", {{"n_ctx", 4096}, {"n_gpu_layers", 16}}}};
  const Json r = Result(q);
  EXPECT_DOUBLE_EQ(PerGpu(r, "weights"), 1821908992.0);
  // n_ctx 4096 x 32 layers x 4096 x 2 x 2 B = 2 GiB for every layer, half of it here.
  EXPECT_DOUBLE_EQ(PerGpu(r, "kv_cache"), 1073741824.0);
  EXPECT_DOUBLE_EQ(r["memory"]["offloaded_bytes_per_gpu"].get<double>(), 1929428992.0);
  EXPECT_NEAR(r["performance"]["inference"]["tpot_ms"].get<double>(), 41.43912, 1e-4);
  EXPECT_TRUE(Warns(r, "layers_on_cpu"));
}

Json PlanOn(const std::string& model, const std::string& weights, const std::string& card) {
  const Json q = {
      {"model", {{"preset", model}}},
      {"framework", "llama_cpp"},
      {"precision", {{"weights", weights}}},
      {"workload",
       {{"kind", "inference"}, {"concurrency", 1}, {"prompt_tokens", 512}, {"output_tokens", 256}}},
      {"constraints", {{"gpus", {card}}, {"max_gpus", 1}}}};
  const Json env = Json::parse(ShippedEngine().Plan(q.dump()));
  EXPECT_TRUE(env["ok"].get<bool>()) << env.dump(1);
  return env["result"];
}

TEST(ServingSettings, PlanKeepsTheLayersThatFitWhenTheModelDoesNot) {
  // Llama 3.1 70B Q4_K_M on one RTX 3090 (24 GiB = 25.77e9 B). By hand, a layer holds
  // 855.6M weights: Q4_K (4.5 bits) everywhere but attn_v and ffn_down (243.3M), which are
  // Q6_K (6.5625 bits) in half the layers: 481.3 MB or 543.6 MB, 512 MB on average. With 20%
  // headroom the card takes 21.47e9 B; less 1 GiB of runtime and about 0.26e9 of compute
  // buffer and KV cache, 20.14e9 B of weights: 39 layers of 80. A token then reads the other
  // 41 layers (21.0e9 B) and the Q6_K output layer (128,256 x 8192 x 6.5625 / 8 = 0.862e9 B)
  // from host memory at the assumed 50 GB/s, 0.437 s, and 20e9 B from the card's 936 GB/s at
  // about 70% of it, 0.03 s: about 0.47 s a token.
  const Json p = PlanOn("llama-3.1-70b", "gguf_q4_k_m", "rtx-3090-24gb");
  ASSERT_EQ(p["recommendations"].size(), 1U) << p["rejected"].dump(1);
  const Json& rec = p["recommendations"][0];
  const int64_t layers = rec["serving"]["n_gpu_layers"].get<int64_t>();
  EXPECT_GE(layers, 38);
  EXPECT_LE(layers, 40);
  EXPECT_NEAR(rec["estimate"]["performance"]["inference"]["tpot_ms"].get<double>(), 470, 30);
  EXPECT_TRUE(Warns(rec["estimate"], "layers_on_cpu"));
  // A model the card holds whole keeps every layer there: 8B in Q4_K_M is about 4.9 GB.
  const Json whole = PlanOn("llama-3.1-8b", "gguf_q4_k_m", "rtx-3090-24gb");
  ASSERT_EQ(whole["recommendations"].size(), 1U);
  EXPECT_FALSE(whole["recommendations"][0].contains("serving"));
}

TEST(ServingSettings, LlamaCppExpertsOnTheCpuAreReadAsTokensRouteThem) {
  // Qwen3-30B-A3B in bf16 on an RTX 4090 with --n-cpu-moe 48 (every layer's routed experts in
  // host memory): 48 layers x 128 experts x 3 x 2048 x 768 = 28,991,029,248 parameters, 2 B
  // each: 57,982,058,496 B on the host. On the card: the other 30,532,122,624 - 28,991,029,248
  // less llama.cpp's host-side input table (151,936 x 2048 = 311,164,928): 1,229,928,448 x 2 B
  // = 2,459,856,896 B. One token: the card reads those and 640 tokens x 98,304 B of KV cache,
  // 2,522,771,456 B at 1008 GB/s x 0.66 = 3.7920 ms; the CPU reads the 8 experts of 128 it
  // routes to, 57,982,058,496 x 8 / 128 = 3,623,878,656 B at the assumed 50 GB/s = 72.4776 ms.
  const Json r =
      Result({{"model", {{"preset", "qwen3-30b-a3b"}}},
              {"gpu", "rtx-4090-24gb"},
              {"framework", "llama_cpp"},
              {"workload", {{"kind", "inference"}, {"prompt_tokens", 512}, {"output_tokens", 256}}},
              {"serving", {{"n_cpu_moe", 48}}}});
  EXPECT_DOUBLE_EQ(r["memory"]["offloaded_bytes_per_gpu"].get<double>(), 57982058496.0);
  EXPECT_DOUBLE_EQ(PerGpu(r, "weights"), 2459856896.0);
  EXPECT_NEAR(r["performance"]["inference"]["tpot_ms"].get<double>(), 72.4776 + 3.7920, 1e-3);
  EXPECT_TRUE(Warns(r, "experts_on_cpu"));
}

TEST(ServingSettings, PlanKeepsExpertsOnTheCpuBeforeWholeLayers) {
  // The same model planned on one RTX 4090: with 20% headroom the card takes 21.47e9 B; the
  // non-expert weights (2.46e9), 1 GiB of runtime, about 0.42e9 of compute buffer and 0.08e9
  // of KV cache leave about 17.5e9 for experts at 1,207,959,552 B a layer: 14 layers' experts
  // on the card, the first 34 layers' on the CPU. Whole layers stay on the card.
  const Json p = PlanOn("qwen3-30b-a3b", "bf16", "rtx-4090-24gb");
  ASSERT_EQ(p["recommendations"].size(), 1U) << p["rejected"].dump(1);
  const Json& rec = p["recommendations"][0];
  const int64_t cpu_moe = rec["serving"]["n_cpu_moe"].get<int64_t>();
  EXPECT_GE(cpu_moe, 33);
  EXPECT_LE(cpu_moe, 35);
  EXPECT_FALSE(rec["serving"].contains("n_gpu_layers"));
  EXPECT_TRUE(Warns(rec["estimate"], "experts_on_cpu"));
}

}  // namespace
}  // namespace gpuplan::testing
