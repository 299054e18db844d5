// SPDX-License-Identifier: MIT
// Bits per weight of each storage format, scales included, worked by hand from the formats'
// block layouts.
#include "model/dtype.h"

#include <gtest/gtest.h>

#include "model/format_specs.h"
#include "model/gguf.h"

namespace gpuplan {
namespace {

TEST(Dtype, NamesRoundTrip) {
  for (const char* n : {"fp32",         "tf32",         "bf16",           "fp16",
                        "fp8",          "int8",         "int4",           "nf4",
                        "gptq_int4",    "awq_int4",     "gguf_q4_k_m",    "gguf_q8_0",
                        "gguf_q4_1",    "gguf_q5_0",    "gguf_q5_1",      "gguf_iq4_xs",
                        "gguf_iq3_xxs", "mxfp4",        "mxfp4_experts",  "nvfp4",
                        "mxfp8",        "fp8_block128", "autoround_int4", "exl2"}) {
    const auto f = ParseWeightFormat(n);
    ASSERT_TRUE(f.has_value()) << n;
    EXPECT_EQ(Name(*f), n);
  }
  EXPECT_FALSE(ParseWeightFormat("int3").has_value());
  EXPECT_FALSE(ParseKvFormat("nf4").has_value());
}

TEST(Dtype, Nf4WithAndWithoutDoubleQuantisation) {
  // QLoRA paper, section 3: block 64 with an fp32 absmax = 32/64 = 0.5 extra bits; double
  // quantisation stores the absmax in 8 bits plus an fp32 per 256 blocks:
  // 8/64 + 32/(64*256) = 0.125 + 0.001953125, i.e. 4.126953125 bits per weight.
  EXPECT_DOUBLE_EQ(Bits(WeightFormat::kNf4, {64, true}).bits_per_weight, 4.126953125);
  EXPECT_DOUBLE_EQ(Bits(WeightFormat::kNf4, {64, false}).bits_per_weight, 4.5);
  EXPECT_TRUE(Bits(WeightFormat::kNf4, {}).embeddings_16bit);
}

TEST(Dtype, GroupQuantisedInt4) {
  // GPTQ/AWQ, group 128: fp16 scale (16 bits) + packed 4-bit zero per group: 4 + 20/128.
  EXPECT_DOUBLE_EQ(Bits(WeightFormat::kGptqInt4, {128, true}).bits_per_weight, 4.15625);
  EXPECT_DOUBLE_EQ(Bits(WeightFormat::kAwqInt4, {0, true}).bits_per_weight, 4.15625);
  // gpt-fast int4 with group 32: bf16 scale and zero per group = 4 + 32/32 = 5 bits.
  EXPECT_DOUBLE_EQ(Bits(WeightFormat::kInt4, {32, true}).bits_per_weight, 5.0);
  EXPECT_DOUBLE_EQ(Bits(WeightFormat::kInt4, {}).bits_per_weight, 4.25);
}

TEST(Dtype, GgufBlockSizes) {
  // ggml block_q8_0: one fp16 scale + 32 int8 = 34 bytes / 32 weights = 8.5 bits.
  EXPECT_DOUBLE_EQ(Bits(WeightFormat::kGgufQ8_0, {}).bits_per_weight, 8.5);
  // block_q4_K: 144 bytes / 256 weights = 4.5 bits; block_q6_K: 210 bytes / 256 = 6.5625 bits.
  const FormatBits q4km = Bits(WeightFormat::kGgufQ4KM, {});
  EXPECT_DOUBLE_EQ(q4km.bits_per_weight, 4.5);
  EXPECT_DOUBLE_EQ(q4km.lm_head_bits, 6.5625);
  EXPECT_FALSE(q4km.embeddings_16bit);
}

TEST(Gguf, Q4KMPromotesHalfOfAttnVAndFfnDown) {
  // llama.cpp use_more_bits(i, n) for n = 32: i < 4, i >= 28, and (i - 4) % 3 == 2 (i = 6, 9,
  // ..., 27): 16 of 32 layers keep attn_v and ffn_down in Q6_K; the rest are Q4_K.
  const GgufModel m{32, true, false};
  int promoted = 0;
  for (int64_t i = 0; i < 32; ++i) {
    promoted += GgufBits(WeightFormat::kGgufQ4KM, GgufTensor::kFfnDown, i, m) == 6.5625 ? 1 : 0;
  }
  EXPECT_EQ(promoted, 16);
  EXPECT_DOUBLE_EQ(GgufBits(WeightFormat::kGgufQ4KM, GgufTensor::kAttnV, 5, m), 4.5);
  EXPECT_DOUBLE_EQ(GgufBits(WeightFormat::kGgufQ4KM, GgufTensor::kAttnV, 6, m), 6.5625);
  // An 80-layer Llama is llama.cpp's LLM_TYPE_70B: its Q4_K attn_v tensors become Q5_K (5.5).
  const GgufModel big{80, true, true};
  EXPECT_DOUBLE_EQ(GgufBits(WeightFormat::kGgufQ4KM, GgufTensor::kAttnV, 11, big), 5.5);
  // Q3_K_M: 110-byte blocks (3.4375 bits), attn_output in Q4_K, the first n/16 ffn_down Q5_K.
  EXPECT_DOUBLE_EQ(GgufBits(WeightFormat::kGgufQ3KM, GgufTensor::kAttnQK, 40, big), 3.4375);
  EXPECT_DOUBLE_EQ(GgufBits(WeightFormat::kGgufQ3KM, GgufTensor::kAttnOut, 40, big), 4.5);
  EXPECT_DOUBLE_EQ(GgufBits(WeightFormat::kGgufQ3KM, GgufTensor::kFfnDown, 4, big), 5.5);
}

TEST(Dtype, BlockScaledFloats) {
  // OCP Microscaling Formats (MX) v1.0: blocks of k = 32 elements share one 8-bit E8M0 scale.
  // MXFP4 (E2M1): (32 x 4 + 8) / 32 = 4.25 bits; MXFP8 (E4M3): (32 x 8 + 8) / 32 = 8.25 bits.
  EXPECT_DOUBLE_EQ(Bits(WeightFormat::kMxfp4, {}).bits_per_weight, 4.25);
  EXPECT_DOUBLE_EQ(Bits(WeightFormat::kMxfp8, {}).bits_per_weight, 8.25);
  // NVFP4: blocks of 16 E2M1 elements with one FP8 E4M3 scale: (16 x 4 + 8) / 16 = 4.5 bits;
  // the one fp32 scale per tensor adds 32 bits to millions of weights (left out).
  EXPECT_DOUBLE_EQ(Bits(WeightFormat::kNvfp4, {}).bits_per_weight, 4.5);
  // DeepSeek-V3's fp8: one fp32 scale per 128 x 128 = 16384 weights: 8 + 32/16384 bits.
  EXPECT_DOUBLE_EQ(Bits(WeightFormat::kFp8Block128, {}).bits_per_weight, 8.001953125);
  // gpt-oss: experts at MXFP4's 4.25, the rest 16; embeddings and head 16 in all of them.
  const FormatBits oss = Bits(WeightFormat::kMxfp4Experts, {});
  EXPECT_DOUBLE_EQ(oss.bits_per_weight, 16);
  EXPECT_DOUBLE_EQ(oss.expert_bits, 4.25);
  EXPECT_TRUE(Bits(WeightFormat::kNvfp4, {}).embeddings_16bit);
  EXPECT_TRUE(IsFp4(WeightFormat::kNvfp4));
  EXPECT_TRUE(IsFp8(WeightFormat::kMxfp8));
  EXPECT_FALSE(IsFp4(WeightFormat::kMxfp8));
}

TEST(Dtype, Exl2AndAutoRound) {
  // ExLlamaV2: the checkpoint's average bits as given, the head at convert.py's -hb 6.
  QuantOptions q;
  q.bits_per_weight = 3.5;
  const FormatBits exl2 = Bits(WeightFormat::kExl2, q);
  EXPECT_DOUBLE_EQ(exl2.bits_per_weight, 3.5);
  EXPECT_DOUBLE_EQ(exl2.lm_head_bits, 6);
  EXPECT_DOUBLE_EQ(exl2.embedding_bits, 16);
  // AutoRound exports GPTQ's packing: 4 + 20/128 = 4.15625 bits at group 128.
  EXPECT_DOUBLE_EQ(Bits(WeightFormat::kAutoRoundInt4, {128, true}).bits_per_weight, 4.15625);
  EXPECT_TRUE(IsFourBit(WeightFormat::kAutoRoundInt4));
}

TEST(Gguf, LegacyAndIQuantBlocks) {
  const GgufModel m{32, true, false};
  // block_q4_1: fp16 d and m (4 B) + 16 B of nibbles = 20 B / 32 = 5 bits; block_q5_0: d (2)
  // + qh[4] + qs[16] = 22 B = 5.5 bits; block_q5_1: d, m + qh[4] + qs[16] = 24 B = 6 bits.
  EXPECT_DOUBLE_EQ(GgufBits(WeightFormat::kGgufQ4_1, GgufTensor::kFfnDown, 0, m), 5.0);
  EXPECT_DOUBLE_EQ(GgufBits(WeightFormat::kGgufQ5_0, GgufTensor::kAttnV, 0, m), 5.5);
  EXPECT_DOUBLE_EQ(GgufBits(WeightFormat::kGgufQ5_1, GgufTensor::kAttnQK, 0, m), 6.0);
  EXPECT_DOUBLE_EQ(GgufBits(WeightFormat::kGgufQ5_1, GgufTensor::kOutput, 0, m), 6.5625);
  // block_iq4_xs: d (2) + scales_h (2) + scales_l[4] + qs[128] = 136 B / 256 = 4.25 bits;
  // attn_v Q5_K (5.5) under GQA of 4 or more, IQ4_XS otherwise; output Q6_K.
  EXPECT_DOUBLE_EQ(GgufBits(WeightFormat::kGgufIq4Xs, GgufTensor::kFfnUpGate, 3, m), 4.25);
  EXPECT_DOUBLE_EQ(GgufBits(WeightFormat::kGgufIq4Xs, GgufTensor::kAttnV, 3, m), 5.5);
  EXPECT_DOUBLE_EQ(GgufBits(WeightFormat::kGgufIq4Xs, GgufTensor::kAttnV, 3, {32, false, false}),
                   4.25);
  // block_iq3_xxs: d (2) + qs[96] = 98 B / 256 = 3.0625 bits; q/k IQ2_S (82 B: 2.5625),
  // attn_output and token_embd IQ3_S (110 B: 3.4375), output Q5_K (5.5), attn_v Q4_K (4.5).
  EXPECT_DOUBLE_EQ(GgufBits(WeightFormat::kGgufIq3Xxs, GgufTensor::kFfnDown, 0, m), 3.0625);
  EXPECT_DOUBLE_EQ(GgufBits(WeightFormat::kGgufIq3Xxs, GgufTensor::kAttnQK, 0, m), 2.5625);
  EXPECT_DOUBLE_EQ(GgufBits(WeightFormat::kGgufIq3Xxs, GgufTensor::kAttnOut, 0, m), 3.4375);
  EXPECT_DOUBLE_EQ(GgufBits(WeightFormat::kGgufIq3Xxs, GgufTensor::kTokenEmbd, 0, m), 3.4375);
  EXPECT_DOUBLE_EQ(GgufBits(WeightFormat::kGgufIq3Xxs, GgufTensor::kOutput, 0, m), 5.5);
  EXPECT_DOUBLE_EQ(GgufBits(WeightFormat::kGgufIq3Xxs, GgufTensor::kAttnV, 0, m), 4.5);
}

TEST(Dtype, PlainFormats) {
  EXPECT_DOUBLE_EQ(BytesPerElement(WeightFormat::kTf32), 4);  // tf32 is stored as fp32
  EXPECT_DOUBLE_EQ(BytesPerElement(WeightFormat::kBf16), 2);
  EXPECT_DOUBLE_EQ(BytesPerElement(KvFormat::kFp8), 1);
  EXPECT_TRUE(IsFourBit(WeightFormat::kNf4));
  EXPECT_FALSE(IsFourBit(WeightFormat::kInt8));
  EXPECT_FALSE(IsFloatTrainable(WeightFormat::kInt8));
}

// catalog/formats.json, compiled in: every format the request can name has its entry, and the
// entries give what their sources state.
TEST(FormatsJson, EveryNamedFormatHasItsEntry) {
  for (const char* name :
       {"fp32",           "tf32",        "bf16",          "fp16",        "fp8",
        "int8",           "int4",        "nf4",           "gptq_int4",   "awq_int4",
        "autoround_int4", "mxfp4",       "mxfp4_experts", "nvfp4",       "mxfp8",
        "fp8_block128",   "exl2",        "gguf_q4_k_m",   "gguf_q8_0",   "gguf_q2_k",
        "gguf_q3_k_m",    "gguf_q5_k_m", "gguf_q6_k",     "gguf_iq2_xs", "gguf_q4_0",
        "gguf_q4_1",      "gguf_q5_0",   "gguf_q5_1",     "gguf_iq4_xs", "gguf_iq3_xxs"}) {
    ASSERT_TRUE(ParseWeightFormat(name).has_value()) << name;
    EXPECT_NE(FindWeightFormatSpec(name), nullptr) << name;
  }
  EXPECT_EQ(WeightFormatSpecs().size(), 30u);
  EXPECT_EQ(KvFormatSpecs().size(), 5u);
  // block_q4_K: 144 bytes per 256 weights = 4.5 bits; block_q8_0: 34 per 32 = 8.5.
  EXPECT_DOUBLE_EQ(GgufBlockBits("q4_k"), 4.5);
  EXPECT_DOUBLE_EQ(GgufBlockBits("q8_0"), 8.5);
  EXPECT_DOUBLE_EQ(GgufBlockBits("q9_z"), 0);
  // QLoRA's nf4 with double quantisation at 64: 4 + 8/64 + 32/(64 x 256) = 4.126953125; a
  // group of 128 asked for: 4 + 8/128 + 32/32768 = 4.0634765625; without it 4 + 32/64 = 4.5.
  QuantOptions q;
  EXPECT_DOUBLE_EQ(Bits(WeightFormat::kNf4, q).bits_per_weight, 4.126953125);
  q.group_size = 128;
  EXPECT_DOUBLE_EQ(Bits(WeightFormat::kNf4, q).bits_per_weight, 4.0634765625);
  q = QuantOptions{};
  q.double_quant = false;
  EXPECT_DOUBLE_EQ(Bits(WeightFormat::kNf4, q).bits_per_weight, 4.5);
  // MXFP4's block is its own: a request's group size does not move it (4 + 8/32).
  q.group_size = 128;
  EXPECT_DOUBLE_EQ(Bits(WeightFormat::kMxfp4, q).bits_per_weight, 4.25);
  // exl2 takes the checkpoint's measured average; 6-bit head, 16-bit embeddings.
  q.bits_per_weight = 3.5;
  const FormatBits exl2 = Bits(WeightFormat::kExl2, q);
  EXPECT_DOUBLE_EQ(exl2.bits_per_weight, 3.5);
  EXPECT_DOUBLE_EQ(exl2.lm_head_bits, 6);
  EXPECT_FALSE(exl2.embeddings_16bit);
}

}  // namespace
}  // namespace gpuplan
