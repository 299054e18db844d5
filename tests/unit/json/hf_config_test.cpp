// SPDX-License-Identifier: MIT
// The families the config.json reader learned, each count worked by hand from the
// family's transformers modeling code (named in engine/src/json/hf_config.cpp), and the
// hybrid (state-space, linear-attention) models it refuses.
#include <gtest/gtest.h>

#include "test_util.h"

namespace gpuplan::testing {
namespace {

// Every diagnostic a config.json gives, and the warnings.
struct Read {
  std::optional<ModelSpec> spec;
  Diagnostics errors;
  std::vector<Note> warnings;
};

Read ReadHf(const std::string& text) {
  Read out;
  const json_io::ReadContext ctx{&out.errors, nullptr};
  out.spec = json_io::ModelFromHfConfig(Json::parse(text), "/model/hf_config", ctx, &out.warnings);
  return out;
}

Json Serve(const Json& hf_config, int prompt, int output) {
  return Result({{"model", {{"hf_config", hf_config}}},
                 {"gpu", "h100-sxm-80gb"},
                 {"workload",
                  {{"kind", "inference"}, {"prompt_tokens", prompt}, {"output_tokens", output}}}});
}

// google/gemma-3-1b-it config.json (architecture fields).
constexpr const char* kGemma3_1B = R"({
  "architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text", "head_dim": 256,
  "hidden_size": 1152, "intermediate_size": 6912, "max_position_embeddings": 32768,
  "num_attention_heads": 4, "num_hidden_layers": 26, "num_key_value_heads": 1,
  "query_pre_attn_scalar": 256, "sliding_window": 512, "sliding_window_pattern": 6,
  "vocab_size": 262144})";

TEST(HfFamilies, Gemma3OneBIsExact) {
  // By hand: embed 262144 x 1152 = 301,989,888 (tied); per layer q 1152 x 1024 = 1,179,648,
  // k, v 2 x 1152 x 256 = 589,824, o 1,179,648; MLP 3 x 1152 x 6912 = 23,887,872; four norms
  // 4 x 1152 = 4608; q_norm and k_norm 2 x 256 = 512: 26,842,112; x26 = 697,894,912; final
  // norm 1152. Total 999,885,952, keras-hub's gemma3_1b count.
  const ModelSpec m = FromHf(kGemma3_1B);
  const ParamCounts c = CountParams(m);
  EXPECT_EQ(c.dense_layer.Total(), 26842112);
  EXPECT_EQ(c.total, 999885952);
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_EQ(m.norms_per_layer, 4);
  // 5:1 local/global: layers 5, 11, 17, 23 global, the other 22 local (window 512).
  EXPECT_EQ(m.sliding_pattern, 6);
  EXPECT_EQ(m.LocalLayers(0, m.layers), 22);
}

TEST(HfFamilies, Gemma3KeepsTheWindowOnFiveLayersOfSix) {
  // One KV head x 256 x 2 (K, V) x 2 B = 1024 B per token and layer. At 8192 tokens:
  // 1024 x (4 x 8192 + 22 x 512) = 45,088,768 B.
  EXPECT_EQ(PerGpu(Serve(Json::parse(kGemma3_1B), 7936, 256), "kv_cache"), 45088768.0);
}

