// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/market.h"

namespace gpuplan {

/// One accelerator, in base units (bytes, bytes/s, FLOP/s, watts). The catalog's JSON keys
/// carry their units (memory_gib, mem_bandwidth_gb_per_s, bf16_dense_tflops); json_io converts.
/// The architecture families whose fitted efficiencies differ (perf_model.cpp).
enum class GpuArch {
  kUnset,
  kHopper,
  kBlackwell,
  kAmpere,
  kAda,
  kCdna3,
  kCdna4,
  kGaudi2,
  kGaudi3,
  kOther
};

/// A catalog `generation` as a GpuArch: read once when a card is loaded, so the estimator's
/// thousands of calls per plan compare no strings.
inline GpuArch ArchOf(std::string_view generation) {
  if (generation == "hopper") return GpuArch::kHopper;
  if (generation == "blackwell") return GpuArch::kBlackwell;
  if (generation == "ampere") return GpuArch::kAmpere;
  if (generation == "ada") return GpuArch::kAda;
  if (generation == "cdna3") return GpuArch::kCdna3;
  if (generation == "cdna4") return GpuArch::kCdna4;
  if (generation == "gaudi2") return GpuArch::kGaudi2;
  if (generation == "gaudi3") return GpuArch::kGaudi3;
  return GpuArch::kOther;
}

struct GpuSpec {
  std::string id;
  std::string name;
  std::string vendor;
  std::string generation;
  GpuArch arch = GpuArch::kUnset;  ///< ArchOf(generation), set by the catalog reader
  double memory_bytes = 0;
  /// What the driver reports as the card's total (cudaMemGetInfo, torch.cuda.mem_get_info):
  /// a little less than the nominal size. The catalog's `usable_memory_gib` where measured,
  /// else 0.99 x memory_bytes (catalog_io.cpp says why).
  double usable_memory_bytes = 0;
  bool usable_memory_given = false;  ///< usable_memory_bytes is the catalog's, not 0.99 x
  /// One memory pool shared with the CPU and the OS (Apple silicon, DGX Spark's GB10, MI300A):
  /// memory_bytes is the whole pool, and the GPU's part of it is what usable_memory_gib says.
  bool unified_memory = false;
  /// The catalog marks the card inference-only (Apple silicon: Metal, no CUDA or ROCm): the
  /// training stacks planned here, and serving engines profiled as CUDA or ROCm builds, do not
  /// run on it (physics/estimate.h, CardProblem).
  bool inference_only = false;
  double mem_bandwidth_bytes_per_s = 0;
  int64_t sm_count = 0;  ///< streaming multiprocessors / compute units; 0 when not given
  double fp32_flops = 0;
  double tf32_flops = 0;  ///< dense; 0 when the card has no such units
  double bf16_flops = 0;  ///< dense
  double fp16_flops = 0;  ///< dense
  double fp8_flops = 0;   ///< dense
  double int8_ops = 0;    ///< dense
  double fp6_flops = 0;   ///< dense
  double fp4_flops = 0;   ///< dense
  /// Block-scaled formats the tensor cores run natively ("mxfp8", "mxfp6", "mxfp4", "nvfp4").
  std::vector<std::string> block_scaled;
  double board_power_w = 0;
  std::string form_factor;
  std::string cooling;
  std::string intra_node_kind;
  double intra_node_bytes_per_s = 0;  ///< per GPU, per direction
  int64_t gpus_per_node = 8;
  double inter_node_bytes_per_s = 0;  ///< per GPU, per direction
  double runtime_reserve_bytes = 0;   ///< CUDA context + framework reserve, the card's default
  /// CUDA compute capability (8.0 for the A100, 9.0 for Hopper), from NVIDIA's list; 0 for
  /// other vendors or where the catalog gives none. The serving engines' and training stacks'
  /// minimums are read against it (stacks/support.h).
  double compute_capability = 0;
  /// Offers, the markets the card is sold in, end of life; null where the catalog says none.
  std::shared_ptr<const CardSupply> supply;
  /// The price per GPU-hour in USD in the request's market (ApplyMarket), from supply's offer
  /// `offer`; unset where the market has none.
  std::optional<double> usd_per_hour;
  int offer = -1;
  MarketStatus market_status = MarketStatus::kNoOffer;
  int64_t release_year = 0;

  bool EndOfLife() const { return supply && !supply->end_of_life_since.empty(); }
  /// The offer the price comes from, or null.
  const Offer* ChosenOffer() const {
    return supply && offer >= 0 && offer < static_cast<int>(supply->offers.size())
               ? &supply->offers[static_cast<size_t>(offer)]
               : nullptr;
  }

  /// The memory the GPU may allocate, bytes: the card's memory, except on a unified-memory
  /// card whose usable share is given (Apple's default wired limit), where that share is all
  /// the GPU may hold. Capacity, fits and the engines' card-sized budgets read this.
  double CapacityBytes() const {
    return unified_memory && usable_memory_given ? usable_memory_bytes : memory_bytes;
  }
};

/// The catalog in use: its version string and the cards and model presets it holds.
struct Catalog {
  std::string version;
  std::vector<GpuSpec> gpus;
};

}  // namespace gpuplan
