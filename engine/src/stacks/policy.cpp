// SPDX-License-Identifier: MIT
#include "stacks/policy.h"

#include <algorithm>
#include <cstdio>
#include <iterator>

#include "core/units.h"

namespace gpuplan {

const char* Name(OptimizerKernel k) {
  switch (k) {
    case OptimizerKernel::kFused:
      return "fused";
    case OptimizerKernel::kForLoop:
      return "for_loop";
    case OptimizerKernel::kForeach:
      break;
  }
  return "foreach";
}

std::optional<OptimizerKernel> OptimizerKernelNamed(std::string_view name) {
  for (const OptimizerKernel k :
       {OptimizerKernel::kForeach, OptimizerKernel::kFused, OptimizerKernel::kForLoop}) {
    if (name == Name(k)) return k;
  }
  return std::nullopt;
}

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

uint8_t BackendOf(const GpuSpec& g) {
  if (g.vendor == "nvidia") return kCuda;
  if (g.vendor == "amd") return kRocm;
  if (g.vendor == "huawei") return kAscend;
  if (g.vendor == "intel") return g.generation.rfind("gaudi", 0) == 0 ? kGaudi : kXpu;
  return 0;
}

std::string SupportProblem(const StackSupport& s, const char* name, const GpuSpec& g,
                           const std::string& version) {
  // Called for every setup a search checks: a stack that runs everywhere is answered at once,
  // and strings are made only for a refusal.
  if (s.backends == kAllBackends && s.min_cuda_cc <= 0 && s.rocm_generations[0] == nullptr) {
    return "";
  }
  const uint8_t b = BackendOf(g);
  const bool earlier = s.min_cuda_cc_since != nullptr && !version.empty() &&
                       VersionBelow(version, s.min_cuda_cc_since);
  const auto who = [&] {
    return std::string(name) + " " +
           (!version.empty() ? version : std::string(*s.version != 0 ? s.version : ""));
  };
  const double min_cc = earlier ? s.earlier_min_cuda_cc : s.min_cuda_cc;
  if (b != 0 && (s.backends & b) == 0) {
    const char* platform = b == kCuda     ? "CUDA"
                           : b == kRocm   ? "ROCm"
                           : b == kGaudi  ? "Intel Gaudi"
                           : b == kAscend ? "Huawei Ascend"
                                          : "Intel GPU (oneAPI)";
    return who() + " has no " + platform + " build: it does not run on " + g.name;
  }
  if (b == kCuda && min_cc > 0 && g.compute_capability > 0 &&
      g.compute_capability < min_cc - 1e-9) {
    char buf[200];
    std::snprintf(buf, sizeof buf, " needs CUDA compute capability %.1f or newer; %s has %.1f",
                  min_cc, g.name.c_str(), g.compute_capability);
    return who() + buf;
  }
  if (b == kRocm && s.rocm_generations[0] != nullptr) {
    const auto& gens = s.rocm_generations;
    if (std::any_of(gens.begin(), gens.end(),
                    [&g](const char* gen) { return gen != nullptr && g.generation == gen; })) {
      return "";
    }
    std::string list;
    for (const char* gen : s.rocm_generations) {
      if (gen != nullptr) list += (list.empty() ? "" : ", ") + std::string(gen);
    }
    return who() + "'s ROCm build supports " + list + " cards; " + g.name + " is " + g.generation;
  }
  return "";
}

const StackSupport& BitsandbytesSupport() {
  static const StackSupport s = [] {
    StackSupport b;
    b.backends = kCuda | kRocm | kGaudi | kXpu;
    b.min_cuda_cc = 6.0;
    b.version = "0.50";
    b.rocm_note_code = "bitsandbytes_rocm_from_0_50";
    b.rocm_note =
        "bitsandbytes runs on ROCm officially from 0.50 (ROCm wheels since 0.49; the 4-bit "
        "path for CDNA was completed in 0.50.0): pin bitsandbytes>=0.50";
    b.plugin_note_code = "bitsandbytes_gaudi_from_0_48";
    b.plugin_note = "bitsandbytes lists Intel Gaudi as supported from 0.48.1";
    b.source =
        "bitsandbytes installation docs v0.50.0 and v0.48.1 (huggingface.co/docs/bitsandbytes): "
        "CUDA compute capability 6.0+ for NF4/FP4 and the 8-bit optimizers (Maxwell dropped in "
        "0.49.0, PR #1806), AMD ROCm, Intel XPU and Gaudi; no Ascend backend";
    return b;
  }();
  return s;
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
    if (p.ep > 1 && !s.engine.expert_parallel) {
      return std::string(s.name) + " does not spread a model's experts over GPUs: ep must be 1";
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