TEST(HfFamilies, Gemma3SparseTextConfigTakesTheClassDefaults) {
  // google/gemma-3-12b-it saves only what differs from Gemma3TextConfig: head_dim 256 (not
  // 3840 / 16 = 240), vocab_size 262208 and the 6-layer pattern come from the class.
  const Read r = ReadHf(R"({"architectures": ["Gemma3ForConditionalGeneration"],
    "model_type": "gemma3", "text_config": {"hidden_size": 3840, "intermediate_size": 15360,
    "model_type": "gemma3_text", "num_attention_heads": 16, "num_hidden_layers": 48,
    "num_key_value_heads": 8, "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
    "sliding_window": 1024}, "vision_config": {"hidden_size": 1152,
    "model_type": "siglip_vision_model"}})");
  ASSERT_TRUE(r.spec.has_value());
  ASSERT_TRUE(r.errors.empty());
  EXPECT_EQ(r.spec->family, "gemma3_text");
  EXPECT_EQ(r.spec->head_dim, 256);
  EXPECT_EQ(r.spec->vocab, 262208);
  EXPECT_EQ(r.spec->sliding_pattern, 6);
  EXPECT_EQ(r.spec->sliding_window, 1024);
  // Per layer: q and o 2 x 3840 x 4096 = 31,457,280, k and v 2 x 3840 x 2048 = 15,728,640, MLP
  // 3 x 3840 x 15360 = 176,947,200, norms 4 x 3840 = 15,360, q/k norms 512: 224,148,992;
  // x48 = 10,759,151,616; embed 262208 x 3840 = 1,006,878,720; final norm 3840. Total
  // 11,766,034,176 (keras-hub's text-only gemma3_12b_text, with the 262,144-row table, is
  // 11,765,788,416: 64 x 3840 fewer).
  EXPECT_EQ(CountParams(*r.spec).total, 11766034176);
  bool vision = false;
  for (const Note& w : r.warnings) vision = vision || w.code == "vision_tower_not_counted";
  EXPECT_TRUE(vision);
}

// meta-llama/Llama-4-Scout-17B-16E text_config (architecture fields).
Json Llama4Text(int experts, int step, bool qk_norm) {
  return {{"model_type", "llama4_text"},
          {"attention_chunk_size", 8192},
          {"head_dim", 128},
          {"hidden_size", 5120},
          {"interleave_moe_layer_step", step},
          {"intermediate_size", 8192},
          {"intermediate_size_mlp", 16384},
          {"max_position_embeddings", 10485760},
          {"no_rope_layers", Json::array()},
          {"num_attention_heads", 40},
          {"num_experts_per_tok", 1},
          {"num_hidden_layers", 48},
          {"num_key_value_heads", 8},
          {"num_local_experts", experts},
          {"use_qk_norm", qk_norm},
          {"vocab_size", 202048}};
}

TEST(HfFamilies, Llama4ScoutRoutesEveryLayerWithASharedExpert) {
  // Per layer: q and o 2 x 5120 x 5120 = 52,428,800, k and v 2 x 5120 x 1024 = 10,485,760;
  // 16 experts x 3 x 5120 x 8192 = 2,013,265,920; the shared expert 125,829,120; router
  // 5120 x 16 = 81,920; two norms 10,240; the L2 q/k norm has no weight: 2,202,101,760; x48 =
  // 105,700,884,480; embed and head 2 x 202048 x 5120 = 2,068,971,520; final norm 5120. Total
  // 107,769,861,120 (llama.cpp's 107.77 B for the text model; Meta's 109B adds the vision
  // encoder). Active: 15 idle experts x 125,829,120 x 48 fewer, 17,172,894,720 (Meta: 17B).
  const ModelSpec m = FromHf(Llama4Text(16, 1, true).dump());
  const ParamCounts c = CountParams(m);
  EXPECT_EQ(c.moe_layers, 48);
  EXPECT_EQ(c.moe_layer.Total(), 2202101760);
  EXPECT_EQ(c.total, 107769861120);
  EXPECT_EQ(c.active, 17172894720);
}

TEST(HfFamilies, Llama4MaverickInterleavesDenseAndMoeLayers) {
  // interleave_moe_layer_step 2: layers 1, 3, ..., 47 are MoE (range(1, 48, 2)), the other 24
  // hold a dense MLP of intermediate_size_mlp. MoE layer: attention 62,914,560 + 128 experts x
  // 125,829,120 + shared 125,829,120 + router 655,360 + norms 10,240 = 16,295,536,640; dense
  // layer: 62,914,560 + 3 x 5120 x 16384 = 251,658,240 + 10,240 = 314,583,040. Total 24 x both
  // + 2,068,971,520 + 5120 = 400,711,848,960 (llama.cpp: 400.71 B; Meta: 400B).
  const ParamCounts c = CountParams(FromHf(Llama4Text(128, 2, false).dump()));
  EXPECT_EQ(c.moe_layers, 24);
  EXPECT_EQ(c.dense_layer.Total(), 314583040);
  EXPECT_EQ(c.total, 400711848960);
}

