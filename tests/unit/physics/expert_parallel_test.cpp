// SPDX-License-Identifier: MIT
// Expert parallelism in time: each MoE layer's dispatch and combine all-to-alls,
// worked by hand from the catalog's link figures.
#include <gtest/gtest.h>

#include <cmath>

#include "test_util.h"

namespace gpuplan::testing {
namespace {

// One all-to-all over 8 H100s on NVLink: latency 12.5 + 6.1 x log2(8) = 30.8 us (the
// all-reduce fit in perf_model.h), then 7/8 of the bytes at 450 GB/s x 0.8 (NCCL's share).
double AllToAll8(double bytes) { return 30.8e-6 + 7.0 / 8.0 * bytes / (450e9 * 0.8); }

TEST(ExpertParallel, TrainingPaysADispatchAndACombinePerMoeLayerEachWay) {
  // Mixtral 8x7B LoRA, 4096 tokens a micro-batch, ep 8 on one 8-GPU node: each all-to-all
  // moves 4096 tokens x 2 experts x 4096 wide x 2 B = 67,108,864 B; 32 MoE layers x 4 calls
  // (dispatch and combine, forward and backward).
  const Json r = Result({{"model", {{"preset", "mixtral-8x7b"}}},
                         {"gpu", "h100-sxm-80gb"},
                         {"workload", {{"kind", "lora"}, {"seq_len", 4096}}},
                         {"parallel", {{"gpus", 8}, {"ep", 8}}}});
  const Json& in = r["explain"]["/performance/training/tokens_per_s"]["inputs"];
  EXPECT_NEAR(in["ep_comm_s"].get<double>(), 32 * 4 * AllToAll8(67108864.0), 1e-12);
  // Full recomputation repeats the forward's pair.
  const Json full = Result({{"model", {{"preset", "mixtral-8x7b"}}},
                            {"gpu", "h100-sxm-80gb"},
                            {"workload", {{"kind", "lora"}, {"seq_len", 4096}}},
                            {"memory_techniques", {{"recompute", "full"}}},
                            {"parallel", {{"gpus", 8}, {"ep", 8}}}});
  EXPECT_NEAR(
      full["explain"]["/performance/training/tokens_per_s"]["inputs"]["ep_comm_s"].get<double>(),
      32 * 6 * AllToAll8(67108864.0), 1e-12);
  // No expert parallelism, no all-to-all.
  const Json none = Result({{"model", {{"preset", "mixtral-8x7b"}}},
                            {"gpu", "h100-sxm-80gb"},
                            {"workload", {{"kind", "lora"}, {"seq_len", 4096}}},
                            {"parallel", {{"gpus", 8}}}});
  EXPECT_EQ(none["explain"]["/performance/training/tokens_per_s"]["inputs"]["ep_comm_s"], 0.0);
}

TEST(ExpertParallel, DecodeAddsTheBatchsAllToAllsToEveryToken) {
  // Serving Mixtral 8x7B with ep 8: one sequence, 1 token x 2 experts x 4096 x 2 B = 16,384 B
  // per all-to-all, two per MoE layer, 32 layers.
  const Json r = Result({{"model", {{"preset", "mixtral-8x7b"}}},
                         {"gpu", "h100-sxm-80gb"},
                         {"workload", {{"kind", "inference"}, {"concurrency", 1}}},
                         {"parallel", {{"gpus", 8}, {"ep", 8}}}});
  EXPECT_NEAR(r["explain"]["/performance/inference/tpot_ms"]["inputs"]["ep_comm_s"].get<double>(),
              2 * 32 * AllToAll8(16384.0), 1e-12);
}

Json DeepSeek(const Json& parallel) {
  return {{"model", {{"preset", "deepseek-v3"}}},
          {"gpu", "h200-sxm-141gb"},
          {"framework", "sglang"},
          {"workload",
           {{"kind", "inference"},
            {"concurrency", 64},
            {"prompt_tokens", 2000},
            {"output_tokens", 500}}},
          {"parallel", parallel}};
}

TEST(ExpertParallel, DataParallelAttentionSplitsTheSequencesAndTheirCache) {
  // DeepSeek-V3's MLA caches the 512-wide latent and the 64-wide RoPE key, 576 x 2 B = 1152 B
  // per token per layer, 61 layers: 70,272 B a token. Tensor parallel keeps every sequence's
  // latent on every rank: 64 x 2500 tokens x 70,272 = 11,243,520,000 B. With attention data
  // parallel over 8 ranks each keeps its own 8 sequences: 1,405,440,000 B.
  const Json tp = Result(DeepSeek({{"gpus", 8}, {"tp", 8}}));
  const Json dp = Result(DeepSeek({{"gpus", 8}, {"ep", 8}}));
  EXPECT_DOUBLE_EQ(PerGpu(tp, "kv_cache"), 11243520000.0);
  EXPECT_DOUBLE_EQ(PerGpu(dp, "kv_cache"), 1405440000.0);
  // Each rank decodes its 8 sequences: the 64 together are 64 / TPOT tokens a second.
  const Json& inf = dp["performance"]["inference"];
  EXPECT_NEAR(inf["decode_tokens_per_s_total"].get<double>(),
              64 / (inf["tpot_ms"].get<double>() / 1e3), 1e-6);
  // One all-to-all moves a rank's 8 tokens x 8 experts x 7168 x 2 B = 917,504 B.
  EXPECT_NEAR(dp["explain"]["/performance/inference/tpot_ms"]["inputs"]["ep_comm_s"].get<double>(),
              2 * 58 * AllToAll8(917504.0), 1e-12);
  // The cache no longer replicated, many more sequences fit.
  EXPECT_GT(inf["max_concurrency"].get<double>(),
            3 * tp["performance"]["inference"]["max_concurrency"].get<double>());
}

TEST(ExpertParallel, TheServingPlanTriesExpertParallelForMoe) {
  Json q = DeepSeek({{"gpus", 1}});
  q.erase("gpu");
  q.erase("parallel");
  q["workload"]["concurrency"] = 512;
  q["constraints"] = {{"gpus", {"h200-sxm-141gb", "h100-sxm-80gb"}}, {"max_gpus", 32}};
  const Json env = Json::parse(ShippedEngine().Plan(q.dump()));
  ASSERT_TRUE(env["ok"].get<bool>()) << env.dump(1);
  bool spread = false;
  for (const Json& rec : env["result"]["recommendations"]) {
    spread |= rec["parallel"]["ep"].get<int>() > 1;
    // 671B in fp8 is 671 GB: the H100's 80 GB cards need two nodes, which only expert
    // parallel spans (tensor parallel stays inside a node).
    if (rec["gpu"] == "h100-sxm-80gb") {
      EXPECT_GE(rec["parallel"]["gpus"].get<int>(), 16);
    }
  }
  EXPECT_TRUE(spread) << env["result"]["recommendations"].dump(1);
  // A dense model never gets an expert layout, and llama.cpp refuses one.
  Json llama = Result({{"model", {{"preset", "mixtral-8x7b"}}},
                       {"gpu", "h100-sxm-80gb"},
                       {"framework", "llama_cpp"},
                       {"precision", {{"weights", "gguf_q4_k_m"}}},
                       {"workload", {{"kind", "inference"}}},
                       {"parallel", {{"gpus", 2}, {"ep", 2}}}});
  ASSERT_FALSE(llama["infeasible"].empty());
  EXPECT_EQ(llama["infeasible"][0]["code"], "framework_layout");
}

}  // namespace
}  // namespace gpuplan::testing
