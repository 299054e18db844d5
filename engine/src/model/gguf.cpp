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
