// SPDX-License-Identifier: MIT
// One fixed setup's estimate: the memory model's parts, whether they fit, then the
// training or serving figures, power, cost, bands and levers (estimate_parts.h has the pieces).
#include "physics/estimate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include "core/units.h"
#include "physics/error_bands.h"
#include "physics/estimate_parts.h"
#include "physics/stack_figures.h"

namespace gpuplan {
namespace {

using text::D;

// A serving engine's prefill chunk depends on the card: the reader leaves 0 for it.
bool NeedsEngineDefaults(const Setup& r) {
  return r.stack->serving && !r.workload.IsTraining() && r.workload.prefill_chunk_limit == 0;
}

Setup WithEngineDefaults(const Setup& r) {
  Setup q = r;
  q.workload.prefill_chunk_limit = EngineDefaults(r, SafeLayout(r.parallel)).max_batched_tokens;
  q.workload.SetConcurrency(q.workload.concurrency);
  return q;
}

// A setup that ran on this card short of the planning headroom: it fits as measured, and the
// answer says how much was left.
Note MeasuredHeadroomShort(const Setup& r, const Estimate& e) {
  const double spare = e.measured_spare_bytes;
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "ran on this card as measured with %.1f GiB (%.0f%%) to spare, short of the "
                "%.0f%% planning headroom: it fits as measured, but a longer sequence, a larger "
                "batch or fragmentation can tip it over",
                spare / kGiB, 100 * spare / e.capacity_bytes, 100 * r.headroom);
  return Note{"measured_headroom_short",
              {{"spare_bytes", spare},
               {"spare_fraction", spare / e.capacity_bytes},
               {"headroom", r.headroom}},
              buf,
              "/memory/total_bytes"};
}

}  // namespace

std::string Gib(double bytes) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / kGiB);
  return buf;
}

// A layout whose data-parallel degree would be 0 (gpus < tp x pp x cp) is infeasible; keep its
// arithmetic defined so the memory figures still come out.
Parallel SafeLayout(const Parallel& p) {
  Parallel safe = p;
  if (safe.Dp() < 1) safe.gpus = safe.tp * safe.pp * safe.cp;
  return safe;
}

namespace {

// The memory model's input for a setup: its layout kept computable.
template <typename Model>
auto WithMemoryInput(const Setup& r, const ParamCounts& c, bool with_detail, Model model) {
  const Parallel safe = SafeLayout(r.parallel);
  RuntimeOptions runtime = r.runtime;
  if (r.calibration.allocator_slack >= 0) runtime.allocator_slack = r.calibration.allocator_slack;
  // A serving rank holds the KV cache and activations of its own share of the sequences; the
  // planner's many probes copy the workload only then.
  Workload rank;
  const Workload* work = &r.workload;
  if (RankConcurrency(r.workload, safe) != r.workload.concurrency) {
    rank = r.workload;
    rank.SetConcurrency(RankConcurrency(r.workload, safe));
    work = &rank;
  }
  const MemoryInput in{
      r.model, c,       *work,      r.precision, r.optimizer, r.techniques,        safe,
      r.gpu,   runtime, r.training, r.serving,   with_detail, r.calibration.memory};
  return model(in);
}

}  // namespace

MemoryResult MemoryOf(const Setup& r, const ParamCounts& c, bool with_detail) {
  return WithMemoryInput(r, c, with_detail, EstimateMemory);
}

double TrainingFloorWithHeadroom(const Setup& r, const ParamCounts& c) {
  // A run measured on this card may fit short of the headroom (MeasuredSpare): the floor only
  // skips setups, so it keeps none from being checked.
  const bool measured_here =
      r.calibration.measured_peak_bytes > 0 && r.calibration.measured_on == r.gpu.id;
  return WithMemoryInput(r, c, false, TrainingMemoryFloor) * (1 + (measured_here ? 0 : r.headroom));
}

