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
};

/// Element format of the KV cache (contract: precision.kv_cache).
enum class KvFormat { kFp32, kBf16, kFp16, kFp8, kInt8 };

/// Quantisation knobs for the group-scaled formats; zero means the format's default.
struct QuantOptions {
  int group_size = 0;        ///< weights per scale group (int4/gptq/awq: 128, nf4: 64)
  bool double_quant = true;  ///< nf4 only: the absmax scales are themselves 8-bit quantised
};

/// Effective storage of one quantised linear weight, scales included.
struct FormatBits {
  double bits_per_weight = 16;  ///< for the tensors the format quantises
  /// Whether token embeddings and lm_head stay in 16 bits (bitsandbytes, GPTQ, AWQ and fp8
  /// checkpoints leave them unquantised; GGUF quantises them too).
  bool embeddings_16bit = false;
  double lm_head_bits = 16;
  double embedding_bits = 16;
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

}  // namespace gpuplan
