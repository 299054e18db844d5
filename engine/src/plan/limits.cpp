// SPDX-License-Identifier: MIT
#include "plan/limits.h"

#include <algorithm>

#include "physics/estimate.h"

namespace gpuplan {
namespace {

constexpr int64_t kMaxBatch = int64_t{1} << 20;
constexpr int64_t kMaxTokens = int64_t{1} << 24;  // 16M tokens: beyond every model's context

// Serving: fits and meets the targets (offline: fits).
bool Serves(const Setup& q) {
  const Estimate e = EstimateSetup(q, /*with_levers=*/false);
  return e.fits && e.serving.meets_targets;
}

}  // namespace

Limits FindLimits(const Setup& r) {
  Limits l;
  const int64_t model_ctx = r.model.max_context;
  const ParamCounts counts = CountParams(r.model);
  if (r.workload.IsTraining()) {
    Setup q = r;
    q.workload.global_batch = 0;  // the batch per step follows the micro-batch here
    l.max_micro_batch = LargestTrue(kMaxBatch, [&](int64_t mb) {
      q.workload.micro_batch = mb;
      return CheckFit(q, counts).fits;
    });
    q = r;
    q.workload.global_batch = 0;
    const int64_t cap = model_ctx > 0 ? model_ctx : kMaxTokens;
    l.max_seq_len = LargestTrue(cap, [&](int64_t s) {
      q.workload.seq_len = s;
      return CheckFit(q, counts).fits;
    });
    l.seq_len_at_model_limit = model_ctx > 0 && l.max_seq_len == model_ctx;
    return l;
  }
  const int64_t output = r.workload.output_tokens;
  l.max_concurrency = EstimateSetup(r, /*with_levers=*/false).serving.max_concurrency;
  // The prompt grows, the output stays: the context a sequence can reach.
  const auto context = [&](int64_t concurrency, bool* at_limit) {
    Setup q = r;
    const int64_t cap = (model_ctx > 0 ? model_ctx : kMaxTokens) - output;
    const int64_t prompt = LargestTrue(cap, [&](int64_t p) {
      q.workload.prompt_tokens = p;
      q.workload.SetConcurrency(concurrency);
      return Serves(q);
    });
    *at_limit = model_ctx > 0 && prompt == cap;
    return prompt > 0 ? prompt + output : 0;
  };
  l.max_context_tokens = context(r.workload.concurrency, &l.context_at_model_limit);
  l.max_context_alone = context(1, &l.context_alone_at_model_limit);
  return l;
}

}  // namespace gpuplan
