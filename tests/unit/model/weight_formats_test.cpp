// SPDX-License-Identifier: MIT
// The block-scaled float formats (OCP MX, NVFP4, DeepSeek's 128 x 128 fp8),
// ExLlamaV2's chosen bits, GPTQ/AWQ/AutoRound and gpt-oss's MXFP4 experts read from a pasted
// config's quantization_config, and the peaks their matmuls run at. Every byte count is worked
// by hand in the comment beside it.
#include <gtest/gtest.h>

#include "physics/perf_model.h"
#include "test_util.h"

namespace gpuplan::testing {
namespace {

Json Llama8b(const Json& precision) {
  Json r = {{"model", {{"preset", "llama-3.1-8b"}}},
            {"workload", {{"kind", "inference"}}},
            {"gpu", "h100-sxm-80gb"}};
  if (!precision.is_null()) r["precision"] = precision;
  return r;
}

bool Warned(const Json& result, const std::string& code) {
  for (const Json& w : result["warnings"]) {
    if (w["code"] == code) return true;
  }
  return false;
}

// Llama 3.1 8B's linear weights per layer: q and o 2 x 4096 x 4096 = 33,554,432, k and v
// 2 x 4096 x 1024 = 8,388,608, gate, up and down 3 x 4096 x 14336 = 176,160,768: 218,103,808;
// x 32 layers = 6,979,321,856 weights (872,415,232 bytes per bit of width).
constexpr double kLlama8bLinear = 6979321856.0;

TEST(WeightFormats, Llama8bLinearsInTheBlockScaledFormats) {
  // bf16: 2 B each = 13,958,643,712 B.
  EXPECT_EQ(Detail(Result(Llama8b(nullptr)), "weights.linear"), kLlama8bLinear * 2);
  // mxfp4: 4.25 bits = 872,415,232 x 4.25 = 3,707,764,736 B.
  EXPECT_EQ(Detail(Result(Llama8b({{"weights", "mxfp4"}})), "weights.linear"), 3707764736.0);
  // nvfp4: 4.5 bits = 872,415,232 x 4.5 = 3,925,868,544 B (the per-tensor fp32 left out).
  EXPECT_EQ(Detail(Result(Llama8b({{"weights", "nvfp4"}})), "weights.linear"), 3925868544.0);
  // mxfp8: 8.25 bits = 872,415,232 x 8.25 = 7,197,425,664 B.
  EXPECT_EQ(Detail(Result(Llama8b({{"weights", "mxfp8"}})), "weights.linear"), 7197425664.0);
  // fp8_block128: 1 B each plus 4 B per 128 x 128 block, i.e. 6,979,321,856 / 4096 =
  // 1,703,936 B of scales (q_proj alone: 32 x 32 blocks = 4096 B): 6,981,025,792 B.
  EXPECT_EQ(Detail(Result(Llama8b({{"weights", "fp8_block128"}})), "weights.linear"), 6981025792.0);
  // The embedding and head stay bf16 in all of them: 2 x 128256 x 4096 x 2 B = 2,101,346,304.
  EXPECT_EQ(Detail(Result(Llama8b({{"weights", "mxfp4"}})), "weights.embedding_and_head"),
            Detail(Result(Llama8b(nullptr)), "weights.embedding_and_head"));
}

TEST(WeightFormats, Exl2NeedsItsBitsPerWeight) {
  // 4.65 bits: 872,415,232 x 4.65 = 4,056,730,828.8 B of linears (the result rounds to whole
  // bytes: 4,056,730,829); the head at convert.py's
  // 6 bits: 128256 x 4096 x 6 / 8 = 394,002,432 B beside the 16-bit table's 1,050,673,152.
  const Json r = Result(Llama8b({{"weights", "exl2"}, {"bits_per_weight", 4.65}}));
  EXPECT_EQ(Detail(r, "weights.linear"), 4056730829.0);
  EXPECT_EQ(Detail(r, "weights.embedding_and_head"), 1050673152.0 + 394002432.0);
  // Without bits_per_weight exl2 is an error; out of 2.0-8.0 too; elsewhere it is unused.
  const Json missing = Envelope(Llama8b({{"weights", "exl2"}}));
  EXPECT_FALSE(missing.value("ok", true));
  EXPECT_EQ(missing["errors"][0]["path"], "/precision/bits_per_weight");
  EXPECT_FALSE(Envelope(Llama8b({{"weights", "exl2"}, {"bits_per_weight", 9}})).value("ok", true));
  EXPECT_TRUE(
      Warned(Result(Llama8b({{"weights", "bf16"}, {"bits_per_weight", 4}})), "field_unused"));
}

TEST(WeightFormats, GgufLegacyAndIQuantBlocks) {
  // Q4_1 (20-byte blocks of 32, 5 bits), Q5_0 (22 B, 5.5), Q5_1 (24 B, 6): every linear in the
  // base type, the output in Q6_K. Q4_1: 872,415,232 x 5 = 4,362,076,160 B.
  EXPECT_EQ(Detail(Result(Llama8b({{"weights", "gguf_q4_1"}})), "weights.linear"), 4362076160.0);
  EXPECT_EQ(Detail(Result(Llama8b({{"weights", "gguf_q5_0"}})), "weights.linear"), 4798283776.0);
  EXPECT_EQ(Detail(Result(Llama8b({{"weights", "gguf_q5_1"}})), "weights.linear"), 5234491392.0);
  // IQ4_XS (136-byte blocks of 256: 4.25 bits), GQA 4 (32 query heads on 8 KV heads), so
  // attn_v is Q5_K (5.5 bits): 32 x 4096 x 1024 = 134,217,728 v weights at 5.5 and the other
  // 6,845,104,128 at 4.25: (738,197,504 + 29,091,692,544) / 8 = 3,728,736,256 B.
  EXPECT_EQ(Detail(Result(Llama8b({{"weights", "gguf_iq4_xs"}})), "weights.linear"), 3728736256.0);
  // IQ3_XXS (98-byte blocks, 3.0625 bits): q and k IQ2_S (82 B, 2.5625): 32 x 20,971,520 =
  // 671,088,640 weights; attn_output IQ3_S (110 B, 3.4375): 536,870,912; attn_v Q4_K (4.5):
  // 134,217,728; the MLP's 5,637,144,576 at 3.0625. Bits: 1,719,664,640 + 1,845,493,760 +
  // 603,979,776 + 17,263,755,264 = 21,432,893,440: 2,679,111,680 B.
  EXPECT_EQ(Detail(Result(Llama8b({{"weights", "gguf_iq3_xxs"}})), "weights.linear"), 2679111680.0);
}

TEST(WeightFormats, FourBitFloatsRunOnFp4UnitsOnlyWhereTheCardListsTheFormat) {
  const auto& cat = ShippedCatalog();
  const GpuSpec& b200 = *cat.FindGpu("b200-sxm-180gb");
  const GpuSpec& h100 = *cat.FindGpu("h100-sxm-80gb");
  const GpuSpec& mi355 = *cat.FindGpu("mi355x-288gb");
  // B200 lists all four block formats: FP4 serving at its 9000 TFLOPS dense FP4 peak.
  EXPECT_EQ(MatmulPeak(b200, WeightFormat::kMxfp4, false), b200.fp4_flops);
  EXPECT_EQ(MatmulPeak(b200, WeightFormat::kNvfp4, false), b200.fp4_flops);
  EXPECT_EQ(MatmulPeak(b200, WeightFormat::kMxfp4Experts, false), b200.fp4_flops);
  // A LoRA step through the frozen FP4 base dequantises it: bf16.
  EXPECT_EQ(MatmulPeak(b200, WeightFormat::kMxfp4, true), b200.bf16_flops);
  // H100 has no FP4 units: 16-bit compute. MI355X has MXFP4 but not NVFP4.
  EXPECT_EQ(MatmulPeak(h100, WeightFormat::kMxfp4, false), h100.bf16_flops);
  EXPECT_EQ(MatmulPeak(mi355, WeightFormat::kMxfp4, false), mi355.fp4_flops);
  EXPECT_EQ(MatmulPeak(mi355, WeightFormat::kNvfp4, false), mi355.bf16_flops);
  // MXFP8 and DeepSeek's blocks run at the fp8 peak where there is one.
  EXPECT_EQ(MatmulPeak(h100, WeightFormat::kFp8Block128, false), h100.fp8_flops);
  EXPECT_EQ(MatmulPeak(b200, WeightFormat::kMxfp8, false), b200.fp8_flops);
  // And the setup says so.
  EXPECT_TRUE(Warned(Result(Llama8b({{"weights", "nvfp4"}})), "precision_not_native"));
  Json on_b200 = Llama8b({{"weights", "nvfp4"}});
  on_b200["gpu"] = "b200-sxm-180gb";
  EXPECT_FALSE(Warned(Result(on_b200), "precision_not_native"));
}

const char* kLlamaConfig = R"({"model_type": "llama", "hidden_size": 4096,
    "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
    "num_key_value_heads": 8, "vocab_size": 128256, "tie_word_embeddings": false})";

