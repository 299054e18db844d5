// SPDX-License-Identifier: MIT
// The profiles' values are the projects' documented defaults, each with its source (read from
// the projects' source and docs in 2026-11). No speed factor is fitted: the only
// engine-labelled measurements (mlc-llm's 2023 decode benchmark, in
// tests/reference/perf_cases.json) put llama.cpp's single-GPU rows within 16% of the generic
// model, and its vLLM rows are multi-GPU over PCIe from a version without CUDA graphs;
// `gpuplan validate` reports each engine's error instead (docs/accuracy.md).
// Policies a profile does not set keep plain PyTorch's defaults (policy.h), as the engine
// assumed for every stack before policies existed; where a project's own default differs,
// the profile sets it with its source.
#include "stacks/profiles.h"

#include <algorithm>
#include <limits>

namespace gpuplan {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kUnbounded = std::numeric_limits<double>::infinity();
// llama.cpp's decode kernels stream about this many bytes per second per SM: fitted on the
// scored llama.cpp decode rows of mlc-llm's benchmark (tests/reference/perf_cases.json) and the
// llama-bench tables of tests/reference/cases/llama-bench-decode.json (docs/accuracy.md: the
// fit and its leave-one-source-out error). Physically, ~8 KB in flight per SM over ~0.6 us of
// DRAM latency.
constexpr double kLlamaCppBytesPerSm = 14e9;

StackProfile Vllm() {
  StackProfile f;
  f.id = "vllm";
  // The profile is vLLM's CUDA/ROCm build. On Apple silicon vLLM itself builds for the CPU
  // only; GPU serving there is the separate vllm-metal plugin on MLX, whose KV cache and
  // memory policy are not these (docs/getting_started/installation/cpu.apple.inc.md).
  f.needs_cuda_or_rocm = true;
  f.name = "vLLM";
  f.support.backends = kAllBackends;
  f.support.min_cuda_cc = 7.5;
  f.support.min_cuda_cc_since = "0.20.0";
  f.support.earlier_min_cuda_cc = 7.0;
  f.support.rocm_generations = {"cdna2", "cdna3", "cdna4", "rdna3", "rdna4"};
  f.support.version = "0.20+";
  f.support.plugin_note_code = "vllm_vendor_plugin";
  f.support.plugin_note =
      "vLLM runs on Intel Gaudi through the vllm-gaudi plugin and on Huawei Ascend through "
      "vllm-ascend, each with its own releases and kernels";
  f.support.source =
      "vLLM installation docs (docs.vllm.ai, GPU: compute capability 7.5 or higher; 7.0 until "
      "the default wheels moved to CUDA 13 in v0.20.0); ROCm 6.3+: MI200 (gfx90a), MI300/MI325X "
      "(gfx942), MI350/MI355X (gfx950), Radeon RX 7900 (gfx1100/1101) and RX 9000 "
      "(gfx1200/1201); the V0 engine was removed in v0.11.0";
  f.serving = true;
  // --enable-expert-parallel with --data-parallel-size: attention data parallel, experts
  // spread (docs.vllm.ai serving/expert_parallel_deployment and data_parallel_deployment).
  f.engine.expert_parallel = true;
  f.engine.kv_budget = KvBudget::kShareOfCard;
  f.engine.memory_fraction = 0.92;
  f.engine.graph_bytes = 0.5 * kGiB;
  f.engine.caps = {{{70, 2048, 256}, {kUnbounded, 8192, 1024}}};
  f.engine.first_tier_generation = "ampere";
  f.engine.block_tokens = 16;
  f.engine.profile_run = true;
  f.engine.sampler_bytes_per_logit = 18;
  f.engine.whole_prompt_min_tokens = 2048;
  f.engine.chunked_above = 32768;
  f.engine.older = {
      {{"0.8.0", 0.9, false, true, 0.33 * kGiB}, {"0.20.0", 0.9, false}, {"0.21.0", 0, false}}};
  f.sources = {
      "--gpu-memory-utilization 0.92 (0.9 before vLLM PR #38284): the share of each GPU the "
      "instance takes for weights, activations, CUDA graphs and a preallocated KV cache, "
      "which gets what is left (vllm/config/cache.py)",
      "--max-num-seqs 1024 and --max-num-batched-tokens 8192 (API server) on cards of 70 GiB "
      "or more other than Ampere, else 256 and 2048 (vllm/engine/arg_utils.py)",
      "CUDA graphs (counted inside the share since v0.21): 0.5 GiB per GPU, an assumption "
      "from users' logs of 0.2-0.65 GiB for 1-27B models; --enforce-eager removes them; "
      "earlier versions capture them after sizing the pool, out of the rest of the card",
      "serving.version below 0.20.0 takes the 0.9 default: PR #38284 (merged 2026-04) is "
      "assumed first released in 0.20.0",
      "--block-size 16 on CUDA (vllm/config/cache.py): the pool is whole blocks",
      "the pool is gpu_memory_utilization x the card's total (torch.cuda.mem_get_info) less the "
      "weights, the peak of a profile run and the non-torch memory (determine_available_memory "
      "in vllm/v1/worker/gpu_worker.py): the run is a forward pass over max_num_batched_tokens, "
      "then the sampler over max_num_seqs rows of the whole vocabulary (profile_run, "
      "_dummy_sampler_run: bf16 logits, their fp32 copy, softmax probabilities, the random "
      "draw and one temporary, 18 bytes an entry; 4 start-up logs of 0.2-0.71 GiB agree within "
      "15%); versions before 0.8.0 (V0) batch whole prompts unless max_model_len exceeds 32K "
      "(max_num_batched_tokens = max(max_model_len, 2048)) and find 0.33 GiB outside PyTorch "
      "on one GPU (the V0 log of vllm issue #14452, RTX 5090; V1 logs show 0.02-0.09)"};
  return f;
}

StackProfile Sglang() {
  StackProfile f;
  f.id = "sglang";
  // CUDA and ROCm kernels (sgl-kernel, FlashInfer): no Metal build.
  f.needs_cuda_or_rocm = true;
  f.name = "SGLang";
  f.support.backends = kCuda | kRocm | kAscend | kXpu;
  f.support.min_cuda_cc = 8.0;
  f.support.rocm_generations = {"cdna3", "cdna4"};
  f.support.version = "0.5";
  f.support.source =
      "SGLang hardware platforms docs (docs.sglang.io): NVIDIA, AMD Instinct MI300X/MI325X/"
      "MI350X/MI355X, Ascend NPU, Intel XPU; sgl-kernel is built for sm80 and newer (the sm75 "
      "end-of-life RFC, sglang issue #6006; 'no kernel image' on T4 and RTX 2080 with 2026 "
      "wheels)";
  f.serving = true;
  // --enable-dp-attention with --dp and --ep-size (docs.sglang.io advanced_features
  // dp_dpa_router_guide; server arguments).
  f.engine.expert_parallel = true;
  f.engine.kv_budget = KvBudget::kCardMinusReserve;
  f.engine.reserve = {512 * kMiB, 1.5 * kMiB, 2048, 2 * kMiB, kGiB / 8, 10 * kGiB, 60e9};
  f.engine.caps = {{{20, 2048, 0, 8, 8},
                    {35, 2048, 0, 24, 80},
                    {60, 4096, 0, 32, 160},
                    {160, 8192, 0, 256, 512},
                    {kUnbounded, 16384, 0, 512, 512}}};
  f.sources = {
      "--mem-fraction-static = (card - reserve) / card covers the weights and the KV pool; "
      "the reserve, 512 MiB + 1.5 MiB x max(chunk, 2048) + 2 MiB x cuda_graph_max_bs + "
      "tp x pp / 8 GiB (at least 10 GiB on cards over 60 GB), holds activations and CUDA "
      "graphs (sglang/srt/server_args.py)",
      "--chunked-prefill-size and --cuda-graph-max-bs by card memory: under 20 GB 2048/8, "
      "35 GB 2048/24 (80 at tp 4+), 60 GB 4096/32 (160), 160 GB 8192/256 (512), above "
      "16384/512 (server_args.py); running requests bounded by the KV pool"};
  return f;
}

StackProfile TensorRtLlm() {
  StackProfile f;
  f.id = "tensorrt_llm";
  // NVIDIA GPUs only: TensorRT engines are CUDA.
  f.needs_cuda_or_rocm = true;
  f.name = "TensorRT-LLM";
  f.support.backends = kCuda;
  f.support.min_cuda_cc = 8.0;
  f.support.version = "1.x";
  f.support.source =
      "TensorRT-LLM supported hardware (nvidia.github.io/TensorRT-LLM/supported-hardware): "
      "Blackwell, Hopper, Ada, Ampere; Volta support removed after 0.14.0 (PR #2389)";
  f.serving = true;
  // enable_attention_dp with moe_expert_parallel_size (nvidia.github.io/TensorRT-LLM
  // features/parallel-strategy).
  f.engine.expert_parallel = true;
  f.engine.kv_budget = KvBudget::kShareOfFree;
  f.engine.memory_fraction = 0.9;
  f.engine.caps = {{{kUnbounded, 8192, 2048}}};
  f.sources = {
      "--kv_cache_free_gpu_memory_fraction 0.9: the KV cache takes 0.9 of the memory free "
      "once weights and buffers are allocated (tensorrt_llm/commands/serve.py, KvCacheConfig)",
      "--max_batch_size 2048, --max_num_tokens 8192 (BuildConfig in tensorrt_llm/builder.py)"};
  return f;
}

StackProfile LlamaCpp() {
  StackProfile f;
  f.id = "llama_cpp";
  f.name = "llama.cpp";
  f.support.min_cuda_cc = 5.0;
  f.support.backends = kCuda | kRocm | kAscend | kXpu;
  f.support.source =
      "llama.cpp README backends (CUDA, HIP, Metal, Vulkan, SYCL, CANN, MUSA) and "
      "ggml/src/ggml-cuda/CMakeLists.txt: CUDA builds for compute capability 5.0 and newer "
      "with CUDA 12 toolkits (7.5 with CUDA 13)";
  f.serving = true;
  f.engine.kv_budget = KvBudget::kAsNeeded;
  f.engine.caps = {{{kUnbounded, 512, 0}}};
  f.engine.layer_split = true;
  f.engine.caching_allocator = false;
  f.engine.worst_case_graph = true;
  f.engine.input_embedding_on_host = true;
  // --n-gpu-layers N offloads the last N repeating layers; the rest run on the CPU from host
  // memory (llama.cpp README, "Common options"; llama_model_load's n_gpu_layers).
  f.engine.host_layers = true;
  f.engine.decode_bytes_per_s_per_sm = kLlamaCppBytesPerSm;
  f.sources = {
      "the KV cache is --ctx-size tokens for all --parallel slots together, allocated at "
      "start (llama-server README; issue #11681): here concurrency x (prompt + output)",
      "--ubatch-size 512: tokens per forward pass, which sizes the compute buffer",
      "--split-mode layer (default): several GPUs hold consecutive layers and run one after "
      "another, as pipeline stages",
      "ggml allocates exact backend buffers (model, KV, compute), not through a caching "
      "allocator: no fragmentation slack",
      "the compute buffer is reserved at start for a worst-case graph of n_ubatch tokens over "
      "the whole n_ctx (llama_context's graph reserve; ggml-alloc reuses memory between ops): "
      "the largest of attention (f32 scores n_ubatch x n_ctx x heads without flash attention, "
      "the f16 mask n_ubatch x n_ctx, q, k, v and output), the MLP and the f32 logits of "
      "n_ubatch outputs, beside the f32 hidden state; the input token table stays on the "
      "CPU (llama-model.cpp: the input layer's buffer type is the CPU's)",
      "single-stream decode of quantised weights (mul_mat_vec_q) streams about 14 GB/s per "
      "SM, in series with the card's bandwidth: fitted on llama-bench and mlc-llm rows (README, "
      "accuracy); 16-bit weights go through cuBLAS at the generation's constant"};
  return f;
}

StackProfile PytorchFsdp() {
  StackProfile f;
  f.id = "pytorch_fsdp";
  f.name = "PyTorch FSDP";
  f.support.source =
      "runs wherever the installed PyTorch build runs (torch.distributed: NCCL on CUDA and "
      "ROCm, XCCL on Intel GPUs); PyTorch 2.11+ default wheels need compute capability 7.5, the "
      "cu126 wheels still cover 5.0-9.0 (pytorch issue #172352)";
  f.layouts.default_zero = 3;
  f.training.gather.unsharded_under_pp = true;
  f.sources = {
      "FULL_SHARD (ZeRO-3) by default, SHARD_GRAD_OP (ZeRO-2) or NO_SHARD (DDP) on request; "
      "limit_all_gathers keeps two units gathered (the one computing and the one "
      "prefetched) plus the root (torch.distributed.fsdp docs)",
      "DDP gradient buckets of bucket_cap_mb 25 MiB; tensor and pipeline parallel as "
      "torchtitan composes them with FSDP2",
      "gradients exist from backward to the step: FSDP2's sharded gradients are the "
      "parameters' .grad, which optimizer.zero_grad() sets to None (set_to_none=True, "
      "PyTorch's default since 2.0); across micro-batches the sharded gradients accumulate",
      "with pipeline parallelism a stage stays gathered from its first forward to its last "
      "backward and accumulates its gradients unsharded in fp32 (torchtitan's fsdp.py: no "
      "reshard after forward when pp is on, reduce dtype float32; torch.distributed."
      "pipelining's stage.py turns gradient sync off for all but the last micro-batch)"};
  return f;
}

StackProfile DeepSpeed() {
  StackProfile f;
  f.id = "deepspeed";
  f.name = "DeepSpeed ZeRO";
  f.support.source =
      "DeepSpeed accelerator setup guide (deepspeed.ai): CUDA, ROCm, Intel XPU, Intel Gaudi "
      "(HabanaAI's DeepSpeed fork), Ascend NPU";
  f.layouts.model_parallel = false;
  f.training.buckets.bucket_elements = 5e8;
  f.training.gather.prefetch_elements = 5e7;
  f.training.residency.kept_between_steps_zero3 = true;
  f.training.residency.buckets_kept_between_steps = false;
  f.training.overlap.grad_reduce = false;
  f.sources = {
      "ZeRO-1/2: a contiguous gradient bucket of reduce_bucket_size 5e8 elements in the "
      "16-bit training dtype (deepspeed/runtime/zero/config.py; contiguous_gradients on)",
      "ZeRO-3: stage3_prefetch_bucket_size 5e7 parameters gathered ahead of the one in use",
      "data parallel only here: no tensor or pipeline parallelism with ZeRO-2/3",
      "ZeRO-1/2 allocate the IPG bucket in each backward() and free it with the partitioned "
      "gradients (grads_in_partition) at the step, _release_ipg_buffers in "
      "deepspeed/runtime/zero/stage_1_and_2.py; ZeRO-3 allocates its gradient partitions "
      "once, as grad_partitions_flat_buffer (stage3.py), kept between steps",
      "overlap_comm defaults to true at ZeRO-3 and false below it (the field validator of "
      "overlap_comm in deepspeed/runtime/zero/config.py): ZeRO-1/2 reduce after backward"};
  return f;
}

StackProfile Megatron() {
  StackProfile f;
  f.id = "megatron";
  f.name = "Megatron-LM";
  f.support.backends = kCuda | kRocm;
  f.support.min_cuda_cc = 8.0;
  f.support.rocm_generations = {"cdna3", "cdna4"};
  f.support.version = "Core 0.19";
  f.support.rocm_note_code = "megatron_rocm_fork";
  f.support.rocm_note =
      "Megatron-LM on AMD runs as AMD's Primus / ROCm fork (rocm/primus images), not NVIDIA's "
      "release";
  f.support.source =
      "Megatron Core install docs 0.19.0 (docs.nvidia.com/megatron-core): Turing or later, FP8 "
      "on Hopper, Ada or Blackwell; its default Transformer Engine path needs compute "
      "capability 8.0 for bf16 (TE support_matrix); AMD Primus docs: MI300X, MI325X, MI350X, "
      "MI355X";
  f.layouts.max_zero = 1;
  f.training.fp32_grad_accumulation = true;
  f.training.buckets.copy_for_allreduce = false;
  f.training.residency.kept_between_steps = true;
  f.training.overlap.grad_reduce = false;
  f.training.overlap.param_gather = false;
  f.sources = {
      "--use-distributed-optimizer shards the fp32 master weights and Adam moments over "
      "data-parallel ranks (ZeRO-1); no ZeRO-2/3",
      "bf16 training accumulates and all-reduces gradients in fp32 (main_grad): 18 bytes "
      "per parameter, 6 + 12/d with the distributed optimizer (Megatron-LM "
      "docs/source/api-guide/dist_optimizer.md)",
      "gradients live in one contiguous buffer that the all-reduce works on: no second "
      "copy as PyTorch DDP's buckets make",
      "that buffer (ParamAndGradBuffer of megatron/core/distributed/"
      "distributed_data_parallel.py) is allocated once; zero_grad_buffer() zeroes it in "
      "place at each iteration, so the gradients' memory is alive through forward too",
      "--overlap-grad-reduce, --overlap-param-gather and --tp-comm-overlap are off unless "
      "given (store_true flags in megatron/training/arguments.py): the gradient reduction "
      "runs after backward"};
  return f;
}

StackProfile Torchtune() {
  StackProfile f;
  f.id = "torchtune";
  f.name = "torchtune";
  f.layouts.default_zero = 3;
  f.training.master_copy = false;
  f.training.saved.norm_fp32_copy = true;
  f.training.saved.kv_expanded = true;
  f.sources = {
      "recipes train in the config's dtype (bf16 by default) with no fp32 master copy, so "
      "torch.optim's moments are bf16 too (zeros_like(param))",
      "eager RMSNorm in fp32 (torchtune/modules/rms_norm.py: x.float(), then the scale): "
      "autograd keeps the fp32 input and, when the scale trains, the normalised value",
      "grouped K and V are expanded to every query head before scaled_dot_product_attention "
      "(torchtune/modules/attention.py, k.unsqueeze(2).expand(...).flatten(1, 2))",
      "RoPE runs in fp32 (modules/position_embeddings.py) but multiplies by a cache that needs "
      "no gradient, so autograd keeps nothing of it",
      "distributed recipes shard with FSDP2 fully_shard (ZeRO-3); compile: True in a config "
      "is memory_techniques.compile"};
  return f;
}

StackProfile HfTransformers() {
  StackProfile f;
  f.id = "hf_transformers";
  f.name = "Hugging Face Trainer";
  f.layouts.model_parallel = false;
  f.training.saved.norm_fp32_copy = true;
  f.training.extra_fp32_logit_copies = 1;
  f.training.kbit_fp32_upcast = true;
  f.sources = {
      "the Trainer (with PEFT and TRL's SFTTrainer) runs data parallel: DDP by default, FSDP "
      "or DeepSpeed ZeRO through accelerate when configured; tp, pp and cp are not Trainer "
      "options",
      "eager RMSNorm in fp32 (transformers models/llama/modeling_llama.py LlamaRMSNorm: "
      "hidden_states.to(torch.float32), then the scale; LayerNorm runs in fp32 under "
      "autocast): autograd keeps the fp32 input",
      "the loss upcasts the logits and copies the shifted ones contiguous before "
      "cross-entropy (transformers loss/loss_utils.py ForCausalLMLoss: logits.float(), "
      "logits[..., :-1, :].contiguous()): a third fp32 vocabulary-wide tensor beside the "
      "upcast and the log-probabilities",
      "QLoRA on a bitsandbytes base: TRL's SFTTrainer calls PEFT's "
      "prepare_model_for_kbit_training, which casts every non-quantised parameter to fp32, "
      "unless FSDP or ZeRO-3 shards the base (trl sft_trainer.py, is_sharded_qlora); "
      "bitsandbytes' Linear4bit returns its input's dtype, so activations stay fp32 "
      "(precision.kbit_fp32_upcast false for a trainer that skips the preparation)",
      "flash_attention_2 takes grouped K and V as they are (no repeat_kv), so K/V are not "
      "counted expanded; the sdpa and eager paths repeat them"};
  return f;
}

std::vector<StackProfile> Build() {
  return {Vllm(),      Sglang(),   TensorRtLlm(), LlamaCpp(),      PytorchFsdp(),
          DeepSpeed(), Megatron(), Torchtune(),   HfTransformers()};
}

}  // namespace

const std::vector<StackProfile>& Stacks() {
  static const std::vector<StackProfile> all = Build();
  return all;
}

const StackProfile* FindStack(const std::string& id) {
  const auto& all = Stacks();
  const auto it =
      std::find_if(all.begin(), all.end(), [&](const StackProfile& f) { return id == f.id; });
  return it == all.end() ? nullptr : &*it;
}

}  // namespace gpuplan