TEST(HfFamilies, Llama4LocalLayersKeepOneChunk) {
  // no_rope_layers empty: a NoPE (global) layer every fourth (3, 7, ..., 47), the 36 RoPE
  // layers attend within 8192-token chunks. 8 KV heads x 128 x 2 x 2 B = 4096 B per token and
  // layer; at 16,384 tokens: 4096 x (12 x 16384 + 36 x 8192) = 2,013,265,920 B.
  const Json hf = Llama4Text(16, 1, true);
  const ModelSpec m = FromHf(hf.dump());
  EXPECT_TRUE(m.local_chunked);
  EXPECT_EQ(m.sliding_pattern, 4);
  EXPECT_EQ(PerGpu(Serve(hf, 16128, 256), "kv_cache"), 2013265920.0);
  // An explicit no_rope_layers list (newer re-saves) reads the same.
  Json listed = hf;
  for (int i = 0; i < 48; ++i) listed["no_rope_layers"].push_back((i + 1) % 4 == 0 ? 0 : 1);
  EXPECT_EQ(FromHf(listed.dump()).sliding_pattern, 4);
}

TEST(HfFamilies, ChunkedAttentionWorkIsLessThanAWindowOfTheSameSize) {
  // 4 layers, the last global; 20,000 tokens, 8192-token chunks: two whole chunks and 3616
  // left, (2 x 8192^2 + 3616^2) / 20000 = 7364.6592 positions per token in full attention's
  // count (a sliding window of 8192 would see 2 x 8192 - 8192^2 / 20000 = 13,028.5568);
  // averaged with the global layer's 20,000: (20000 + 3 x 7364.6592) / 4 = 10,523.4944.
  ModelSpec m;
  m.layers = 4;
  m.sliding_window = 8192;
  m.sliding_pattern = 4;
  m.local_chunked = true;
  EXPECT_NEAR(m.LocalAttended(20000), 7364.6592, 1e-9);
  EXPECT_NEAR(m.CausalAttended(20000), 10523.4944, 1e-9);
  m.local_chunked = false;
  EXPECT_NEAR(m.LocalAttended(20000), 13028.5568, 1e-9);
  // Within one chunk both are plain causal attention.
  m.local_chunked = true;
  EXPECT_EQ(m.LocalAttended(4096), 4096);
}

// openai/gpt-oss-20b config.json (architecture fields); layer_types alternate from sliding.
Json GptOss(int layers, int experts) {
  Json types = Json::array();
  for (int i = 0; i < layers; ++i)
    types.push_back(i % 2 == 0 ? "sliding_attention" : "full_attention");
  return {{"model_type", "gpt_oss"},  {"attention_bias", true},
          {"experts_per_token", 4},   {"head_dim", 64},
          {"hidden_size", 2880},      {"intermediate_size", 2880},
          {"layer_types", types},     {"num_attention_heads", 64},
          {"num_experts_per_tok", 4}, {"num_hidden_layers", layers},
          {"num_key_value_heads", 8}, {"num_local_experts", experts},
          {"sliding_window", 128},    {"tie_word_embeddings", false},
          {"vocab_size", 201088}};
}

TEST(HfFamilies, GptOssCountsSinksAndEveryBias) {
  // gpt-oss-20b per layer: q and o 2 x 2880 x 4096 = 23,592,960, k and v 2 x 2880 x 512 =
  // 2,949,120; biases 4096 + 512 + 512 + 2880 = 8000; sinks 64; 32 experts x (2880 x 5760 +
  // 2880 x 2880) = 796,262,400 and their biases 32 x (5760 + 2880) = 276,480; router 2880 x 32
  // + 32 = 92,192; norms 5760: 823,186,976; x24 = 19,756,487,424; embed and head 2 x 201088 x
  // 2880 = 1,158,266,880; final norm 2880. Total 20,914,757,184 (OpenAI's model card: 20.91B).
  const ModelSpec m = FromHf(GptOss(24, 32).dump());
  const ParamCounts c = CountParams(m);
  EXPECT_EQ(c.moe_layer.attn_other, 8064);
  EXPECT_EQ(c.moe_layer.Total(), 823186976);
  EXPECT_EQ(c.total, 20914757184);
  // Active: 28 idle experts with their biases, 28 x (24,883,200 + 8640) x 24 fewer:
  // 4,187,440,704; less the token table's 579,133,440, 3,608,307,264: the card's 3.61B.
  EXPECT_EQ(c.active, 4187440704);
  // gpt-oss-120b: 36 layers of 128 experts, 116,829,156,672 (the card's 116.83B).
  EXPECT_EQ(CountParams(FromHf(GptOss(36, 128).dump())).total, 116829156672);
}

