// SPDX-License-Identifier: MIT
// Parameter counts: exact pins from published counts and hand-worked sums.
#include "model/model_spec.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace gpuplan {
namespace {

using testing::FromHf;

// meta-llama/Llama-3.1-8B config.json (architecture fields).
constexpr const char* kLlama31_8B = R"({
  "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
  "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
  "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 131072,
  "tie_word_embeddings": false, "attention_bias": false, "mlp_bias": false,
  "rms_norm_eps": 1e-05, "rope_scaling": {"factor": 8.0, "rope_type": "llama3"}})";

TEST(ParamCount, Llama31_8BIsExact) {
  // 8,030,261,248: the safetensors total of the Llama 3.1 8B architecture.
  // By hand: embed 128256*4096 = 525,336,576 (x2, untied); per layer q,o 2*4096*4096 +
  // k,v 2*4096*1024 + MLP 3*4096*14336 + 2 norms 8192 = 218,112,000; x32 = 6,979,584,000;
  // final norm 4096.
  const ParamCounts c = CountParams(FromHf(kLlama31_8B));
  EXPECT_EQ(c.total, 8030261248);
  EXPECT_EQ(c.active, 8030261248);
  EXPECT_EQ(c.embedding, 525336576);
  EXPECT_EQ(c.lm_head, 525336576);
  EXPECT_EQ(c.dense_layer.Total(), 218112000);
}

TEST(ParamCount, Qwen25_32BIsExact) {
  // Qwen/Qwen2.5-32B config.json; 32,763,876,352 is its safetensors total.
  // Qwen2 puts biases on q, k and v (5120 + 1024 + 1024 per layer).
  const ParamCounts c = CountParams(FromHf(R"({
    "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 5120,
    "intermediate_size": 27648, "num_hidden_layers": 64, "num_attention_heads": 40,
    "num_key_value_heads": 8, "vocab_size": 152064, "max_position_embeddings": 131072,
    "tie_word_embeddings": false, "use_sliding_window": false, "sliding_window": 131072})"));
  EXPECT_EQ(c.total, 32763876352);
}

TEST(ParamCount, DeepSeekV3TotalAndActive) {
  // deepseek-ai/DeepSeek-V3 config.json. Published: 671B total, 37B activated per token
  // (DeepSeek-V3 technical report, abstract); the 14B multi-token-prediction module is extra.
  const ParamCounts c = CountParams(FromHf(R"({
    "model_type": "deepseek_v3", "hidden_size": 7168, "intermediate_size": 18432,
    "moe_intermediate_size": 2048, "num_hidden_layers": 61, "num_attention_heads": 128,
    "num_key_value_heads": 128, "n_routed_experts": 256, "n_shared_experts": 1,
    "num_experts_per_tok": 8, "first_k_dense_replace": 3, "moe_layer_freq": 1,
    "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
    "v_head_dim": 128, "vocab_size": 129280, "tie_word_embeddings": false})"));
  EXPECT_NEAR(c.total / 1e9, 671.0, 0.5);
  EXPECT_NEAR(c.active / 1e9, 37.0, 0.6);
  EXPECT_EQ(c.dense_layers, 3);
  EXPECT_EQ(c.moe_layers, 58);
}

TEST(ParamCount, Mixtral8x7BTotalAndActive) {
  // mistralai/Mixtral-8x7B-v0.1: Mistral AI's announcement gives 46.7B total and 12.9B used
  // per token (2 of 8 experts).
  const ParamCounts c = CountParams(FromHf(R"({
    "model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336,
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
    "num_local_experts": 8, "num_experts_per_tok": 2, "vocab_size": 32000,
    "tie_word_embeddings": false})"));
  EXPECT_NEAR(c.total / 1e9, 46.7, 0.05);
  EXPECT_NEAR(c.active / 1e9, 12.9, 0.05);
}

TEST(ParamCount, Gpt2SmallByHand) {
  // gpt2 config.json. By hand: wte 50257*768 = 38,597,376; wpe 1024*768 = 786,432; per layer
  // ln_1 1536 + c_attn 768*2304+2304 = 1,771,776 + c_proj 768*768+768 = 590,592 + ln_2 1536 +
  // c_fc 768*3072+3072 = 2,362,368 + c_proj 3072*768+768 = 2,360,064 = 7,087,872; x12 =
  // 85,054,464; ln_f 1536; lm_head tied. Total 124,439,808.
  const ParamCounts c = CountParams(FromHf(R"({
    "model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "n_positions": 1024,
    "vocab_size": 50257, "activation_function": "gelu_new"})"));
  EXPECT_EQ(c.total, 124439808);
}

TEST(ParamCount, Falcon7BMultiQueryParallelBlock) {
  // tiiuae/falcon-7b: multi_query, parallel_attn, no biases, one LayerNorm per block, tied.
  // By hand: embed 65024*4544 = 295,469,056; per layer qkv 4544*(71+2)*64 = 21,229,568 +
  // dense 4544^2 = 20,647,936 + MLP 2*4544*18176 = 165,183,488 + LN 9088 = 207,070,080;
  // x32 = 6,626,242,560; ln_f 9088. Total 6,921,720,704 (the model card's "7B" is 6.92B).
  const ParamCounts c = CountParams(FromHf(R"({
    "model_type": "falcon", "hidden_size": 4544, "num_hidden_layers": 32,
    "num_attention_heads": 71, "vocab_size": 65024, "multi_query": true,
    "parallel_attn": true, "bias": false, "new_decoder_architecture": false})"));
  EXPECT_EQ(c.total, 6921720704);
}

TEST(ParamCount, Bloom176BIsExact) {
  // bigscience/bloom model card: 176,247,271,424 parameters.
  const ParamCounts c = CountParams(FromHf(R"({
    "model_type": "bloom", "hidden_size": 14336, "n_layer": 70, "n_head": 112,
    "vocab_size": 250880})"));
  EXPECT_EQ(c.total, 176247271424);
}

TEST(ParamCount, ExplicitHeadDimAndQkNorm) {
  // Qwen/Qwen3-8B: head_dim 128 is explicit (not hidden/heads) and q_norm/k_norm add 2*128 per
  // layer. Qwen's model card: 8.2B parameters.
  const ModelSpec m = FromHf(R"({
    "model_type": "qwen3", "hidden_size": 4096, "intermediate_size": 12288,
    "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8,
    "head_dim": 128, "vocab_size": 151936, "tie_word_embeddings": false})");
  EXPECT_TRUE(m.qk_norm);
  EXPECT_NEAR(CountParams(m).total / 1e9, 8.2, 0.05);
}

TEST(ParamCount, TextConfigIsReadForMultimodalWrappers) {
  const ModelSpec m = FromHf(R"({"model_type": "llava", "text_config": {
    "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
    "vocab_size": 128256}})");
  EXPECT_EQ(CountParams(m).total, 8030261248);
}

}  // namespace
}  // namespace gpuplan