Json WithQuant(const Json& quant) {
  Json config = Json::parse(kLlamaConfig);
  config["quantization_config"] = quant;
  Json r = Llama8b(nullptr);
  r["model"] = {{"hf_config", config}};
  return r;
}

TEST(WeightFormats, TheCheckpointsQuantizationConfigSetsTheFormat) {
  // GPTQ 4-bit, group 32: fp16 scale and 4-bit zero per 32 = 4 + 20/32 = 4.625 bits:
  // 872,415,232 x 4.625 = 4,034,920,448 B.
  const Json gptq = Result(WithQuant({{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 32}}));
  EXPECT_EQ(gptq["request_normalized"]["precision"]["weights"], "gptq_int4");
  EXPECT_EQ(gptq["request_normalized"]["precision"]["group_size"], 32);
  EXPECT_EQ(Detail(gptq, "weights.linear"), 4034920448.0);
  // AWQ and AutoRound at group 128: 4.15625 bits = 3,625,975,808 B.
  const Json awq = Result(WithQuant({{"quant_method", "awq"}, {"bits", 4}, {"group_size", 128}}));
  EXPECT_EQ(awq["request_normalized"]["precision"]["weights"], "awq_int4");
  EXPECT_EQ(Detail(awq, "weights.linear"), 3625975808.0);
  const Json ar = Result(WithQuant({{"quant_method", "auto-round"}, {"bits", 4}}));
  EXPECT_EQ(ar["request_normalized"]["precision"]["weights"], "autoround_int4");
  EXPECT_EQ(Detail(ar, "weights.linear"), 3625975808.0);
  // DeepSeek's fp8 with weight_block_size [128, 128].
  const Json ds = Result(WithQuant({{"quant_method", "fp8"}, {"weight_block_size", {128, 128}}}));
  EXPECT_EQ(ds["request_normalized"]["precision"]["weights"], "fp8_block128");
  // The request's own weights win; a 3-bit GPTQ is not modelled and says so.
  Json own = WithQuant({{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 32}});
  own["precision"] = {{"weights", "bf16"}};
  EXPECT_EQ(Detail(Result(own), "weights.linear"), kLlama8bLinear * 2);
  const Json three = Result(WithQuant({{"quant_method", "gptq"}, {"bits", 3}}));
  EXPECT_TRUE(Warned(three, "checkpoint_quantization_not_modelled"));
  EXPECT_EQ(three["request_normalized"]["precision"]["weights"], "bf16");
}