TEST(HfFamilies, GptOssWindowIsOnEveryOtherLayer) {
  // 12 local layers (window 128) and 12 global; 8 KV heads x 64 x 2 x 2 B = 2048 B per token
  // and layer. At 8192 tokens: 2048 x (12 x 8192 + 12 x 128) = 204,472,320 B.
  EXPECT_EQ(PerGpu(Serve(GptOss(24, 32), 7936, 256), "kv_cache"), 204472320.0);
}

TEST(HfFamilies, Glm45AirLeadingDenseLayerAndSharedExpert) {
  // zai-org/GLM-4.5-Air: first_k_dense_replace 1. Attention: q and o 2 x 4096 x 12288 =
  // 100,663,296, k and v 2 x 4096 x 1024 = 8,388,608, q/k/v biases 12288 + 2 x 1024 = 14,336
  // (o_proj has none), no q/k norm: 109,066,240. Dense layer: + 3 x 4096 x 10944 = 134,479,872
  // + norms 8192 = 243,554,304. MoE layer: + 128 experts x 3 x 4096 x 1408 = 2,214,592,512 +
  // shared 17,301,504 + router 128 x 4096 + 128 (e_score_correction_bias) = 524,416 + norms
  // 8192 = 2,341,492,864, x45. Embed and head 2 x 151552 x 4096 = 1,241,513,984; final norm
  // 4096. Total 106,852,251,264 (Z.ai: 106B; the MTP layer is not counted).
  const ParamCounts c = CountParams(FromHf(R"({"model_type": "glm4_moe",
    "attention_bias": true, "first_k_dense_replace": 1, "head_dim": 128, "hidden_size": 4096,
    "intermediate_size": 10944, "moe_intermediate_size": 1408, "n_routed_experts": 128,
    "n_shared_experts": 1, "num_attention_heads": 96, "num_experts_per_tok": 8,
    "num_hidden_layers": 46, "num_key_value_heads": 8, "num_nextn_predict_layers": 1,
    "partial_rotary_factor": 0.5, "tie_word_embeddings": false, "use_qk_norm": false,
    "vocab_size": 151552})"));
  EXPECT_EQ(c.dense_layers, 1);
  EXPECT_EQ(c.moe_layers, 45);
  EXPECT_EQ(c.dense_layer.Total(), 243554304);
  EXPECT_EQ(c.moe_layer.Total(), 2341492864);
  EXPECT_EQ(c.total, 106852251264);
}

TEST(HfFamilies, Glm45QkNormIsPerHead) {
  // GLM-4.5: use_qk_norm adds q_norm and k_norm of head_dim, 2 x 128 = 256 per layer.
  const ModelSpec m = FromHf(R"({"model_type": "glm4_moe", "attention_bias": true,
    "first_k_dense_replace": 3, "head_dim": 128, "hidden_size": 5120, "intermediate_size": 12288,
    "moe_intermediate_size": 1536, "n_routed_experts": 160, "n_shared_experts": 1,
    "num_attention_heads": 96, "num_experts_per_tok": 8, "num_hidden_layers": 92,
    "num_key_value_heads": 8, "use_qk_norm": true, "vocab_size": 151552})");
  const ParamCounts c = CountParams(m);
  EXPECT_EQ(c.dense_layer.attn_other, 12288 + 2 * 1024 + 256);
  EXPECT_EQ(c.total, 352797829024);
}

