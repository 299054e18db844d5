// SPDX-License-Identifier: MIT
// The profiles' values are the projects' documented defaults, each with its source (read from
// the projects' source and docs in 2026-11). No speed factor is fitted: the only
// engine-labelled measurements (../shared/dev-cases, mlc-llm's 2023 decode benchmark) put
// llama.cpp's single-GPU rows within 16% of the generic model, and its vLLM rows are
// multi-GPU over PCIe from a version without CUDA graphs; `gpuplan validate` reports each
// engine's error instead (README, accuracy).
#include "stacks/framework.h"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace gpuplan {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kMiB = 1024.0 * 1024.0;

std::vector<FrameworkProfile> Build() {
  std::vector<FrameworkProfile> all;
  all.reserve(7);
  {
    FrameworkProfile f;
    f.id = "vllm";
    f.name = "vLLM";
    f.serving = true;
    f.kv_budget = KvBudget::kShareOfCard;
    f.memory_fraction = 0.92;
    f.graph_bytes = 0.5 * kGiB;
    f.sources = {
        "--gpu-memory-utilization 0.92 (0.9 before vLLM PR #38284): the share of each GPU the "
        "instance takes for weights, activations, CUDA graphs and a preallocated KV cache, "
        "which gets what is left (vllm/config/cache.py)",
        "--max-num-seqs 1024 and --max-num-batched-tokens 8192 (API server) on cards of 70 GiB "
        "or more other than Ampere, else 256 and 2048 (vllm/engine/arg_utils.py)",
        "CUDA graphs (counted inside the share since v0.21): 0.5 GiB per GPU, an assumption "
        "from users' logs of 0.2-0.65 GiB for 1-27B models; --enforce-eager removes them"};
    all.push_back(f);
  }
  {
    FrameworkProfile f;
    f.id = "sglang";
    f.name = "SGLang";
    f.serving = true;
    f.kv_budget = KvBudget::kCardMinusReserve;
    f.sources = {
        "--mem-fraction-static = (card - reserve) / card covers the weights and the KV pool; "
        "the reserve, 512 MiB + 1.5 MiB x max(chunk, 2048) + 2 MiB x cuda_graph_max_bs + "
        "tp x pp / 8 GiB (at least 10 GiB on cards over 60 GB), holds activations and CUDA "
        "graphs (sglang/srt/server_args.py)",
        "--chunked-prefill-size and --cuda-graph-max-bs by card memory: under 20 GB 2048/8, "
        "35 GB 2048/24 (80 at tp 4+), 60 GB 4096/32 (160), 160 GB 8192/256 (512), above "
        "16384/512 (server_args.py); running requests bounded by the KV pool"};
    all.push_back(f);
  }
  {
    FrameworkProfile f;
    f.id = "tensorrt_llm";
    f.name = "TensorRT-LLM";
    f.serving = true;
    f.kv_budget = KvBudget::kShareOfFree;
    f.memory_fraction = 0.9;
    f.sources = {
        "--kv_cache_free_gpu_memory_fraction 0.9: the KV cache takes 0.9 of the memory free "
        "once weights and buffers are allocated (tensorrt_llm/commands/serve.py, KvCacheConfig)",
        "--max_batch_size 2048, --max_num_tokens 8192 (BuildConfig in tensorrt_llm/builder.py)"};
    all.push_back(f);
  }
  {
    FrameworkProfile f;
    f.id = "llama_cpp";
    f.name = "llama.cpp";
    f.serving = true;
    f.kv_budget = KvBudget::kAsNeeded;
    f.layer_split = true;
    f.sources = {
        "the KV cache is --ctx-size tokens for all --parallel slots together, allocated at "
        "start (llama-server README; issue #11681): here concurrency x (prompt + output)",
        "--ubatch-size 512: tokens per forward pass, which sizes the compute buffer",
        "--split-mode layer (default): several GPUs hold consecutive layers and run one after "
        "another, as pipeline stages"};
    all.push_back(f);
  }
  {
    FrameworkProfile f;
    f.id = "pytorch_fsdp";
    f.name = "PyTorch FSDP";
    f.default_zero = 3;
    f.sources = {
        "FULL_SHARD (ZeRO-3) by default, SHARD_GRAD_OP (ZeRO-2) or NO_SHARD (DDP) on request; "
        "limit_all_gathers keeps two units gathered (the one computing and the one "
        "prefetched) plus the root (torch.distributed.fsdp docs)",
        "DDP gradient buckets of bucket_cap_mb 25 MiB; tensor and pipeline parallel as "
        "torchtitan composes them with FSDP2"};
    all.push_back(f);
  }
  {
    FrameworkProfile f;
    f.id = "deepspeed";
    f.name = "DeepSpeed ZeRO";
    f.tensor_parallel = false;
    f.reduce_bucket_elements = 5e8;
    f.zero3_prefetch_elements = 5e7;
    f.sources = {
        "ZeRO-1/2: a contiguous gradient bucket of reduce_bucket_size 5e8 elements in the "
        "16-bit training dtype (deepspeed/runtime/zero/config.py; contiguous_gradients on)",
        "ZeRO-3: stage3_prefetch_bucket_size 5e7 parameters gathered ahead of the one in use",
        "data parallel only here: no tensor or pipeline parallelism with ZeRO-2/3"};
    all.push_back(f);
  }
  {
    FrameworkProfile f;
    f.id = "megatron";
    f.name = "Megatron-LM";
    f.max_zero = 1;
    f.fp32_gradients = true;
    f.grad_buffer = true;
    f.sources = {
        "--use-distributed-optimizer shards the fp32 master weights and Adam moments over "
        "data-parallel ranks (ZeRO-1); no ZeRO-2/3",
        "bf16 training accumulates and all-reduces gradients in fp32 (main_grad): 18 bytes "
        "per parameter, 6 + 12/d with the distributed optimizer (Megatron-LM "
        "docs/source/api-guide/dist_optimizer.md)",
        "gradients live in one contiguous buffer that the all-reduce works on: no second "
        "copy as PyTorch DDP's buckets make"};
    all.push_back(f);
  }
  return all;
}

}  // namespace

