// SPDX-License-Identifier: MIT
#include "model/dtype.h"

#include <array>
#include <utility>

#include "model/format_specs.h"
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

namespace {

// Each format's spec (catalog/formats.json), found once by its name and then by the enum's
// value: the memory model asks for a format's bits at every check of a plan.
const WeightFormatSpec& Spec(WeightFormat f) {
  static const std::array<const WeightFormatSpec*, kWeightNames.size()> specs = [] {
    std::array<const WeightFormatSpec*, kWeightNames.size()> out{};
    for (const auto& [format, name] : kWeightNames) {
      const auto i = static_cast<size_t>(format);
      if (i < out.size()) out[i] = FindWeightFormatSpec(name);
    }
    return out;
  }();
  const auto i = static_cast<size_t>(f);
  // Every name has a spec (tests/unit/model/dtype_test.cpp); bf16's stands in otherwise.
  if (i < specs.size() && specs[i] != nullptr) return *specs[i];
  return *FindWeightFormatSpec("bf16");
}

}  // namespace

const WeightFormatSpec* FindWeightFormatSpec(std::string_view name) {
  for (const WeightFormatSpec& s : WeightFormatSpecs()) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

double GgufBlockBits(std::string_view type) {
  for (const GgufBlock& b : GgufBlocks()) {
    if (type == b.type) return b.bytes * 8 / b.weights;
  }
  return 0;
}

double BytesPerElement(WeightFormat f) { return Spec(f).storage_bytes; }

double BytesPerElement(KvFormat f) {
  // By the enum's value, found once by name (a KV cache's bytes are read at every check).
  static const std::array<double, kKvNames.size()> bytes = [] {
    std::array<double, kKvNames.size()> out{};
    for (const auto& [format, name] : kKvNames) {
      for (const KvFormatSpec& k : KvFormatSpecs()) {
        if (name == k.name && static_cast<size_t>(format) < out.size()) {
          out[static_cast<size_t>(format)] = k.bytes;
        }
      }
    }
    return out;
  }();
  const auto i = static_cast<size_t>(f);
  return i < bytes.size() && bytes[i] > 0 ? bytes[i] : 2;
}

FormatBits Bits(WeightFormat f, const QuantOptions& q) {
  const WeightFormatSpec& s = Spec(f);
  FormatBits b;
  b.embeddings_16bit = s.embeddings_16bit;
  b.embedding_bits = s.embedding_bits;
  b.lm_head_bits = s.lm_head_bits;
  b.expert_bits = s.expert_bits;
  if (s.gguf) {
    // GGUF: every tensor, embeddings and output included, is quantised; the per-tensor
    // mixture is in gguf.cpp. Here the body's type for the round-number views.
    const GgufModel any{32, false, false};
    b.bits_per_weight = GgufBits(f, GgufTensor::kAttnQK, 16, any);
    b.embedding_bits = GgufBits(f, GgufTensor::kTokenEmbd, 0, any);
    b.lm_head_bits = GgufBits(f, GgufTensor::kOutput, 0, any);
    return b;
  }
  if (s.bits_from_request) {
    b.bits_per_weight = q.bits_per_weight > 0 ? q.bits_per_weight : s.element_bits;
    return b;
  }
  b.bits_per_weight = s.element_bits;
  if (s.group_bits > 0) {
    // Scales (and zeros) per group of weights; double quantisation stores the scales in fewer
    // bits with one constant per super-group (QLoRA).
    const double g = !s.group_fixed && q.group_size > 0 ? q.group_size : s.default_group;
    b.bits_per_weight =
        s.dq_group_bits > 0 && q.double_quant
            ? s.element_bits + s.dq_group_bits / g + s.dq_super_bits / (g * s.dq_super_groups)
            : s.element_bits + s.group_bits / g;
  }
  return b;
}

bool IsFloatTrainable(WeightFormat f) { return Spec(f).float_trainable; }

bool IsFourBit(WeightFormat f) { return Spec(f).four_bit; }

bool IsFp4(WeightFormat f) { return Spec(f).fp4; }

bool IsFp8(WeightFormat f) { return Spec(f).fp8; }

}  // namespace gpuplan
