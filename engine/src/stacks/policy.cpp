// SPDX-License-Identifier: MIT
#include "stacks/policy.h"

#include <algorithm>
#include <iterator>

#include "core/units.h"

namespace gpuplan {

ServingDefaults DefaultsOn(const ServingPolicy& s, const GpuSpec& g, const Parallel& p) {
  ServingDefaults d;
  const double gib = g.memory_bytes / kGiB;
  const bool first_tier =
      s.first_tier_generation != nullptr && g.generation == s.first_tier_generation;
  const auto tier = first_tier
                        ? s.caps.begin()
                        : std::find_if(s.caps.begin(), s.caps.end(),
                                       [gib](const CapTier& t) { return gib < t.below_gib; });
  const CapTier& c = tier != s.caps.end() ? *tier : s.caps.back();
  d.max_batched_tokens = c.max_batched_tokens;
  d.max_seqs = c.max_seqs;
  const ReserveRule& r = s.reserve;
  if (s.kv_budget == KvBudget::kCardMinusReserve) {
    const int64_t graph_batch = p.tp >= s.wide_tp ? c.graph_batch_wide : c.graph_batch;
    double reserve = r.base_bytes +
                     r.per_chunk_token_bytes * static_cast<double>(std::max<int64_t>(
                                                   d.max_batched_tokens, r.min_chunk_tokens)) +
                     r.per_graph_batch_bytes * static_cast<double>(graph_batch) +
                     static_cast<double>(p.tp * p.pp) * r.per_model_rank_bytes;
    if (g.memory_bytes > r.floor_above_bytes) reserve = std::max(reserve, r.floor_bytes);
    d.reserve_bytes = reserve;
  }
  return d;
}

namespace {

// The number at the start of the dotted part that begins at *at, moving *at past the part's
// dot; digits after a non-digit are not part of it ("5rc1" is 5).
long NextVersionPart(const std::string& v, size_t* at) {
  long n = 0;
  bool digits = true;
  for (; *at < v.size() && v[*at] != '.'; ++*at) {
    digits = digits && v[*at] >= '0' && v[*at] <= '9';
    if (digits) n = n * 10 + (v[*at] - '0');
  }
  if (*at < v.size()) ++*at;
  return n;
}

}  // namespace

bool VersionBelow(const std::string& a, const std::string& b) {
  // Part by part as numbers; a missing part is 0 ("0.8.5rc1" is 0.8.5).
  size_t i = 0;
  size_t j = 0;
  while (i < a.size() || j < b.size()) {
    const long x = NextVersionPart(a, &i);
    const long y = NextVersionPart(b, &j);
    if (x != y) return x < y;
  }
  return false;
}

ServingPolicy AtVersion(const ServingPolicy& s, const std::string& version) {
  ServingPolicy p = s;
  if (version.empty()) return p;
  for (const ServingPolicy::Older& o : s.older) {
    if (o.before == nullptr || !VersionBelow(version, o.before)) continue;
    if (o.memory_fraction > 0) p.memory_fraction = o.memory_fraction;
    p.graphs_in_budget = o.graphs_in_budget;
    p.whole_prompts = o.whole_prompts;
    p.non_torch_bytes = o.non_torch_bytes;
    break;
  }
  return p;
}

std::vector<std::string> StackProfile::Sources() const {
  std::vector<std::string> out;
  std::copy_if(sources.begin(), sources.end(), std::back_inserter(out),
               [](const char* s) { return s != nullptr; });
  return out;
}

const StackProfile& PlainPytorch() {
  static const StackProfile plain;
  return plain;
}

std::string LayoutProblem(const StackProfile& s, const Parallel& p) {
  if (s.serving) {
    if (s.engine.layer_split && p.tp > 1) {
      return std::string(s.name) + " splits a model over GPUs by layers: use pp, not tp";
    }
    return "";
  }
  if (!s.layouts.model_parallel && (p.tp > 1 || p.pp > 1 || p.cp > 1)) {
    return std::string(s.name) + " runs data parallel only here: tp, pp and cp must be 1";
  }
  if (p.zero > s.layouts.max_zero) {
    return std::string(s.name) + " offers ZeRO stages up to " + std::to_string(s.layouts.max_zero);
  }
  return "";
}

}  // namespace gpuplan
