// SPDX-License-Identifier: MIT
#include "model/gguf.h"

namespace gpuplan {
namespace {

// ggml block structs (ggml-common.h): bytes per block / weights per block x 8.
constexpr double kQ2K = 84.0 * 8 / 256;
constexpr double kQ3K = 110.0 * 8 / 256;
constexpr double kQ4K = 144.0 * 8 / 256;
constexpr double kQ5K = 176.0 * 8 / 256;
constexpr double kQ6K = 210.0 * 8 / 256;
constexpr double kQ8_0 = 34.0 * 8 / 32;
constexpr double kQ4_0 = 18.0 * 8 / 32;
constexpr double kIq2Xs = 74.0 * 8 / 256;
// block_q4_1: fp16 d and m + 16 bytes of nibbles = 20 bytes per 32 (5 bits).
constexpr double kQ4_1 = 20.0 * 8 / 32;
// block_q5_0: fp16 d + 4 bytes of fifth bits + 16 of nibbles = 22 bytes per 32 (5.5 bits).
constexpr double kQ5_0 = 22.0 * 8 / 32;
// block_q5_1: fp16 d and m + qh[4] + qs[16] = 24 bytes per 32 (6 bits).
constexpr double kQ5_1 = 24.0 * 8 / 32;
// block_iq4_xs: fp16 d + uint16 scales_h + scales_l[QK_K/64 = 4] + qs[QK_K/2 = 128]
// = 136 bytes per 256 (4.25 bits).
constexpr double kIq4Xs = 136.0 * 8 / 256;
// block_iq3_xxs: fp16 d + qs[3*QK_K/8 = 96] = 98 bytes per 256 (3.0625 bits).
constexpr double kIq3Xxs = 98.0 * 8 / 256;
// block_iq3_s: d + qs[64] + qh[8] + signs[32] + scales[4] = 110 bytes per 256 (3.4375 bits).
constexpr double kIq3S = 110.0 * 8 / 256;
// block_iq2_s: d + qs[64] + qh[8] + scales[8] = 82 bytes per 256 (2.5625 bits).
constexpr double kIq2S = 82.0 * 8 / 256;

// llama.cpp's use_more_bits(i, n): the first and last eighth, and every third layer between.
bool UseMoreBits(int64_t i, int64_t n) {
  return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

// The 70B rule: attn_v in Q3_K or Q4_K is bumped to Q5_K (eight heads share each KV head).
double AttnV70b(double bits, const GgufModel& m) {
  return m.type_70b && (bits == kQ3K || bits == kQ4K) ? kQ5K : bits;
}

}  // namespace

bool IsGguf(WeightFormat f) {
  switch (f) {
    case WeightFormat::kGgufQ2K:
    case WeightFormat::kGgufQ3KM:
    case WeightFormat::kGgufQ4KM:
    case WeightFormat::kGgufQ5KM:
    case WeightFormat::kGgufQ6K:
    case WeightFormat::kGgufQ8_0:
    case WeightFormat::kGgufIq2Xs:
    case WeightFormat::kGgufQ4_0:
    case WeightFormat::kGgufQ4_1:
    case WeightFormat::kGgufQ5_0:
    case WeightFormat::kGgufQ5_1:
    case WeightFormat::kGgufIq4Xs:
    case WeightFormat::kGgufIq3Xxs:
      return true;
    default:
      return false;
  }
}

double GgufBits(WeightFormat f, GgufTensor t, int64_t layer, const GgufModel& m) {
  const int64_t n = m.layers;
  const bool more = UseMoreBits(layer, n);
  switch (f) {
    case WeightFormat::kGgufQ8_0:
      return kQ8_0;
    case WeightFormat::kGgufQ4_0:
      // Q4_0 everywhere but the output, which llama_tensor_get_type makes Q6_K.
      return t == GgufTensor::kOutput ? kQ6K : kQ4_0;
    case WeightFormat::kGgufQ6K:
      return kQ6K;
    // The legacy types: only the output is promoted (to Q6_K). Without an importance matrix
    // Q4_0 and Q5_0 keep their ffn_down; Q4_1 and Q5_1 have no rule of their own.
    case WeightFormat::kGgufQ4_1:
      return t == GgufTensor::kOutput ? kQ6K : kQ4_1;
    case WeightFormat::kGgufQ5_0:
      return t == GgufTensor::kOutput ? kQ6K : kQ5_0;
    case WeightFormat::kGgufQ5_1:
      return t == GgufTensor::kOutput ? kQ6K : kQ5_1;
    case WeightFormat::kGgufIq4Xs:
      // IQ4_XS, made with an importance matrix as the published files are: output Q6_K,
      // attn_v Q5_K when four or more query heads share a KV head (no 70B bump: IQ4_XS is not
      // Q3_K/Q4_K). Without an imatrix the first n/8 ffn_down would be Q5_K.
      switch (t) {
        case GgufTensor::kOutput:
          return kQ6K;
        case GgufTensor::kAttnV:
          return m.gqa4 ? kQ5K : kIq4Xs;
        default:
          return kIq4Xs;
      }
    case WeightFormat::kGgufIq3Xxs:
      // IQ3_XXS with an importance matrix: output Q5_K, token_embd IQ3_S, attn_q and attn_k
      // IQ2_S, attn_output IQ3_S, attn_v Q4_K under GQA of 4 or more (Q5_K on a 70B), else
      // IQ3_XXS; ffn tensors IQ3_XXS.
      switch (t) {
        case GgufTensor::kOutput:
          return kQ5K;
        case GgufTensor::kTokenEmbd:
          return kIq3S;
        case GgufTensor::kAttnQK:
          return kIq2S;
        case GgufTensor::kAttnOut:
          return kIq3S;
        case GgufTensor::kAttnV:
          return m.gqa4 ? AttnV70b(kQ4K, m) : kIq3Xxs;
        default:
          return kIq3Xxs;
      }
    case WeightFormat::kGgufQ5KM:
      switch (t) {
        case GgufTensor::kOutput:
          return kQ6K;
        case GgufTensor::kAttnV:
        case GgufTensor::kFfnDown:
          return more ? kQ6K : kQ5K;
        default:
          return kQ5K;
      }
    case WeightFormat::kGgufQ4KM:
      switch (t) {
        case GgufTensor::kOutput:
          return kQ6K;
        case GgufTensor::kAttnV:
          return more ? kQ6K : AttnV70b(kQ4K, m);
        case GgufTensor::kFfnDown:
          return more ? kQ6K : kQ4K;
        default:
          return kQ4K;
      }
    case WeightFormat::kGgufQ3KM:
      switch (t) {
        case GgufTensor::kOutput:
          return kQ6K;
        case GgufTensor::kAttnV:
          return AttnV70b(layer < 2 ? kQ5K : kQ4K, m);
        case GgufTensor::kFfnDown:
          return layer < n / 16 ? kQ5K : kQ4K;
        case GgufTensor::kAttnOut:
          return kQ4K;
        default:
          return kQ3K;
      }
    case WeightFormat::kGgufQ2K:
      switch (t) {
        case GgufTensor::kOutput:
          return kQ6K;
        case GgufTensor::kAttnV:
          return AttnV70b(m.gqa4 ? kQ4K : kQ3K, m);
        case GgufTensor::kFfnDown:
        case GgufTensor::kAttnOut:
          return kQ3K;
        default:
          return kQ2K;
      }
    case WeightFormat::kGgufIq2Xs:
      switch (t) {
        case GgufTensor::kOutput:
          return kQ5K;
        case GgufTensor::kTokenEmbd:
          return kQ2K;
        case GgufTensor::kAttnV:
          return m.gqa4 ? kQ4K : kQ2K;
        case GgufTensor::kFfnDown:
          return layer < n / 8 ? kQ2K : kIq2Xs;
        default:
          return kIq2Xs;
      }
    default:
      return 16;
  }
}

}  // namespace gpuplan
