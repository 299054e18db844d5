// SPDX-License-Identifier: MIT
// Bits per weight of each storage format, scales included, worked by hand from the formats'
// block layouts.
#include "model/dtype.h"

#include <gtest/gtest.h>

#include "model/gguf.h"

namespace gpuplan {
namespace {

TEST(Dtype, NamesRoundTrip) {
  for (const char* n : {"fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4", "nf4", "gptq_int4",
                        "awq_int4", "gguf_q4_k_m", "gguf_q8_0"}) {
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

TEST(Dtype, PlainFormats) {
  EXPECT_DOUBLE_EQ(BytesPerElement(WeightFormat::kTf32), 4);  // tf32 is stored as fp32
  EXPECT_DOUBLE_EQ(BytesPerElement(WeightFormat::kBf16), 2);
  EXPECT_DOUBLE_EQ(BytesPerElement(KvFormat::kFp8), 1);
  EXPECT_TRUE(IsFourBit(WeightFormat::kNf4));
  EXPECT_FALSE(IsFourBit(WeightFormat::kInt8));
  EXPECT_FALSE(IsFloatTrainable(WeightFormat::kInt8));
}

}  // namespace
}  // namespace gpuplan