std::string MemoryFingerprint(const Setup& r, const ParamCounts& c) {
  if (NeedsEngineDefaults(r)) return MemoryFingerprint(WithEngineDefaults(r), c);
  Setup plain = r;
  plain.calibration = CalibrationFactors{};
  const MemoryBreakdown b = MemoryOf(plain, c, /*with_detail=*/false).per_gpu;
  // FNV-1a over each part in whole MiB: rounding keeps the last bits of a sum from telling two
  // equal setups apart.
  uint64_t h = 14695981039346656037ULL;
  for (const double part :
       {b.weights, b.gradients, b.optimizer_states, b.activations, b.kv_cache, b.buffers}) {
    auto mib = static_cast<uint64_t>(std::llround(part / 1048576.0));
    for (int i = 0; i < 8; ++i, mib >>= 8) {
      h = (h ^ (mib & 0xffU)) * 1099511628211ULL;
    }
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::optional<double> MeasuredSpare(const Setup& r, const ParamCounts& c) {
  const CalibrationFactors& f = r.calibration;
  const double cap = r.gpu.CapacityBytes();
  if (f.measured_peak_bytes <= 0 || f.measured_peak_bytes > cap || f.measured_on != r.gpu.id ||
      f.measured_setup.empty() || MemoryFingerprint(r, c) != f.measured_setup) {
    return std::nullopt;
  }
  return cap - f.measured_peak_bytes;
}

double HostRam(const Setup& r, const Estimate& e, Estimate* out) {
  // Practitioners' rules of thumb for host memory per node, plus what offloading keeps there.
  const double per_node = D(e.gpus_per_node_used);
  const double vram = r.gpu.memory_bytes;
  double rule = 0;
  std::string which;
  if (!r.workload.IsTraining()) {
    rule = 0.5 * vram * per_node;
    which = "serving: 0.5 x VRAM";
  } else if (r.parallel.gpus == 1) {
    rule = 1.5 * vram;
    which = "single-card training: 1.5 x VRAM";
  } else {
    rule = 0.8 * vram * per_node;
    which = "multi-card training: 0.8 x total VRAM of the node";
  }
  // Data: dataset x preprocessing expansion (1.5-3, 2 taken) + at least 20% system overhead.
  const double data = r.host.dataset_bytes * 2.0 * 1.2;
  const double offloaded = e.memory.offloaded_bytes_per_gpu * per_node;
  const double total = std::max(rule, data) + offloaded;
  if (!out->with_explain) return total;
  out->explain["/memory/host_ram_bytes"] = {
      "max(rule of thumb, dataset x 2 expansion x 1.2 system overhead) + offloaded state of the "
      "node's GPUs",
      {{"rule_bytes", rule},
       {"dataset_term_bytes", data},
       {"offloaded_bytes", offloaded},
       {"gpus_in_node", per_node}},
      {"rule of thumb used: " + which}};
  return total;
}

// Whether the workload needs bitsandbytes: QLoRA's 4-bit base, the 8-bit optimizers.
bool NeedsBitsandbytes(const Setup& r) {
  const bool optimizer8 =
      r.optimizer == Optimizer::kAdamW8bit || r.optimizer == Optimizer::kPagedAdamW8bit;
  return (r.workload.kind == WorkloadKind::kQlora && r.precision.weights == WeightFormat::kNf4) ||
         (optimizer8 && r.workload.IsTraining());
}

std::optional<Note> CardProblem(const Setup& r, const GpuSpec& g) {
  if (!g.inference_only) {
    static const std::string kNoVersion;  // training stacks have no release to check
    const StackProfile& s = (*r.stack);
    std::string why = SupportProblem(s.support, *s.name != 0 ? s.name : "PyTorch", g,
                                     s.serving ? r.engine_version : kNoVersion);
    if (why.empty() && NeedsBitsandbytes(r)) {
      why = SupportProblem(BitsandbytesSupport(), "bitsandbytes", g);
    }
    if (why.empty()) return std::nullopt;
    return Note{"stack_unsupported_on_card",
                {{"compute_capability", g.compute_capability}},
                why,
                *s.id != 0 ? "/framework" : "/gpu"};
  }
  if (r.workload.IsTraining()) {
    return Note{"inference_only_card",
                {},
                g.name +
                    " is an inference-only card: the training stacks planned here need CUDA or "
                    "ROCm; train on another card",
                "/gpu"};
  }
  const StackProfile& s = (*r.stack);
  if (s.needs_cuda_or_rocm) {
    return Note{"engine_unsupported_on_card",
                {},
                std::string(s.name) +
                    " as profiled here is its CUDA or ROCm build: it does not run on the "
                    "inference-only " +
                    g.name + "; serve with llama_cpp or no framework",
                "/framework"};
  }
  return std::nullopt;
}

FitCheck CheckFit(const Setup& r, const ParamCounts& c) {
  if (NeedsEngineDefaults(r)) return CheckFit(WithEngineDefaults(r), c);
  FitCheck f;
  f.layout_ok = CheckLayout(r.model, r.parallel).empty() &&
                LayoutProblem((*r.stack), r.parallel).empty() && !CardProblem(r, r.gpu);
  const MemoryBreakdown b = MemoryOf(r, c, /*with_detail=*/false).per_gpu;
  f.total_bytes = b.Total();
  f.total_with_headroom_bytes = f.total_bytes * (1 + r.headroom);
  f.fits = f.layout_ok && (FitsCard(r, b) || MeasuredSpare(r, c));
  return f;
}

Estimate EstimateSetup(const Setup& r, bool with_levers, Description description) {
  if (NeedsEngineDefaults(r)) return EstimateSetup(WithEngineDefaults(r), with_levers, description);
  Estimate e;
  const bool describe = description != Description::kFigures;
  e.describe = describe;
  e.with_explain = description == Description::kFull;
  e.params = CountParams(r.model);
  e.infeasible = CheckLayout(r.model, r.parallel);
  if (auto card = CardProblem(r, r.gpu))
    e.infeasible.insert(e.infeasible.begin(), std::move(*card));
  const std::string problem = LayoutProblem((*r.stack), r.parallel);
  if (!problem.empty()) e.infeasible.push_back(Note{"framework_layout", {}, problem, "/parallel"});
  e.memory = MemoryOf(r, e.params, e.with_explain);
  e.capacity_bytes = r.gpu.CapacityBytes();
  e.total_bytes = e.memory.per_gpu.Total();
  e.total_with_headroom_bytes = e.total_bytes * (1 + r.headroom);
  e.fits = e.infeasible.empty() && FitsCard(r, e.memory.per_gpu);
  if (e.infeasible.empty()) {
    if (const auto spare = MeasuredSpare(r, e.params)) {
      e.measured_spare_bytes = *spare;
      e.fits = true;
    }
  }
  // A KV cache beyond an engine's pool is its own reason (AddFramework,
  // exceeds_engine_kv_pool); a pool of nothing is the card's.
  const double pool = KvPool(r, e.memory.per_gpu);
  const bool pool_short = pool > 0 && e.memory.per_gpu.kv_cache > pool;
  if (e.infeasible.empty() && !e.fits && !pool_short) {
    e.infeasible.push_back(
        Note{"exceeds_memory",
             {{"need_bytes", e.total_with_headroom_bytes}, {"capacity_bytes", e.capacity_bytes}},
             "needs " + Gib(e.total_with_headroom_bytes) + " per GPU with " +
                 std::to_string(static_cast<int>(std::lround(r.headroom * 100))) + "% headroom; " +
                 r.gpu.name + " has " + Gib(e.capacity_bytes)});
  }
  AddFramework(r, &e);
  e.gpus_per_node_used = std::max<int64_t>(1, std::min(r.parallel.gpus, r.gpu.gpus_per_node));
  if (describe) {
    AddWarnings(r, e.params, &e);
    if (e.measured_spare_bytes >= 0 && !FitsCard(r, e.memory.per_gpu)) {
      e.warnings.push_back(MeasuredHeadroomShort(r, e));
    }
    AddSupplyWarnings(r, &e);
    for (const auto& w : e.memory.warnings) e.warnings.push_back(w);
    if (e.with_explain) ExplainMemory(r, e.params, &e);
  }
  e.host_ram_bytes = HostRam(r, e, &e);
  if (r.host.ram_bytes_per_node > 0 && e.host_ram_bytes > r.host.ram_bytes_per_node) {
    e.warnings.push_back(
        Note{"host_ram_short",
             {{"need_bytes", e.host_ram_bytes}, {"have_bytes", r.host.ram_bytes_per_node}},
             "host RAM per node (" + Gib(r.host.ram_bytes_per_node) + ") is below the " +
                 Gib(e.host_ram_bytes) + " this setup wants: data loading will starve the GPUs"});
  }
  AddPower(r, &e);
  if (r.workload.IsTraining()) {
    AddTraining(r, &e);
  } else {
    AddServing(r, &e);
  }
  AddCost(r, &e);
  if (describe) {
    AddCalibration(r, &e);
    AddBands(r, &e);
  }
  if (with_levers) {
    e.levers = MemoryLevers(r, e.total_bytes);
    if (!e.fits && e.infeasible.size() == 1 && e.infeasible[0].code == "exceeds_memory") {
      const auto fix =
          std::find_if(e.levers.begin(), e.levers.end(), [](const Lever& l) { return l.fits; });
      if (fix != e.levers.end()) {
        e.infeasible[0].message += "; setting " + fix->path + " to " + fix->value + " fits (" +
                                   Gib(fix->total_with_headroom_bytes) +
                                   "), at a cost: " + fix->cost;
      } else {
        e.lever_combinations = LeverCombinations(r, e.total_bytes);
        if (!e.lever_combinations.empty()) {
          const LeverCombination& c = e.lever_combinations.front();
          std::string changes;
          for (const Lever& l : c.levers) {
            changes += (changes.empty() ? "" : ", ") + l.path + " = " + l.value;
          }
          e.infeasible[0].message += "; no single change fits, but together " + changes + " do (" +
                                     Gib(c.total_with_headroom_bytes) + ")";
        }
      }
    }
  }
  return e;
}

}  // namespace gpuplan
