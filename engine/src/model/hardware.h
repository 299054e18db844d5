// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan {

/// One accelerator, in base units (bytes, bytes/s, FLOP/s, watts). The catalog's JSON keys
/// carry their units (memory_gib, mem_bandwidth_gb_per_s, bf16_dense_tflops); json_io converts.
/// The architecture families whose fitted efficiencies differ (perf_model.cpp).
enum class GpuArch { kUnset, kHopper, kBlackwell, kAmpere, kAda, kOther };

/// A catalog `generation` as a GpuArch: read once when a card is loaded, so the estimator's
/// thousands of calls per plan compare no strings.
inline GpuArch ArchOf(std::string_view generation) {
  if (generation == "hopper") return GpuArch::kHopper;
  if (generation == "blackwell") return GpuArch::kBlackwell;
  if (generation == "ampere") return GpuArch::kAmpere;
  if (generation == "ada") return GpuArch::kAda;
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
  double mem_bandwidth_bytes_per_s = 0;
  int64_t sm_count = 0;  ///< streaming multiprocessors / compute units; 0 when not given
  double fp32_flops = 0;
  double tf32_flops = 0;  ///< dense; 0 when the card has no such units
  double bf16_flops = 0;  ///< dense
  double fp16_flops = 0;  ///< dense
  double fp8_flops = 0;   ///< dense
  double int8_ops = 0;    ///< dense
  double fp4_flops = 0;   ///< dense
  double board_power_w = 0;
  std::string form_factor;
  std::string cooling;
  std::string intra_node_kind;
  double intra_node_bytes_per_s = 0;  ///< per GPU, per direction
  int64_t gpus_per_node = 8;
  double inter_node_bytes_per_s = 0;  ///< per GPU, per direction
  double runtime_reserve_bytes = 0;   ///< CUDA context + framework reserve, the card's default
  std::optional<double> usd_per_hour;
  int64_t release_year = 0;
};

/// The catalog in use: its version string and the cards and model presets it holds.
struct Catalog {
  std::string version;
  std::vector<GpuSpec> gpus;
};

}  // namespace gpuplan