ServingDefaults DefaultsOn(const FrameworkProfile& f, const GpuSpec& g, const Parallel& p) {
  ServingDefaults d;
  const double gib = g.memory_bytes / kGiB;
  if (std::strcmp(f.id, "vllm") == 0) {
    const bool large = gib >= 70 && g.generation != "ampere";
    d.max_batched_tokens = large ? 8192 : 2048;
    d.max_seqs = large ? 1024 : 256;
  } else if (std::strcmp(f.id, "sglang") == 0) {
    const bool wide = p.tp >= 4;
    int64_t graph_bs = 0;
    if (gib < 20) {
      d.max_batched_tokens = 2048, graph_bs = 8;
    } else if (gib < 35) {
      d.max_batched_tokens = 2048, graph_bs = wide ? 80 : 24;
    } else if (gib < 60) {
      d.max_batched_tokens = 4096, graph_bs = wide ? 160 : 32;
    } else if (gib < 160) {
      d.max_batched_tokens = 8192, graph_bs = wide ? 512 : 256;
    } else {
      d.max_batched_tokens = 16384, graph_bs = 512;
    }
    double reserve =
        512 * kMiB +
        1.5 * kMiB * static_cast<double>(std::max<int64_t>(d.max_batched_tokens, 2048)) +
        2 * kMiB * static_cast<double>(graph_bs) + static_cast<double>(p.tp * p.pp) / 8 * kGiB;
    if (g.memory_bytes > 60e9) reserve = std::max(reserve, 10 * kGiB);
    d.reserve_bytes = reserve;
  } else if (std::strcmp(f.id, "tensorrt_llm") == 0) {
    d.max_batched_tokens = 8192;
    d.max_seqs = 2048;
  } else if (std::strcmp(f.id, "llama_cpp") == 0) {
    d.max_batched_tokens = 512;
  }
  return d;
}

double KvPoolBytes(const FrameworkProfile& f, const GpuSpec& g, const Parallel& p,
                   double weight_bytes, double other_bytes, double needed_kv_bytes) {
  double pool = needed_kv_bytes;
  switch (f.kv_budget) {
    case KvBudget::kAsNeeded:
      break;
    case KvBudget::kShareOfCard:
      pool = f.memory_fraction * g.memory_bytes - weight_bytes - other_bytes;
      break;
    case KvBudget::kCardMinusReserve:
      pool = g.memory_bytes - DefaultsOn(f, g, p).reserve_bytes - weight_bytes;
      break;
    case KvBudget::kShareOfFree:
      pool = f.memory_fraction * (g.memory_bytes - weight_bytes - other_bytes);
      break;
  }
  return std::max(0.0, pool);
}

const std::vector<FrameworkProfile>& Frameworks() {
  static const std::vector<FrameworkProfile> all = Build();
  return all;
}

const FrameworkProfile* FindFramework(const std::string& id) {
  const auto& all = Frameworks();
  const auto it =
      std::find_if(all.begin(), all.end(), [&](const FrameworkProfile& f) { return id == f.id; });
  return it == all.end() ? nullptr : &*it;
}

std::vector<std::string> FrameworkProfile::Sources() const {
  std::vector<std::string> out;
  std::copy_if(sources.begin(), sources.end(), std::back_inserter(out),
               [](const char* s) { return s != nullptr; });
  return out;
}

std::string FrameworkLayoutProblem(const FrameworkProfile& f, const Parallel& p) {
  if (f.serving) {
    if (f.layer_split && p.tp > 1) {
      return std::string(f.name) + " splits a model over GPUs by layers: use pp, not tp";
    }
    return "";
  }
  if (!f.tensor_parallel && (p.tp > 1 || p.pp > 1 || p.cp > 1)) {
    return std::string(f.name) + " runs data parallel only here: tp, pp and cp must be 1";
  }
  if (p.zero > f.max_zero) {
    return std::string(f.name) + " offers ZeRO stages up to " + std::to_string(f.max_zero);
  }
  return "";
}

}  // namespace gpuplan