TEST(HfFamilies, CommandRParallelBlockWithOneBiasFreeLayerNorm) {
  // CohereForAI/c4ai-command-r-v01: per layer 4 x 8192^2 = 268,435,456 (64 KV heads: full
  // multi-head attention) + MLP 3 x 8192 x 22528 = 553,648,128 + one LayerNorm without bias
  // 8192 = 822,091,776; x40 = 32,883,671,040; embed 256000 x 8192 = 2,097,152,000 (tied);
  // final norm 8192. Total 34,980,831,232.
  const ModelSpec m = FromHf(R"({"model_type": "cohere", "hidden_size": 8192,
    "intermediate_size": 22528, "num_attention_heads": 64, "num_hidden_layers": 40,
    "num_key_value_heads": 64, "use_qk_norm": false, "vocab_size": 256000,
    "logit_scale": 0.0625})");
  EXPECT_EQ(m.norm, NormKind::kLayerNoBias);
  EXPECT_EQ(m.norms_per_layer, 1);
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_EQ(CountParams(m).total, 34980831232);
}

TEST(HfFamilies, CommandRPlusQkNormHasAWeightPerHeadAndChannel) {
  // CohereForAI/c4ai-command-r-plus: use_qk_norm, CohereLayerNorm((96, 128)) and ((8, 128)):
  // 12288 + 1024 = 13,312 per layer. Per layer: q and o 2 x 12288^2 = 301,989,888, k and v
  // 2 x 12288 x 1024 = 25,165,824, MLP 3 x 12288 x 33792 = 1,245,708,288, norm 12288:
  // 1,572,889,600; x64 = 100,664,934,400; embed 256000 x 12288 = 3,145,728,000; final 12288.
  // Total 103,810,674,688 (Cohere: 104B).
  const ParamCounts c = CountParams(FromHf(R"({"model_type": "cohere", "hidden_size": 12288,
    "intermediate_size": 33792, "num_attention_heads": 96, "num_hidden_layers": 64,
    "num_key_value_heads": 8, "use_qk_norm": true, "vocab_size": 256000})"));
  EXPECT_EQ(c.dense_layer.attn_other, 13312);
  EXPECT_EQ(c.total, 103810674688);
}

TEST(HfFamilies, Cohere2GlobalEveryFourthLayer) {
  // CohereForAI/c4ai-command-r7b-12-2024: 32 layers, window 4096, sliding_window_pattern 4
  // (Cohere2Config's default): layers 3, 7, ..., 31 global, 24 local. Count: per layer q and o
  // 2 x 4096^2 = 33,554,432, k and v 2 x 4096 x 1024 = 8,388,608, MLP 3 x 4096 x 14336 =
  // 176,160,768, norm 4096: 218,107,904; x32 = 6,979,452,928; embed 256000 x 4096 =
  // 1,048,576,000 (tied); final 4096. Total 8,028,033,024.
  const ModelSpec m = FromHf(R"({"model_type": "cohere2", "hidden_size": 4096,
    "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32,
    "num_key_value_heads": 8, "sliding_window": 4096, "sliding_window_pattern": 4,
    "vocab_size": 256000})");
  EXPECT_EQ(m.LocalLayers(0, m.layers), 24);
  EXPECT_EQ(CountParams(m).total, 8028033024);
}

TEST(HfFamilies, SmolLM3IsLlamaWithTiedEmbeddings) {
  // HuggingFaceTB/SmolLM3-3B: no_rope_layers changes no weight. Per layer q and o 2 x 2048^2
  // = 8,388,608, k and v 2 x 2048 x 512 = 2,097,152, MLP 3 x 2048 x 11008 = 67,633,152, norms
  // 4096: 78,123,008; x36 = 2,812,428,288; embed 128256 x 2048 = 262,668,288 (tied); final
  // 2048. Total 3,075,098,624.
  const ModelSpec m = FromHf(R"({"model_type": "smollm3", "hidden_size": 2048,
    "intermediate_size": 11008, "num_attention_heads": 16, "num_hidden_layers": 36,
    "num_key_value_heads": 4, "vocab_size": 128256, "use_sliding_window": false,
    "sliding_window": null, "no_rope_layer_interval": 4, "tie_word_embeddings": true})");
  EXPECT_EQ(m.sliding_window, 0);
  EXPECT_EQ(CountParams(m).total, 3075098624);
}

