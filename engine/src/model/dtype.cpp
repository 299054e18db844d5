// SPDX-License-Identifier: MIT
#include "model/dtype.h"

#include <array>
#include <utility>

#include "model/gguf.h"

namespace gpuplan {
namespace {

constexpr std::array<std::pair<WeightFormat, std::string_view>, 30> kWeightNames{{
    {WeightFormat::kFp32, "fp32"},
    {WeightFormat::kTf32, "tf32"},
    {WeightFormat::kBf16, "bf16"},
    {WeightFormat::kFp16, "fp16"},
    {WeightFormat::kFp8, "fp8"},
    {WeightFormat::kInt8, "int8"},
    {WeightFormat::kInt4, "int4"},
    {WeightFormat::kNf4, "nf4"},
    {WeightFormat::kGptqInt4, "gptq_int4"},
    {WeightFormat::kAwqInt4, "awq_int4"},
    {WeightFormat::kGgufQ4KM, "gguf_q4_k_m"},
    {WeightFormat::kGgufQ8_0, "gguf_q8_0"},
    {WeightFormat::kGgufQ2K, "gguf_q2_k"},
    {WeightFormat::kGgufQ3KM, "gguf_q3_k_m"},
    {WeightFormat::kGgufQ5KM, "gguf_q5_k_m"},
    {WeightFormat::kGgufQ6K, "gguf_q6_k"},
    {WeightFormat::kGgufIq2Xs, "gguf_iq2_xs"},
    {WeightFormat::kGgufQ4_0, "gguf_q4_0"},
    {WeightFormat::kGgufQ4_1, "gguf_q4_1"},
    {WeightFormat::kGgufQ5_0, "gguf_q5_0"},
    {WeightFormat::kGgufQ5_1, "gguf_q5_1"},
    {WeightFormat::kGgufIq4Xs, "gguf_iq4_xs"},
    {WeightFormat::kGgufIq3Xxs, "gguf_iq3_xxs"},
    {WeightFormat::kMxfp4, "mxfp4"},
    {WeightFormat::kMxfp4Experts, "mxfp4_experts"},
    {WeightFormat::kNvfp4, "nvfp4"},
    {WeightFormat::kMxfp8, "mxfp8"},
    {WeightFormat::kFp8Block128, "fp8_block128"},
    {WeightFormat::kAutoRoundInt4, "autoround_int4"},
    {WeightFormat::kExl2, "exl2"},
}};

constexpr std::array<std::pair<KvFormat, std::string_view>, 5> kKvNames{{
    {KvFormat::kFp32, "fp32"},
    {KvFormat::kBf16, "bf16"},
    {KvFormat::kFp16, "fp16"},
    {KvFormat::kFp8, "fp8"},
    {KvFormat::kInt8, "int8"},
}};

}  // namespace

std::optional<WeightFormat> ParseWeightFormat(std::string_view name) {
  for (const auto& [f, n] : kWeightNames) {
    if (n == name) return f;
  }
  return std::nullopt;
}

std::optional<KvFormat> ParseKvFormat(std::string_view name) {
  for (const auto& [f, n] : kKvNames) {
    if (n == name) return f;
  }
  return std::nullopt;
}

std::string_view Name(WeightFormat f) {
  for (const auto& [g, n] : kWeightNames) {
    if (g == f) return n;
  }
  return "?";
}

std::string_view Name(KvFormat f) {
  for (const auto& [g, n] : kKvNames) {
    if (g == f) return n;
  }
  return "?";
}

double BytesPerElement(WeightFormat f) {
  switch (f) {
    case WeightFormat::kFp32:
    case WeightFormat::kTf32:  // tf32 is a compute mode: storage stays fp32
      return 4;
    case WeightFormat::kBf16:
    case WeightFormat::kFp16:
      return 2;
    case WeightFormat::kFp8:
    case WeightFormat::kMxfp8:
    case WeightFormat::kFp8Block128:
    case WeightFormat::kInt8:
    case WeightFormat::kGgufQ8_0:
    case WeightFormat::kGgufQ6K:
    case WeightFormat::kGgufQ5KM:
    case WeightFormat::kGgufQ5_0:
    case WeightFormat::kGgufQ5_1:
      return 1;
    default:
      return 0.5;
  }
}

double BytesPerElement(KvFormat f) {
  switch (f) {
    case KvFormat::kFp32:
      return 4;
    case KvFormat::kBf16:
    case KvFormat::kFp16:
      return 2;
    default:
      return 1;
  }
}

FormatBits Bits(WeightFormat f, const QuantOptions& q) {
  FormatBits b;
  b.embeddings_16bit = true;
  switch (f) {
    case WeightFormat::kFp32:
    case WeightFormat::kTf32:
      b.bits_per_weight = 32;
      b.embedding_bits = b.lm_head_bits = 32;
      b.embeddings_16bit = false;
      break;
    case WeightFormat::kBf16:
    case WeightFormat::kFp16:
      b.bits_per_weight = 16;
      break;
    case WeightFormat::kFp8:
    case WeightFormat::kInt8:
      // fp8: per-tensor fp32 scales only. bitsandbytes LLM.int8: one fp32 scale per row of
      // thousands of weights, below 0.01 bits per weight. Both checkpoints keep embeddings and
      // lm_head in 16 bits.
      b.bits_per_weight = 8;
      break;
    case WeightFormat::kNf4: {
      // QLoRA (Dettmers et al. 2023, section 3): 4-bit codes, one absmax per block of 64.
      // Double quantisation stores that absmax in 8 bits with one fp32 constant per 256 blocks:
      // 4 + 8/64 + 32/(64*256) = 4.127 bits; without it, 4 + 32/64 = 4.5 bits.
      const double g = q.group_size > 0 ? q.group_size : 64;
      b.bits_per_weight = q.double_quant ? 4 + 8 / g + 32 / (g * 256) : 4 + 32 / g;
      break;
    }
    case WeightFormat::kGptqInt4:
    case WeightFormat::kAwqInt4:
    case WeightFormat::kAutoRoundInt4: {
      // (AutoRound exports in GPTQ's packing: the same scales and zeros.)
      // One fp16 scale and one packed 4-bit zero point per group (default 128):
      // 4 + (16 + 4)/128 = 4.156 bits.
      const double g = q.group_size > 0 ? q.group_size : 128;
      b.bits_per_weight = 4 + 20 / g;
      break;
    }
    case WeightFormat::kInt4: {
      // Generic group-wise int4 with a 16-bit scale and a 16-bit zero per group (gpt-fast,
      // torchao int4 weight-only): 4 + 32/g; default g = 128 gives 4.25 bits.
      const double g = q.group_size > 0 ? q.group_size : 128;
      b.bits_per_weight = 4 + 32 / g;
      break;
    }
    case WeightFormat::kMxfp4:
      // OCP MX v1.0: a block of 32 FP4 (E2M1) elements shares one 8-bit E8M0 scale:
      // (32 x 4 + 8) / 32 = 4.25 bits. Embeddings and lm_head stay in bf16 (the checkpoints'
      // modules_to_not_convert).
      b.bits_per_weight = 4 + 8.0 / 32;
      break;
    case WeightFormat::kMxfp4Experts:
      // gpt-oss: only the routed experts are MXFP4 (4.25 bits); attention, router, embeddings
      // and lm_head stay bf16 (its quantization_config's modules_to_not_convert).
      b.bits_per_weight = 16;
      b.expert_bits = 4 + 8.0 / 32;
      break;
    case WeightFormat::kNvfp4:
      // NVFP4: a block of 16 FP4 (E2M1) elements shares one FP8 (E4M3) scale: (16 x 4 + 8) / 16
      // = 4.5 bits, plus one fp32 scale per tensor (32 bits over millions of weights: left out).
      b.bits_per_weight = 4 + 8.0 / 16;
      break;
    case WeightFormat::kMxfp8:
      // OCP MX: 32 FP8 (E4M3) elements and one E8M0 scale: (32 x 8 + 8) / 32 = 8.25 bits.
      b.bits_per_weight = 8 + 8.0 / 32;
      break;
    case WeightFormat::kFp8Block128:
      // DeepSeek-V3 (weight_block_size [128, 128]): one fp32 scale_inv per 128 x 128 block:
      // 8 + 32 / 16384 = 8.001953125 bits.
      b.bits_per_weight = 8 + 32.0 / (128 * 128);
      break;
    case WeightFormat::kExl2:
      // ExLlamaV2's bits per weight is the measured average over the quantised linears, scales
      // included; convert.py quantises the head at 6 bits (-hb default) and keeps the embedding
      // table in 16 bits.
      b.bits_per_weight = q.bits_per_weight > 0 ? q.bits_per_weight : 4;
      b.embeddings_16bit = false;
      b.embedding_bits = 16;
      b.lm_head_bits = 6;
      break;
    default: {
      // GGUF: every tensor, embeddings and output included, is quantised; the per-tensor
      // mixture is in gguf.cpp. Here the body's type for the round-number views.
      const GgufModel any{32, false, false};
      b.bits_per_weight = GgufBits(f, GgufTensor::kAttnQK, 16, any);
      b.embedding_bits = GgufBits(f, GgufTensor::kTokenEmbd, 0, any);
      b.lm_head_bits = GgufBits(f, GgufTensor::kOutput, 0, any);
      b.embeddings_16bit = false;
      break;
    }
  }
  return b;
}

bool IsFloatTrainable(WeightFormat f) {
  return f == WeightFormat::kFp32 || f == WeightFormat::kTf32 || f == WeightFormat::kBf16 ||
         f == WeightFormat::kFp16 || f == WeightFormat::kFp8;
}

bool IsFourBit(WeightFormat f) {
  return f == WeightFormat::kInt4 || f == WeightFormat::kNf4 || f == WeightFormat::kGptqInt4 ||
         f == WeightFormat::kAwqInt4 || f == WeightFormat::kAutoRoundInt4;
}

bool IsFp4(WeightFormat f) {
  return f == WeightFormat::kMxfp4 || f == WeightFormat::kMxfp4Experts || f == WeightFormat::kNvfp4;
}

bool IsFp8(WeightFormat f) {
  return f == WeightFormat::kFp8 || f == WeightFormat::kMxfp8 || f == WeightFormat::kFp8Block128;
}

}  // namespace gpuplan
