// SPDX-License-Identifier: MIT
// The number formats as data (catalog/formats.json, compiled in by cmake/EmbedFormats.cmake):
// each weight format's storage and flags, each KV-cache format's bytes, GGUF's block types.
// dtype.cpp and gguf.cpp read these; the formulas that combine them live there.
#pragma once

#include <string_view>
#include <vector>

namespace gpuplan {

/// A weight format: bits a weight = element_bits + group_bits / group (+ dq_group_bits / group
/// + dq_super_bits / (group x dq_super_groups) with double quantisation), group the request's
/// quant.group_size unless `group_fixed`, else `default_group`.
struct WeightFormatSpec {
  const char* name;
  double storage_bytes;  ///< one element without scales (fp32 4, bf16 2, fp8 1, 4-bit 0.5)
  double element_bits;
  double group_bits;
  double default_group;
  double dq_group_bits;
  double dq_super_bits;
  double dq_super_groups;
  bool group_fixed;        ///< the format's own block size, whatever the request says
  bool bits_from_request;  ///< quant.bits_per_weight gives the bits (exl2), element_bits if not
  bool embeddings_16bit;   ///< token embeddings and lm_head stay in 16 bits
  double embedding_bits;   ///< where they do not
  double lm_head_bits;
  double expert_bits;  ///< routed experts' bits where they differ (gpt-oss); 0: the same
  bool float_trainable;
  bool four_bit;
  bool fp4;
  bool fp8;
  bool gguf;  ///< a GGUF file type: the bits are the per-tensor mixture's (gguf.cpp)
};

struct KvFormatSpec {
  const char* name;
  double bytes;
};

/// A ggml block type: `bytes` hold `weights` weights, scales included.
struct GgufBlock {
  const char* type;
  double bytes;
  double weights;
};

const std::vector<WeightFormatSpec>& WeightFormatSpecs();
const std::vector<KvFormatSpec>& KvFormatSpecs();
const std::vector<GgufBlock>& GgufBlocks();

/// The spec named `name`; null when there is none.
const WeightFormatSpec* FindWeightFormatSpec(std::string_view name);
/// Bits a weight of the block type `type` ("q4_k"): bytes x 8 / weights; 0 when unknown.
double GgufBlockBits(std::string_view type);

}  // namespace gpuplan
