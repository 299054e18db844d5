// SPDX-License-Identifier: MIT
#include "model/gguf.h"

#include "model/format_specs.h"

namespace gpuplan {
namespace {

// Bits a weight of each ggml block type (ggml-common.h: bytes per block / weights per block
// x 8), from catalog/formats.json's gguf_blocks, where each block's layout is given.
struct BlockBits {
  double q2_k;
  double q3_k;
  double q4_k;
  double q5_k;
  double q6_k;
  double q8_0;
  double q4_0;
  double iq2_xs;
  double q4_1;
  double q5_0;
  double q5_1;
  double iq4_xs;
  double iq3_xxs;
  double iq3_s;
  double iq2_s;
};
const BlockBits& Blocks() {
  static const BlockBits b{
      GgufBlockBits("q2_k"),    GgufBlockBits("q3_k"),   GgufBlockBits("q4_k"),
      GgufBlockBits("q5_k"),    GgufBlockBits("q6_k"),   GgufBlockBits("q8_0"),
      GgufBlockBits("q4_0"),    GgufBlockBits("iq2_xs"), GgufBlockBits("q4_1"),
      GgufBlockBits("q5_0"),    GgufBlockBits("q5_1"),   GgufBlockBits("iq4_xs"),
      GgufBlockBits("iq3_xxs"), GgufBlockBits("iq3_s"),  GgufBlockBits("iq2_s")};
  return b;
}

// llama.cpp's use_more_bits(i, n): the first and last eighth, and every third layer between.
bool UseMoreBits(int64_t i, int64_t n) {
  return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

// The 70B rule: attn_v in Q3_K or Q4_K is bumped to Q5_K (eight heads share each KV head).
double AttnV70b(double bits, const GgufModel& m) {
  return m.type_70b && (bits == Blocks().q3_k || bits == Blocks().q4_k) ? Blocks().q5_k : bits;
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
      return Blocks().q8_0;
    case WeightFormat::kGgufQ4_0:
      // Q4_0 everywhere but the output, which llama_tensor_get_type makes Q6_K.
      return t == GgufTensor::kOutput ? Blocks().q6_k : Blocks().q4_0;
    case WeightFormat::kGgufQ6K:
      return Blocks().q6_k;
    // The legacy types: only the output is promoted (to Q6_K). Without an importance matrix
    // Q4_0 and Q5_0 keep their ffn_down; Q4_1 and Q5_1 have no rule of their own.
    case WeightFormat::kGgufQ4_1:
      return t == GgufTensor::kOutput ? Blocks().q6_k : Blocks().q4_1;
    case WeightFormat::kGgufQ5_0:
      return t == GgufTensor::kOutput ? Blocks().q6_k : Blocks().q5_0;
    case WeightFormat::kGgufQ5_1:
      return t == GgufTensor::kOutput ? Blocks().q6_k : Blocks().q5_1;
    case WeightFormat::kGgufIq4Xs:
      // IQ4_XS, made with an importance matrix as the published files are: output Q6_K,
      // attn_v Q5_K when four or more query heads share a KV head (no 70B bump: IQ4_XS is not
      // Q3_K/Q4_K). Without an imatrix the first n/8 ffn_down would be Q5_K.
      switch (t) {
        case GgufTensor::kOutput:
          return Blocks().q6_k;
        case GgufTensor::kAttnV:
          return m.gqa4 ? Blocks().q5_k : Blocks().iq4_xs;
        default:
          return Blocks().iq4_xs;
      }
    case WeightFormat::kGgufIq3Xxs:
      // IQ3_XXS with an importance matrix: output Q5_K, token_embd IQ3_S, attn_q and attn_k
      // IQ2_S, attn_output IQ3_S, attn_v Q4_K under GQA of 4 or more (Q5_K on a 70B), else
      // IQ3_XXS; ffn tensors IQ3_XXS.
      switch (t) {
        case GgufTensor::kOutput:
          return Blocks().q5_k;
        case GgufTensor::kTokenEmbd:
          return Blocks().iq3_s;
        case GgufTensor::kAttnQK:
          return Blocks().iq2_s;
        case GgufTensor::kAttnOut:
          return Blocks().iq3_s;
        case GgufTensor::kAttnV:
          return m.gqa4 ? AttnV70b(Blocks().q4_k, m) : Blocks().iq3_xxs;
        default:
          return Blocks().iq3_xxs;
      }
    case WeightFormat::kGgufQ5KM:
      switch (t) {
        case GgufTensor::kOutput:
          return Blocks().q6_k;
        case GgufTensor::kAttnV:
        case GgufTensor::kFfnDown:
          return more ? Blocks().q6_k : Blocks().q5_k;
        default:
          return Blocks().q5_k;
      }
    case WeightFormat::kGgufQ4KM:
      switch (t) {
        case GgufTensor::kOutput:
          return Blocks().q6_k;
        case GgufTensor::kAttnV:
          return more ? Blocks().q6_k : AttnV70b(Blocks().q4_k, m);
        case GgufTensor::kFfnDown:
          return more ? Blocks().q6_k : Blocks().q4_k;
        default:
          return Blocks().q4_k;
      }
    case WeightFormat::kGgufQ3KM:
      switch (t) {
        case GgufTensor::kOutput:
          return Blocks().q6_k;
        case GgufTensor::kAttnV:
          return AttnV70b(layer < 2 ? Blocks().q5_k : Blocks().q4_k, m);
        case GgufTensor::kFfnDown:
          return layer < n / 16 ? Blocks().q5_k : Blocks().q4_k;
        case GgufTensor::kAttnOut:
          return Blocks().q4_k;
        default:
          return Blocks().q3_k;
      }
    case WeightFormat::kGgufQ2K:
      switch (t) {
        case GgufTensor::kOutput:
          return Blocks().q6_k;
        case GgufTensor::kAttnV:
          return AttnV70b(m.gqa4 ? Blocks().q4_k : Blocks().q3_k, m);
        case GgufTensor::kFfnDown:
        case GgufTensor::kAttnOut:
          return Blocks().q3_k;
        default:
          return Blocks().q2_k;
      }
    case WeightFormat::kGgufIq2Xs:
      switch (t) {
        case GgufTensor::kOutput:
          return Blocks().q5_k;
        case GgufTensor::kTokenEmbd:
          return Blocks().q2_k;
        case GgufTensor::kAttnV:
          return m.gqa4 ? Blocks().q4_k : Blocks().q2_k;
        case GgufTensor::kFfnDown:
          return layer < n / 8 ? Blocks().q2_k : Blocks().iq2_xs;
        default:
          return Blocks().iq2_xs;
      }
    default:
      return 16;
  }
}

}  // namespace gpuplan
