// SPDX-License-Identifier: MIT
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostics.h"
#include "physics/levers.h"
#include "physics/memory_model.h"
#include "physics/perf_model.h"
#include "physics/reliability.h"
#include "physics/setup.h"

namespace gpuplan {

/// Power of the job: its boards, its nodes with their overhead, and the racks a site limit allows.
struct PowerEstimate {
  double gpu_watts = 0;
  double node_watts = 0;   ///< boards plus the rest of the server
  double total_watts = 0;  ///< the job's nodes (a partly used node counts its share)
  int64_t nodes = 0;
  int64_t nodes_per_rack = 0;  ///< under constraints.rack_power_w; 0 when not given
};

/// Share of a server's power beyond its GPU boards (CPUs, memory, NICs, fans, conversion):
/// NVIDIA DGX H100 is rated 10.2 kW at most for 8 x 700 W of GPUs (0.82x), DGX A100 6.5 kW for
/// 8 x 400 W (1.03x); 0.8x is assumed for every server.
inline constexpr double kNodeOverheadFraction = 0.8;

/// What the job costs at the card's (or the request's) price per GPU-hour.
struct CostEstimate {
  bool priced = false;  ///< false when neither the catalog nor the request gives a price
  std::string market;   ///< the market whose offers priced the card (pricing.market)
  /// The offer the price comes from (supply->offers[offer]); offer < 0 with a price: the
  /// request's own pricing.usd_per_gpu_hour.
  std::shared_ptr<const CardSupply> supply;
  int offer = -1;
  double usd_per_gpu_hour = 0;
  double usd_per_hour = 0;
  double usd_total = 0;  ///< training: the whole run; serving: not defined (0)
  double usd_per_million_tokens = 0;
};

/// Serving figures at the requested concurrency plus the largest one that fits and meets the
/// latency targets.
struct ServingEstimate {
  InferencePerf at_request;
  int64_t max_concurrency = 0;  ///< per replica; 0 when even one sequence does not fit
  /// The batch a preallocating engine runs under full load: what its pool admits, with no
  /// planning headroom; max_concurrency for the others.
  int64_t engine_concurrency = 0;
  bool meets_targets = true;
  /// Output tokens/s at engine_concurrency with every admitted request's prefill paid:
  /// B / (t_decode(B) + (B / output tokens) x one prompt's prefill compute).
  double max_throughput_tokens_per_s = 0;
  /// The batch at_request's decode figures describe: the requested concurrency, else the
  /// engine's cap on running sequences, else (not fitting) max_concurrency.
  int64_t served_concurrency = 0;
  /// A finite set of requests (workload.requests): the time to serve them all, the last wave's
  /// longest outputs included; 0 for a steady stream.
  double makespan_s = 0;
};

/// What the request's framework profile adds (stack_figures.h); `id` empty when none was given.
struct FrameworkEstimate {
  std::string id;
  std::string name;
  // Serving engines, on this card.
  int64_t max_batched_tokens = 0;
  int64_t max_seqs = 0;          ///< 0 = memory decides
  double engine_bytes = 0;       ///< what the engine holds per GPU once started
  double kv_pool_bytes = 0;      ///< the KV cache it sets aside per GPU
  double kv_pool_tokens = 0;     ///< tokens of context that pool holds
  double kv_pool_sequences = 0;  ///< prompt + output sequences that pool holds
};

/// A reported figure's likely range, from the validation residuals of its kind (error_bands.h).
struct FigureBand {
  double low = 0;
  double high = 0;
  /// The cases and percentiles behind it, in words: text the error-band table writes once
  /// (error_bands.cpp), so that every row of a plan does not copy it.
  std::string_view basis;
};

/// Everything `estimate` reports for one fixed setup.
struct Estimate {
  /// false: the figures only, for a search that evaluates setups by the thousand: no explain,
  /// bands, warnings or memory detail, and serving's engine_concurrency only where the
  /// figures need it (offline). Set by EstimateSetup.
  bool describe = true;
  /// false: no explain (formulas and inputs) and no memory detail; warnings and bands stay
  /// while `describe` holds (a lean plan's rows). Set by EstimateSetup.
  bool with_explain = true;
  ParamCounts params;
  MemoryResult memory;
  double capacity_bytes = 0;
  double total_bytes = 0;
  double total_with_headroom_bytes = 0;
  /// With the headroom, or short of it when a run of this setup on this card fitted
  /// (measured_spare_bytes).
  bool fits = false;
  /// What the run measured on this card with this setup left unused (calibration's
  /// measured_peak_bytes), when the request carries one; -1 = none.
  double measured_spare_bytes = -1;
  double host_ram_bytes = 0;  ///< per node
  int64_t gpus_per_node_used = 1;
  PowerEstimate power;
  bool has_training = false;
  TrainingPerf training;
  ReliabilityEstimate reliability;  ///< with has_training
  bool has_serving = false;
  ServingEstimate serving;
  CostEstimate cost;
  FrameworkEstimate framework;
  std::map<std::string, FigureBand> bands;  ///< keyed by the result's JSON pointer
  std::vector<Note> infeasible;
  std::vector<Note> warnings;
  std::map<std::string, Explanation> explain;  ///< keyed by the result's JSON pointer
  std::vector<Lever> levers;                   ///< memory-saving changes, best saving first
  /// Where no single lever makes a setup that does not fit fit: two or three together.
  std::vector<LeverCombination> lever_combinations;
};

/// The per-GPU memory of a setup and whether it fits, without performance, levers or
/// explanations: the quick check the levers and the planner run many times.
struct FitCheck {
  double total_bytes = 0;
  double total_with_headroom_bytes = 0;
  bool layout_ok = true;  ///< no infeasibility other than memory
  bool fits = false;
};
FitCheck CheckFit(const Setup& r, const ParamCounts& c);
/// A training request's TrainingMemoryFloor with its headroom: no setup that differs from it
/// only in micro-batch, accumulation or recomputation has a smaller total_with_headroom_bytes.
double TrainingFloorWithHeadroom(const Setup& r, const ParamCounts& c);

/// A setup's per-GPU memory in its uncalibrated parts (weights, gradients, optimizer states,
/// activations, KV cache, buffers), to the MiB, as 16 hex digits: two setups with the same
/// fingerprint hold the same tensors, whatever else differs (accumulation, token count).
std::string MemoryFingerprint(const Setup& r, const ParamCounts& c);

/// What a run measured with this setup on this card left unused, from the request's
/// calibration (measured_on, measured_peak_bytes, measured_setup); nullopt when it carries no
/// such run. A run that fitted is evidence that it fits, whatever the planning headroom.
std::optional<double> MeasuredSpare(const Setup& r, const ParamCounts& c);

/// Why the request's workload and framework cannot run on card `g` in any layout, when they
/// cannot: training on an inference-only card (`inference_only_card`), or a serving engine
/// whose profile is its CUDA or ROCm build on one (`engine_unsupported_on_card`). The estimate
/// lists it as infeasible (g = the request's card); the planner rejects the card with it.
std::optional<Note> CardProblem(const Setup& r, const GpuSpec& g);

/// Evaluates one validated request. Pure: no I/O, no clock. `with_levers` also evaluates
/// each memory-saving lever on its own; `description` leaves out what only a
/// reader needs (Estimate::describe, Estimate::with_explain).
/// How much an estimate says beside its figures.
enum class Description {
  kFigures,  ///< the figures only: a search's thousands of candidates
  kNotes,    ///< and warnings, infeasibility and bands: a lean plan's rows
  kFull,     ///< and every figure's formula and inputs, the memory detail: `estimate`
};

Estimate EstimateSetup(const Setup& r, bool with_levers = true,
                       Description description = Description::kFull);

}  // namespace gpuplan
