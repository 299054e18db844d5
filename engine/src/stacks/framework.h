// SPDX-License-Identifier: MIT
// Framework profiles (MISSION M27): what a serving engine or training stack adds to the plain
// tensor arithmetic, from its documented defaults. framework.cpp gives each value's source.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "model/hardware.h"
#include "model/parallelism.h"

namespace gpuplan {

/// How a serving engine sizes its KV cache.
enum class KvBudget {
  kAsNeeded,          ///< exactly the context asked for (llama.cpp --ctx-size)
  kShareOfCard,       ///< a share of the card minus everything else (vLLM)
  kCardMinusReserve,  ///< the card minus a reserve for activations and graphs, minus weights
                      ///< (SGLang)
  kShareOfFree,       ///< a share of what is free once the engine is loaded (TensorRT-LLM)
};

struct FrameworkProfile {
  const char* id = "";    ///< the request's `framework` ("vllm", "pytorch_fsdp", ...)
  const char* name = "";  ///< as its project writes it
  bool serving = false;
  // Serving engines.
  KvBudget kv_budget = KvBudget::kAsNeeded;
  double memory_fraction = 0;  ///< kShareOfCard / kShareOfFree: the share
  double graph_bytes = 0;      ///< CUDA-graph capture memory per GPU, beyond the reserve
  bool layer_split = false;    ///< multi-GPU by layers (pipeline), not tensor parallel
  // Training stacks.
  bool tensor_parallel = true;           ///< supports tp, pp and cp > 1
  int max_zero = 3;                      ///< highest ZeRO stage it offers
  int default_zero = 0;                  ///< the stage it uses when data parallel and none given
  double zero3_prefetch_elements = 0;    ///< ZeRO-3 parameters gathered ahead; 0 = one unit
  double reduce_bucket_elements = 0;     ///< ZeRO-1/2 gradient bucket; 0 = DDP's 25 MiB ones
  bool fp32_gradients = false;           ///< 16-bit training keeps gradients in fp32 (main_grad)
  bool grad_buffer = false;              ///< all-reduces from the gradients' own contiguous buffer
  std::array<const char*, 4> sources{};  ///< where each value comes from (null: no more)
  /// The sources as a list.
  std::vector<std::string> Sources() const;
};

/// A serving engine's defaults on one card and layout.
struct ServingDefaults {
  int64_t max_batched_tokens = 8192;  ///< tokens per forward pass: the prefill chunk
  int64_t max_seqs = 0;               ///< sequences running at once; 0 = memory decides
  double reserve_bytes = 0;           ///< kCardMinusReserve: kept for activations and graphs
};
ServingDefaults DefaultsOn(const FrameworkProfile& f, const GpuSpec& g, const Parallel& p);

/// The KV cache the engine sets aside per GPU, given the weights and everything else it holds
/// (activations, graphs, runtime), and the KV cache the request needs (kAsNeeded: that).
double KvPoolBytes(const FrameworkProfile& f, const GpuSpec& g, const Parallel& p,
                   double weight_bytes, double other_bytes, double needed_kv_bytes);

/// Every profile, in the order the page lists them.
const std::vector<FrameworkProfile>& Frameworks();
/// The profile with this id; nullptr when there is none.
const FrameworkProfile* FindFramework(const std::string& id);
/// Why the profile cannot run this layout ("" when it can).
std::string FrameworkLayoutProblem(const FrameworkProfile& f, const Parallel& p);

}  // namespace gpuplan
