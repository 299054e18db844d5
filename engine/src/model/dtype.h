// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gpuplan {

/// Storage format of the model's weights (contract: precision.weights).
enum class WeightFormat {
  kFp32,
  kTf32,
  kBf16,
  kFp16,
  kFp8,
  kInt8,
  kInt4,
  kNf4,
  kGptqInt4,
  kAwqInt4,
  kGgufQ4KM,
  kGgufQ8_0,
  // llama.cpp's other k-quant mixtures (beyond the contract's list).
  kGgufQ2K,
  kGgufQ3KM,
  kGgufQ5KM,
  kGgufQ6K,
  kGgufIq2Xs,
  kGgufQ4_0,  ///< llama.cpp's legacy 4-bit type, the llama-bench reference format
  kGgufQ4_1,
  kGgufQ5_0,
  kGgufQ5_1,
  kGgufIq4Xs,
  kGgufIq3Xxs,
  // Block-scaled floating-point formats.
  kMxfp4,         ///< OCP MX: 32 FP4 (E2M1) elements share one E8M0 scale
  kMxfp4Experts,  ///< gpt-oss: routed experts in MXFP4, everything else in bf16
  kNvfp4,         ///< NVIDIA: 16 FP4 elements share one FP8 (E4M3) scale, one fp32 per tensor
  kMxfp8,         ///< OCP MX: 32 FP8 (E4M3) elements share one E8M0 scale
  kFp8Block128,   ///< DeepSeek-V3: FP8 weights with one fp32 scale per 128 x 128 block
  // Other checkpoint formats.
  kAutoRoundInt4,  ///< Intel AutoRound, stored in GPTQ's packing
  kExl2,           ///< ExLlamaV2: a mix of bit widths at a given average (bits_per_weight)
};

/// Element format of the KV cache (contract: precision.kv_cache).
enum class KvFormat { kFp32, kBf16, kFp16, kFp8, kInt8 };

/// Quantisation knobs for the group-scaled formats; zero means the format's default.
struct QuantOptions {
  int group_size = 0;          ///< weights per scale group (int4/gptq/awq: 128, nf4: 64)
  bool double_quant = true;    ///< nf4 only: the absmax scales are themselves 8-bit quantised
  double bits_per_weight = 0;  ///< exl2 only: the checkpoint's average bits (2.0-8.0)
};

/// Effective storage of one quantised linear weight, scales included.
struct FormatBits {
  double bits_per_weight = 16;  ///< for the tensors the format quantises
  /// Whether token embeddings and lm_head stay in 16 bits (bitsandbytes, GPTQ, AWQ and fp8
  /// checkpoints leave them unquantised; GGUF quantises them too).
  bool embeddings_16bit = false;
  double lm_head_bits = 16;
  double embedding_bits = 16;
  /// Bits of the routed experts' weights where they differ from the rest (gpt-oss MXFP4); zero
  /// means bits_per_weight.
  double expert_bits = 0;
};

/// Parses a contract name ("bf16", "gguf_q4_k_m", ...). nullopt when unknown.
std::optional<WeightFormat> ParseWeightFormat(std::string_view name);
std::optional<KvFormat> ParseKvFormat(std::string_view name);
std::string_view Name(WeightFormat f);
std::string_view Name(KvFormat f);

/// Bytes of one element for the unquantised float/int formats (fp32 4, bf16 2, fp8 1, ...);
/// for the 4-bit formats the raw 0.5 without scales.
double BytesPerElement(WeightFormat f);
double BytesPerElement(KvFormat f);

/// Storage of a weight in format f, group scales included (see dtype.cpp for each derivation).
/// GGUF mixtures give their base type here; gguf.h has the per-tensor types.
FormatBits Bits(WeightFormat f, const QuantOptions& q);

/// True for formats a trainer can update in place (fp32, tf32, bf16, fp16, fp8).
bool IsFloatTrainable(WeightFormat f);
/// True for the 4-bit formats a QLoRA base can use.
bool IsFourBit(WeightFormat f);
/// True for the FP4 formats whose matmuls run on FP4 tensor cores where the card lists the
/// format as block-scaled (mxfp4, gpt-oss's mxfp4 experts, nvfp4).
bool IsFp4(WeightFormat f);
/// True for the FP8 formats computed on FP8 units (fp8, mxfp8, fp8_block128).
bool IsFp8(WeightFormat f);

}  // namespace gpuplan
