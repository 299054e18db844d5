// SPDX-License-Identifier: MIT
#include "plan/batch_defaults.h"

#include <algorithm>
#include <cmath>

namespace gpuplan {

namespace {

// The nearest power of two: global batches are powers of two in every recipe cited below, and
// a power of two divides the data-parallel degrees a plan tries (powers of two, whole nodes).
int64_t NearestPowerOfTwo(double x) {
  if (x <= 1) return 1;
  const double e = std::round(std::log2(x));
  return static_cast<int64_t>(std::ldexp(1.0, static_cast<int>(e)));
}

}  // namespace

BatchDefault DefaultGlobalBatch(const Workload& w, double params) {
  BatchDefault b;
  const double seq = static_cast<double>(std::max<int64_t>(1, w.seq_len));
  if (w.kind == WorkloadKind::kPretrain) {
    // Tokens per step by model size. GPT-3 (Brown et al. 2020, table 2.1): 0.5M tokens for
    // 125M-760M parameters, 1M for 1.3B and 2.7B, 2M for 6.7B and 13B, 3.2M for 175B.
    // Llama 2 (Touvron et al. 2023, section 2.2): 4M tokens for 7B to 70B; Llama 3 (Dubey et
    // al. 2024, section 3.4.1): 405B starts at 4M tokens (4,096-token sequences) and grows to
    // 8M and 16M; Chinchilla 70B (Hoffmann et al. 2022, table 4) 1.5M rising to 3M.
    double tokens = 0;
    if (params < 1e9) {
      tokens = 0.5 * (1 << 20);
      b.source =
          "GPT-3's 0.5M tokens per step for models under 1B parameters (Brown et al. "
          "2020, table 2.1)";
    } else if (params < 6e9) {
      tokens = 1 << 20;
      b.source = "GPT-3's 1M tokens per step for 1.3B-2.7B models (Brown et al. 2020, table 2.1)";
    } else {
      tokens = 4 << 20;
      b.source =
          "Llama 2's 4M tokens per step for 7B-70B (Touvron et al. 2023, section 2.2), "
          "where Llama 3 405B starts too (Dubey et al. 2024, section 3.4.1)";
    }
    b.sequences = NearestPowerOfTwo(tokens / seq);
  } else {
    // Fine-tuning recipes step on a few dozen sequences: torchtune's Llama 3.1 8B LoRA config
    // (batch_size 2 x gradient_accumulation_steps 8), LLaMA-Factory's llama3 LoRA example
    // (1 per device x 8 accumulation steps per device).
    b.sequences = 16;
    b.source =
        "16 sequences per step, torchtune's Llama 3.1 8B LoRA recipe (batch_size 2 x "
        "gradient_accumulation_steps 8)";
  }
  b.tokens = static_cast<double>(b.sequences) * seq;
  return b;
}

}  // namespace gpuplan