// openai/gpt-oss-20b config.json (architecture fields and its quantization_config).
Json GptOss20b() {
  Json types = Json::array();
  for (int i = 0; i < 24; ++i) types.push_back(i % 2 == 0 ? "sliding_attention" : "full_attention");
  return {{"model_type", "gpt_oss"},
          {"attention_bias", true},
          {"head_dim", 64},
          {"hidden_size", 2880},
          {"intermediate_size", 2880},
          {"layer_types", types},
          {"num_attention_heads", 64},
          {"num_experts_per_tok", 4},
          {"num_hidden_layers", 24},
          {"num_key_value_heads", 8},
          {"num_local_experts", 32},
          {"sliding_window", 128},
          {"tie_word_embeddings", false},
          {"vocab_size", 201088},
          {"quantization_config",
           {{"modules_to_not_convert",
             {"model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens",
              "lm_head"}},
            {"quant_method", "mxfp4"}}}};
}

TEST(WeightFormats, GptOssKeepsItsExpertsInMxfp4AndTheRestInBf16) {
  // Experts: 24 layers x 32 x (2880 x 5760 + 2880 x 2880) = 19,110,297,600 weights at 4.25
  // bits = 10,152,345,600 B. Attention: 24 x (2 x 2880 x 4096 + 2 x 2880 x 512) = 637,009,920
  // at 2 B = 1,274,019,840 B. Linears 11,426,365,440 B; embedding and head 2 x 201088 x 2880
  // x 2 B = 2,316,533,760 B in bf16.
  Json r = {{"model", {{"hf_config", GptOss20b()}}},
            {"workload", {{"kind", "inference"}}},
            {"gpu", "h100-sxm-80gb"}};
  const Json res = Result(r);
  EXPECT_EQ(res["request_normalized"]["precision"]["weights"], "mxfp4_experts");
  EXPECT_EQ(Detail(res, "weights.linear"), 11426365440.0);
  EXPECT_EQ(Detail(res, "weights.embedding_and_head"), 2316533760.0);
  // Without self_attn in modules_to_not_convert the attention is MXFP4 too:
  // 637,009,920 x 4.25 / 8 = 338,411,520 B beside the experts' 10,152,345,600.
  Json all = GptOss20b();
  all["quantization_config"]["modules_to_not_convert"] = Json::array({"lm_head"});
  r["model"] = {{"hf_config", all}};
  const Json res_all = Result(r);
  EXPECT_EQ(res_all["request_normalized"]["precision"]["weights"], "mxfp4");
  EXPECT_EQ(Detail(res_all, "weights.linear"), 10152345600.0 + 338411520.0);
}

TEST(WeightFormats, ShippedPresetsServeInTheirCheckpointsFormat) {
  // DeepSeek-V3's config.json declares fp8 with weight_block_size [128, 128]; gpt-oss-120b's
  // MXFP4 keeps self_attn, router, embed_tokens and lm_head unconverted. Serving defaults to
  // the checkpoint's format; full training starts from bf16 (a quantised format cannot train).
  Json r = {{"model", {{"preset", "deepseek-v3"}}},
            {"workload", {{"kind", "inference"}}},
            {"gpu", "h200-sxm-141gb"},
            {"parallel", {{"gpus", 8}, {"tp", 8}}}};
  EXPECT_EQ(Parse(r).precision.weights, WeightFormat::kFp8Block128);
  r["model"]["preset"] = "gpt-oss-120b";
  EXPECT_EQ(Parse(r).precision.weights, WeightFormat::kMxfp4Experts);
  r["workload"] = {{"kind", "pretrain"}, {"seq_len", 4096}, {"micro_batch", 1}};
  EXPECT_EQ(Parse(r).precision.weights, WeightFormat::kBf16);
}

}  // namespace
}  // namespace gpuplan::testing
