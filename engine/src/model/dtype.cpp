// SPDX-License-Identifier: MIT
#include "model/dtype.h"

#include <array>
#include <utility>

#include "model/gguf.h"

namespace gpuplan {
namespace {

constexpr std::array<std::pair<WeightFormat, std::string_view>, 18> kWeightNames{{
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
    case WeightFormat::kInt8:
    case WeightFormat::kGgufQ8_0:
    case WeightFormat::kGgufQ6K:
    case WeightFormat::kGgufQ5KM:
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
    case WeightFormat::kAwqInt4: {
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
         f == WeightFormat::kAwqInt4;
}

}  // namespace gpuplan
