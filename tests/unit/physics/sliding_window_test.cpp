// SPDX-License-Identifier: MIT
// Sliding-window and hybrid attention: local layers keep and read at most the
// window. Every figure is worked by hand from the models' config.json (catalog/models.json).
#include <gtest/gtest.h>

#include "test_util.h"

namespace gpuplan::testing {
namespace {

Json Serve(const Json& model, int prompt, int output) {
  return Result({{"model", model},
                 {"gpu", "h100-sxm-80gb"},
                 {"workload",
                  {{"kind", "inference"}, {"prompt_tokens", prompt}, {"output_tokens", output}}}});
}

TEST(SlidingWindow, MistralKeepsTheWindowOnEveryLayer) {
  // Mistral 7B v0.1: 32 layers, all local with a 4096 window; 8 KV heads x 128, bf16:
  // 2 x 8 x 128 x 2 = 4096 B per token and layer. At 16,384 tokens the cache holds 4096 of
  // them: 4096 x 32 x 4096 = 536,870,912 B (full attention would be 2 GiB).
  const Json r = Serve({{"preset", "mistral-7b-v0.1"}}, 16128, 256);
  EXPECT_EQ(PerGpu(r, "kv_cache"), 536870912.0);
  // Decode reads the weights but the token table, 2 x (7,241,732,096 - 32000 x 4096) =
  // 14,221,320,192 B, plus the window's cache, 536,870,912 B: 14,758,191,104 B per step.
  EXPECT_EQ(r["explain"]["/performance/inference/tpot_ms"]["inputs"]["bytes_per_step"],
            14758191104.0);
  // Within the window nothing changes: 2048 tokens x 32 x 4096 B = 268,435,456 B.
  EXPECT_EQ(PerGpu(Serve({{"preset", "mistral-7b-v0.1"}}, 1792, 256), "kv_cache"), 268435456.0);
}

TEST(SlidingWindow, Gemma2AlternatesLocalAndGlobalLayers) {
  // Gemma 2 9B: 42 layers, the even ones local (window 4096); 8 KV heads x 256, bf16: 8192 B
  // per token and layer. At 8192 tokens: 8192 x (21 x 8192 + 21 x 4096) = 2,113,929,216 B.
  const Json r = Serve({{"preset", "gemma-2-9b"}}, 7936, 256);
  EXPECT_EQ(PerGpu(r, "kv_cache"), 2113929216.0);
  EXPECT_EQ(r["explain"]["/memory/per_gpu_bytes/kv_cache"]["inputs"]["local_layers"], 21.0);
}

Json Hybrid(Json layer_types) {
  return {{"hf_config",
           {{"model_type", "llama"},
            {"hidden_size", 1024},
            {"intermediate_size", 4096},
            {"num_hidden_layers", 12},
            {"num_attention_heads", 8},
            {"num_key_value_heads", 2},
            {"vocab_size", 32000},
            {"max_position_embeddings", 32768},
            {"sliding_window", 1024},
            {"layer_types", std::move(layer_types)}}}};
}

TEST(SlidingWindow, LayerTypesGiveThePattern) {
  // Five local layers then a global one, twice (Gemma 3's pattern): 10 local, 2 global.
  Json types = Json::array();
  for (int i = 0; i < 12; ++i)
    types.push_back((i + 1) % 6 == 0 ? "full_attention" : "sliding_attention");
  // 2 KV heads x 128 x 2 (K, V) x 2 B = 1024 B per token and layer. At 8192 tokens:
  // 1024 x (2 x 8192 + 10 x 1024) = 27,262,976 B.
  EXPECT_EQ(PerGpu(Serve(Hybrid(types), 7936, 256), "kv_cache"), 27262976.0);
  // A list that is not one repeating pattern is counted as full attention, and said so:
  // 1024 x 12 x 8192 = 100,663,296 B.
  // Every layer global: no window at all, 1024 x 12 x 8192 = 100,663,296 B.
  Json global = Json::array();
  for (int i = 0; i < 12; ++i) global.push_back("full_attention");
  EXPECT_EQ(PerGpu(Serve(Hybrid(global), 7936, 256), "kv_cache"), 100663296.0);
  types[0] = "full_attention";
  const Json r = Serve(Hybrid(types), 7936, 256);
  EXPECT_EQ(PerGpu(r, "kv_cache"), 100663296.0);
  bool warned = false;
  for (const Json& w : r["warnings"]) warned = warned || w["code"] == "layer_types_irregular";
  EXPECT_TRUE(warned);
}

TEST(SlidingWindow, TrainingAttentionFlopsStopAtTheWindow) {
  // Mistral 7B v0.1 pretraining at 8192 tokens, window 4096. Full attention is counted as
  // 8192 positions per token (causal counted in full, llm-foundry's MFU); the windowed causal
  // sum is 2 x 4096 x 8192 - 4096^2 per sequence, 6144 per token in that count. Model FLOPs
  // per token = 6N' + 3 x 2 x 32 x 6144 x (4096 + 4096), with N' the parameters in matmuls
  // (all but the token table: 7,110,660,096): 42,663,960,576 + 9,663,676,416 = 52,327,636,992.
  const Json r = Result({{"model", {{"preset", "mistral-7b-v0.1"}}},
                         {"gpu", "h100-sxm-80gb"},
                         {"workload", {{"kind", "pretrain"}, {"seq_len", 8192}}},
                         {"memory_techniques", {{"recompute", "full"}}},
                         {"parallel", {{"gpus", 8}, {"zero", 3}}}});
  EXPECT_EQ(r["performance"]["training"]["flops_per_token"], 52327636992.0);
}

}  // namespace
}  // namespace gpuplan::testing
