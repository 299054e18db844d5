// SPDX-License-Identifier: MIT
// llama.cpp's k-quant mixtures: which ggml type each tensor of a GGUF file gets.
#pragma once

#include <cstdint>

#include "model/dtype.h"

namespace gpuplan {

/// Tensor roles that llama.cpp's quantiser treats differently.
enum class GgufTensor { kTokenEmbd, kOutput, kAttnQK, kAttnV, kAttnOut, kFfnUpGate, kFfnDown };

/// Model facts the quantiser's rules look at.
struct GgufModel {
  int64_t layers = 0;
  bool gqa4 = false;      ///< heads / kv_heads >= 4
  bool type_70b = false;  ///< llama.cpp's LLM_TYPE_70B (an 80-layer Llama)
};

/// True for the GGUF formats.
bool IsGguf(WeightFormat f);

/// Bits per weight of tensor `t` of layer `layer` in GGUF format `f`, after
/// llama_tensor_get_type's mixture rules (MoE- and Falcon-specific rules left out).
double GgufBits(WeightFormat f, GgufTensor t, int64_t layer, const GgufModel& m);

}  // namespace gpuplan
