// SPDX-License-Identifier: MIT
// Little's law sizing: a replica holding c sequences, each in flight for
// W(c) = TTFT + output x TPOT'(c), serves c / W(c) requests per second; TPOT' is the decode
// step stretched by the prefills interleaved with it (chunked prefill takes the GPU for
// the prefill share of its time). The replica's concurrency is the largest that fits with
// the headroom and meets the TPOT target; enough replicas carry the rate.
#include "plan/traffic.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "physics/estimate.h"
#include "plan/limits.h"
#include "plan/planner.h"

namespace gpuplan {
namespace {

int64_t Tokens(double v) { return std::max<int64_t>(1, static_cast<int64_t>(std::llround(v))); }

struct Load {
  double tpot = 0;   ///< stretched by prefill
  double share = 0;  ///< prefill share of the replica's time
  double per_s = 0;  ///< requests per second at this concurrency
  bool ok = false;
};

// The replica's steady state at concurrency c, where each request spends ttft_mean of the
// replica's time prefilling.
Load LoadAt(const Setup& replica, int64_t c, double ttft_mean, double output_mean,
            double tpot_target) {
  Setup q = replica;
  q.workload.SetConcurrency(c);
  const Estimate e = EstimateSetup(q, /*with_levers=*/false);
  Load l;
  // Beyond the engine's running-sequence cap the rest queue (FitsAt applies it too).
  if (!e.fits || (e.framework.max_seqs > 0 && c > e.framework.max_seqs)) return l;
  const double tpot = e.serving.at_request.tpot_s;
  // Requests/s r with c = r W and W = ttft + output x tpot / (1 - r x ttft):
  // r - c / W(r) rises with r, so its root is found by bisection; the prefill share is
  // kept below 0.95 (beyond it the replica only prefills).
  const double cd = static_cast<double>(c);
  const double cap = ttft_mean > 0 ? 0.95 / ttft_mean : 1e12;
  const auto gap = [&](double r) {
    return r - cd / (ttft_mean + output_mean * tpot / (1 - r * ttft_mean));
  };
  double r = cap;
  if (gap(cap) > 0) {
    double lo = 0;
    double hi = cap;
    for (int i = 0; i < 100; ++i) {
      const double mid = 0.5 * (lo + hi);
      (gap(mid) > 0 ? hi : lo) = mid;
    }
    r = lo;
  }
  l.share = r * ttft_mean;
  l.tpot = tpot / (1 - l.share);
  l.per_s = r;
  l.ok = l.share < 0.95 && (tpot_target <= 0 || l.tpot <= tpot_target);
  return l;
}

// Replicas, concurrency and cost on one card type at the plan's replica; `why` says why the
// card cannot carry the traffic when it returns nothing.
std::optional<TrafficOption> SizeCard(const Question& base, const Traffic& t, const GpuSpec& g,
                                      const Question& mean, std::string* why) {
  const double uncached = 1 - t.prefix_cache_hit;
  const PlanResult plan = Plan(mean, {g});
  if (plan.recommendations.empty()) {
    *why =
        plan.rejected.empty() ? "no setup serves the mean request" : plan.rejected.front().reason;
    return std::nullopt;
  }
  Setup replica = plan.recommendations.front().request;
  // The tail sequence must fit alone.
  Setup tail = replica;
  tail.workload.prompt_tokens = Tokens(t.prompt.p95);
  tail.workload.output_tokens = Tokens(t.output.p95);
  tail.workload.SetConcurrency(1);
  if (!EstimateSetup(tail, /*with_levers=*/false).fits) {
    *why = "a p95-length sequence does not fit one replica";
    return std::nullopt;
  }
  // TTFT of the uncached part of a mean and of a p95 prompt.
  const auto ttft = [&](double prompt) {
    Setup q = replica;
    q.workload.prompt_tokens = Tokens(prompt * uncached);
    q.workload.SetConcurrency(1);
    return EstimateSetup(q, /*with_levers=*/false).serving.at_request.ttft_s;
  };
  const double ttft_mean = ttft(t.prompt.mean);
  const double ttft_p95 = ttft(t.prompt.p95);
  const double tpot_target = base.setup.targets.tpot_ms / 1e3;
  const double ttft_target = base.setup.targets.ttft_ms / 1e3;
  if (ttft_target > 0 && ttft_p95 > ttft_target) {
    *why = "a p95 prompt's prefill alone misses the TTFT target";
    return std::nullopt;
  }
  const auto load = [&](int64_t c) {
    return LoadAt(replica, c, ttft_mean, t.output.mean, tpot_target);
  };
  const int64_t c_max = LargestTrue(int64_t{1} << 16, [&](int64_t c) { return load(c).ok; });
  if (c_max == 0) {
    *why = "not even one sequence meets the TPOT target";
    return std::nullopt;
  }
  const Load at = load(c_max);
  TrafficOption o;
  o.gpu_id = g.id;
  o.gpu_name = g.name;
  o.gpus_per_replica = replica.parallel.gpus;
  o.replicas = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(t.requests_per_s / at.per_s)));
  // Spread over the replicas, each runs below its limit: the concurrency that carries its
  // share of the rate.
  const double per_replica = t.requests_per_s / static_cast<double>(o.replicas);
  o.concurrency_per_replica = std::max<int64_t>(
      1, LargestTrue(c_max, [&](int64_t c) { return c == 1 || load(c - 1).per_s < per_replica; }));
  const Load run = load(o.concurrency_per_replica);
  o.requests_per_s_per_replica = per_replica;
  o.tpot_s = run.tpot;
  o.prefill_share = run.share;
  o.ttft_p95_s = ttft_p95;
  o.ttft_mean_s = ttft_mean;
  o.cards = o.replicas * o.gpus_per_replica;
  replica.workload.SetConcurrency(o.concurrency_per_replica);
  o.replica = replica;
  const double price = base.setup.pricing.usd_per_gpu_hour >= 0
                           ? base.setup.pricing.usd_per_gpu_hour
                           : g.usd_per_hour.value_or(-1);
  if (price > 0) {
    o.usd_per_hour = price * static_cast<double>(o.cards);
    const double per_hour = t.requests_per_s * 3600;
    o.usd_per_million_output_tokens = o.usd_per_hour / (per_hour * t.output.mean) * 1e6;
    o.usd_per_million_tokens = o.usd_per_hour / (per_hour * (t.prompt.mean + t.output.mean)) * 1e6;
  }
  return o;
}

}  // namespace

TrafficResult SizeTraffic(const Question& base, const Traffic& t,
                          const std::vector<GpuSpec>& cards) {
  TrafficResult out;
  Question mean = base;
  mean.setup.workload.prompt_tokens = Tokens(t.prompt.mean);
  mean.setup.workload.output_tokens = Tokens(t.output.mean);
  mean.setup.workload.concurrency = 1;
  mean.setup.workload.SetConcurrency(1);
  for (const GpuSpec& g : cards) {
    std::string why;
    if (std::optional<TrafficOption> o = SizeCard(base, t, g, mean, &why)) {
      out.options.push_back(std::move(*o));
    } else {
      out.rejected.push_back({g.id, why});
    }
  }
  std::stable_sort(out.options.begin(), out.options.end(),
                   [](const TrafficOption& a, const TrafficOption& b) {
                     const double inf = std::numeric_limits<double>::infinity();
                     const double ca = a.usd_per_hour >= 0 ? a.usd_per_hour : inf;
                     const double cb = b.usd_per_hour >= 0 ? b.usd_per_hour : inf;
                     return ca != cb ? ca < cb : a.cards < b.cards;
                   });
  return out;
}

}  // namespace gpuplan