TEST(HfFamilies, Olmo2QkNormSpansTheProjection) {
  // allenai/OLMo-2-1124-7B: q_norm and k_norm over 32 x 128 = 4096 each; post-attention and
  // post-feedforward norms. Per layer 4 x 4096^2 = 67,108,864 + 8192 + MLP 3 x 4096 x 11008 =
  // 135,266,304 + 8192 = 202,391,552; x32 = 6,476,529,664; embed and head 2 x 100352 x 4096 =
  // 822,083,584; final 4096. Total 7,298,617,344.
  const ModelSpec m = FromHf(R"({"model_type": "olmo2", "hidden_size": 4096,
    "intermediate_size": 11008, "num_attention_heads": 32, "num_hidden_layers": 32,
    "num_key_value_heads": 32, "vocab_size": 100352, "tie_word_embeddings": false})");
  EXPECT_EQ(m.qk_norm_weights, QkNormWeights::kFullWidth);
  EXPECT_EQ(CountParams(m).total, 7298617344);
}

TEST(HfFamilies, HybridModelsAreRefusedByName) {
  // Qwen3-Next mixes Gated DeltaNet layers with gated attention: refused, not miscounted.
  const Read r = ReadHf(R"({"model_type": "qwen3_next", "hidden_size": 2048,
    "num_hidden_layers": 48, "num_attention_heads": 16, "vocab_size": 151936,
    "intermediate_size": 5120})");
  EXPECT_FALSE(r.spec.has_value());
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].code, "unsupported_architecture");
  EXPECT_EQ(r.errors[0].path, "/model/hf_config/model_type");
  for (const char* family : {"minimax_m1", "jamba", "falcon_h1", "mamba2", "nemotron_h"}) {
    const Read h = ReadHf(std::string(R"({"model_type": ")") + family +
                          R"(", "hidden_size": 1024, "num_hidden_layers": 8,
      "num_attention_heads": 8, "vocab_size": 32000, "intermediate_size": 4096})");
    EXPECT_FALSE(h.spec.has_value()) << family;
    ASSERT_FALSE(h.errors.empty()) << family;
    EXPECT_EQ(h.errors[0].code, "unsupported_architecture") << family;
  }
}

TEST(HfFamilies, HybridLayerTypesAreRefusedWhereTheyAre) {
  // A linear-attention layer in layer_types (MiniMax's layout) under any model_type.
  const Read r = ReadHf(R"({"model_type": "llama", "hidden_size": 1024,
    "num_hidden_layers": 4, "num_attention_heads": 8, "vocab_size": 32000,
    "intermediate_size": 4096, "layer_types": ["full_attention", "linear_attention",
    "linear_attention", "full_attention"]})");
  EXPECT_FALSE(r.spec.has_value());
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].code, "unsupported_architecture");
  EXPECT_EQ(r.errors[0].path, "/model/hf_config/layer_types/1");
  // Jamba-style layers_block_type, nested under text_config.
  const Read j = ReadHf(R"({"model_type": "llava", "text_config": {"model_type": "llama",
    "hidden_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 8,
    "vocab_size": 32000, "intermediate_size": 4096,
    "layers_block_type": ["attention", "mamba"]}})");
  ASSERT_FALSE(j.errors.empty());
  EXPECT_EQ(j.errors[0].path, "/model/hf_config/text_config/layers_block_type/1");
  // Through the API: exit 2 with the error's code.
  const Json env = Envelope({{"model",
                              {{"hf_config",
                                {{"model_type", "falcon_h1"},
                                 {"hidden_size", 1024},
                                 {"num_hidden_layers", 4},
                                 {"num_attention_heads", 8},
                                 {"vocab_size", 32000}}}}},
                             {"gpu", "h100-sxm-80gb"},
                             {"workload", {{"kind", "inference"}}}});
  EXPECT_FALSE(env["ok"].get<bool>());
  EXPECT_EQ(env["errors"][0]["code"], "unsupported_architecture");
}

}  // namespace
}  // namespace gpuplan::testing
