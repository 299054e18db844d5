// SPDX-License-Identifier: MIT
// The policies the physics takes from a training stack or serving engine: plain values, each
// with one documented meaning, so the memory and time models never ask which project runs.
// A stack profile (catalog/stacks.json) is a named bundle of them with the source of each value;
// the defaults below are plain PyTorch (eager, DDP, torch.optim) and serve when no profile is
// named.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/hardware.h"
#include "model/parallelism.h"

namespace gpuplan {

// ---- Training ----------------------------------------------------------------------------

/// The element type of optimizer moments (contract: precision.optimizer_states).
enum class StateDtype {
  kFp32,   ///< fp32 whatever the parameters (mixed-precision optimizers: Megatron, DeepSpeed)
  kBf16,   ///< bf16
  kParam,  ///< the parameter's own dtype: torch.optim creates state with zeros_like(param)
};

/// What one transformer block keeps for backward beyond Korthikanti et al.'s count (memory
/// model, LayerActivationTerms), op by op.
struct SavedActivations {
  /// Each norm runs eagerly in fp32 (torchtune modules/rms_norm.py; Hugging Face's
  /// LlamaRMSNorm): autograd keeps the fp32 upcast of its input in place of the 16-bit input a
  /// fused norm keeps, and, when the norm's scale trains, the normalised value the scale
  /// multiplies. With a frozen scale (LoRA) that product saves nothing.
  bool norm_fp32_copy = false;
  /// Rotary embedding keeps fp32 copies of q and k: only where the rotation multiplies two
  /// tensors that both need gradients. torch's mul saves an operand only for the other's
  /// gradient, and a cos/sin cache needs none, so torchtune's and Hugging Face's fp32 RoPE
  /// keep nothing extra; no profile sets it.
  bool rope_fp32_copy = false;
  bool kv_expanded = false;   ///< grouped K and V are repeated to every query head first
  int gated_mlp_tensors = 4;  ///< gated MLP: gate, up, act(gate), their product
  int plain_mlp_tensors = 2;  ///< plain MLP: the activation's input and output
};

/// How long gradients live.
enum class GradientLifetime {
  kUntilStep,          ///< from backward until the optimizer step, all at once
  kSteppedInBackward,  ///< each parameter is stepped as its gradient is ready: about one
                       ///< tensor's gradient alive (also set by memory_techniques)
};

/// Whether gradient memory exists while the forward pass runs. The step's peak is the larger of
/// the end of forward (saved activations, logits and what gradient memory survives) and the end
/// of backward (every gradient, the first layer's saved tensors): memory_model.cpp.
/// The defaults are plain PyTorch: `optimizer.zero_grad()` sets every `.grad` to None
/// (set_to_none=True, the default since PyTorch 2.0; torch.optim.Optimizer.zero_grad docs), so
/// a step's gradients are created by its backward; DDP's Reducer builds its all-reduce buckets
/// once, at construction (torch/nn/parallel/distributed.py, gradient_as_bucket_view docs), so
/// they stay allocated between steps. Across the micro-batches of one step every stack keeps the
/// gradients (autograd accumulates into `.grad`), which needs no policy.
struct GradientResidency {
  /// ZeRO 0-2: the gradients live in a buffer allocated once and zeroed in place, not freed,
  /// so they are alive through every forward (Megatron's contiguous main_grad buffer).
  bool kept_between_steps = false;
  /// ZeRO-3: the same for the sharded gradient partitions (DeepSpeed stage 3's flat buffer).
  bool kept_between_steps_zero3 = false;
  /// The data-parallel reduction's buckets (buffers.gradient_buckets) stay allocated between
  /// steps; false when the stack allocates them in each backward and frees them at the step.
  bool buckets_kept_between_steps = true;
};

/// What the data-parallel reduction holds besides the gradients themselves.
struct GradientBuckets {
  /// ZeRO-0: a flat copy of every gradient for the all-reduce (PyTorch DDP with
  /// gradient_as_bucket_view False); false when the reduction works on the gradients' own
  /// contiguous buffer.
  bool copy_for_allreduce = true;
  /// ZeRO-1/2: 0 = two buckets of bucket_cap_mb 25 MiB in flight; else one contiguous bucket
  /// of this many elements in the training dtype, allocated whole.
  double bucket_elements = 0;
  /// The size the reduction is issued in, where it differs from the memory above: at least
  /// `reduce_elements`, and `reduce_elements_per_rank` x the data-parallel ranks (larger
  /// groups need larger buckets to stay bandwidth-bound); 0 = the bucket above.
  double reduce_elements = 0;
  double reduce_elements_per_rank = 0;
  /// Without overlap the whole gradient buffer is reduced as one bucket after backward.
  bool single_unless_overlapped = false;
};

/// How ZeRO-3 / FSDP gathers parameters.
struct ParamGather {
  double prefetch_elements = 0;  ///< gathered ahead of the unit in use; 0 = the next unit
  /// Parameters are freed after a unit's forward and gathered again for its backward; false
  /// keeps the stage's gathered parameters from forward to backward (one gather less).
  bool reshard_after_forward = true;
  /// With pipeline parallelism: the same, and the stage accumulates its gradients unsharded,
  /// in fp32, until the last micro-batch's backward reduce-scatters them. torchtitan does not
  /// reshard after forward when pp is on (fsdp.py, get_fsdp_reshard_after_forward_policy),
  /// and torch's pipelining stage turns FSDP's gradient sync and its resharding after
  /// backward off for every micro-batch but the last (torch/distributed/pipelining/stage.py,
  /// backward_maybe_with_nosync); FSDP2 then accumulates unsharded gradients in the reduce
  /// dtype, float32 in torchtitan's mixed-precision policy.
  bool unsharded_under_pp = false;
};

/// Which communication runs behind compute (contract: parallel.overlap).
struct Overlap {
  bool tp_comm = false;  ///< tensor-parallel collectives pipelined with the GEMMs
  /// Gradient reductions run during backward: ZeRO-0/1/2 the buckets of the last
  /// micro-batch's, ZeRO-3 the reduce-scatters of every micro-batch's.
  bool grad_reduce = true;
  /// The same at ZeRO-3, where a stack defaults differently (DeepSpeed's overlap_comm).
  bool grad_reduce_zero3 = true;
  bool param_gather = true;  ///< ZeRO-3 parameter gathers prefetched behind compute
  /// ZeRO-1/2: the all-gather of the updated parameters runs behind the next step's forward
  /// (Megatron-Core's --overlap-param-gather); off, it follows the optimizer step.
  bool param_gather_sharded_optimizer = false;
};

/// Whether the stack reduces gradients during backward at this ZeRO stage.
inline bool GradReduceOverlapAt(const Overlap& o, int zero) {
  return zero >= 3 ? o.grad_reduce_zero3 : o.grad_reduce;
}

/// The pipeline schedule (contract: parallel.pp_schedule).
enum class PipelineSchedule {
  k1F1B,         ///< one forward, one backward (Narayanan et al. 2021)
  kInterleaved,  ///< 1F1B over virtual_stages chunks of layers per GPU
  kGpipe,        ///< every forward, then every backward
};
struct Pipeline {
  PipelineSchedule schedule = PipelineSchedule::k1F1B;
  int64_t virtual_stages = 1;  ///< kInterleaved: model chunks per GPU
};

/// How the optimizer step visits the parameters (torch/optim/adam.py, torch 2.x): kForeach runs
/// each operation over every parameter of a device and dtype at once, so an out-of-place op
/// allocates a whole set of temporaries (Adam's exp_avg_sq_sqrt = torch._foreach_sqrt of the
/// second moments, the size of the stepped parameters); kFused updates in one kernel, in place;
/// kForLoop visits one parameter at a time (temporaries of the largest parameter).
/// torch.optim defaults to foreach for CUDA parameters and never to fused
/// (optimizer.py, _default_to_fused_or_foreach(use_fused=False)).
enum class OptimizerKernel { kForeach, kFused, kForLoop };
/// Its name in requests and in stacks.json: foreach, fused, for_loop.
const char* Name(OptimizerKernel k);
/// The kernel of that name, or none.
std::optional<OptimizerKernel> OptimizerKernelNamed(std::string_view name);

/// Everything the training physics reads of a stack.
struct TrainingPolicy {
  OptimizerKernel optimizer_kernel = OptimizerKernel::kForeach;
  /// LoRA with fp32 adapters on 16-bit activations: the bytes per element of the copy of its
  /// input each adapted linear saves. PEFT casts the input to the adapter's dtype before
  /// lora_A (peft/tuners/lora/layer.py, Linear.forward: x = self._cast_input_dtype(x,
  /// lora_A.weight.dtype)), so lora_A keeps an fp32 copy (4); under autocast its matmul keeps
  /// autocast's 16-bit cast of that copy instead (2); adapters that take the input as it comes
  /// keep no copy (0).
  double lora_input_copy_bytes = 4;
  /// The share of the dense matmul rate the routed experts' matmuls reach (MoE training): 1
  /// where they run as grouped GEMMs as fast as a dense layer's; transformers' expert kernels
  /// at a few hundred tokens per expert reach less, and its loop over experts far less.
  double expert_matmul_efficiency = 1;
  /// Norms, rotary embeddings, the MLP's activation and the loss run as fused kernels that
  /// read their inputs and write their outputs once (Transformer Engine, Apex, Liger,
  /// torch.compile); false: eager PyTorch, one kernel per op of the module's code (step time:
  /// physics/step_kernels.cpp counts each op's bytes).
  bool fused_pointwise = false;
  /// A 16-bit model keeps an fp32 master copy unless the request says otherwise (mixed
  /// precision); false: the stack trains the 16-bit parameters themselves.
  bool master_copy = true;
  StateDtype optimizer_states = StateDtype::kFp32;
  SavedActivations saved;
  GradientLifetime gradients = GradientLifetime::kUntilStep;
  GradientResidency residency;
  bool fp32_grad_accumulation = false;  ///< 16-bit training accumulates gradients in fp32
  GradientBuckets buckets;
  ParamGather gather;
  Overlap overlap;
  Pipeline pipeline;
  /// Vocabulary-wide fp32 tensors the loss holds beyond plain PyTorch's upcast and
  /// log-probabilities (activation_memory.cpp, LogitsAndLossBytes): Hugging Face's
  /// ForCausalLMLoss upcasts the logits and then copies the shifted ones contiguous, one more.
  int extra_fp32_logit_copies = 0;
  /// A bitsandbytes k-bit base (nf4, int8) that is not sharded is prepared for training by
  /// casting every parameter left unquantised (embeddings, norms, lm_head) to fp32 (PEFT's
  /// prepare_model_for_kbit_training). The embedding then feeds an fp32 residual stream, the
  /// fp32 norms keep it fp32, and bitsandbytes' Linear4bit returns its input's dtype, so
  /// saved activations are 4 bytes while autocast keeps lm_head's logits 16-bit. TRL skips
  /// the preparation when FSDP or ZeRO-3 shards the quantised model (sft_trainer.py,
  /// is_sharded_qlora). The request can override it (precision.kbit_fp32_upcast).
  bool kbit_fp32_upcast = false;
};

/// The layouts a stack offers (checked, not computed).
struct StackLayouts {
  bool model_parallel = true;  ///< tp, pp and cp above 1
  int max_zero = 3;            ///< highest ZeRO stage
  int default_zero = 0;        ///< the stage it uses when data parallel and none is given
};

// ---- Serving -----------------------------------------------------------------------------

/// How a serving engine sizes its KV cache.
enum class KvBudget {
  kAsNeeded,          ///< exactly the context asked for (llama.cpp --ctx-size)
  kShareOfCard,       ///< a share of the card minus everything else (vLLM)
  kCardMinusReserve,  ///< the card minus a reserve for activations and graphs, minus weights
                      ///< (SGLang)
  kShareOfFree,       ///< a share of what is free once the engine is loaded (TensorRT-LLM)
};

/// A memory reserve the engine keeps out of its pool, computed from its own settings:
/// base + per chunk token x max(chunk, min chunk) + per graph batch x graph batch + per model
/// rank x tp x pp, at least `floor_bytes` on cards of more than `floor_above_bytes`.
struct ReserveRule {
  double base_bytes = 0;
  double per_chunk_token_bytes = 0;
  int64_t min_chunk_tokens = 0;
  double per_graph_batch_bytes = 0;
  double per_model_rank_bytes = 0;
  double floor_bytes = 0;
  double floor_above_bytes = 0;
};

/// The scheduler's caps on cards below a memory size.
struct CapTier {
  double below_gib = std::numeric_limits<double>::infinity();
  int64_t max_batched_tokens = 8192;  ///< tokens per forward pass: the prefill chunk
  int64_t max_seqs = 0;               ///< sequences running at once; 0 = memory decides
  int64_t graph_batch = 0;            ///< largest CUDA-graph batch captured
  int64_t graph_batch_wide = 0;       ///< the same at tp >= ServingPolicy::wide_tp
};

/// Everything the serving physics reads of an engine.
struct ServingPolicy {
  KvBudget kv_budget = KvBudget::kAsNeeded;
  double memory_fraction = 0;  ///< kShareOfCard / kShareOfFree: the share
  double graph_bytes = 0;      ///< CUDA-graph capture memory per GPU outside the allocator
  /// Decode steps launch their kernels from the host one by one (no CUDA graphs: vLLM's,
  /// SGLang's and TensorRT-LLM's enforce_eager), so a step lasts at least the host's time to
  /// launch them (perf_model.h, kEagerDecodeHostPerLayer).
  bool eager_decode = false;
  ReserveRule reserve;            ///< kCardMinusReserve
  std::array<CapTier, 5> caps{};  ///< by card memory, smallest first; the rest unbounded
  const char* first_tier_generation = nullptr;  ///< takes caps[0] whatever its memory
  int64_t wide_tp = 4;
  bool layer_split = false;  ///< multi-GPU by layers (pipeline), not tensor parallel
  /// Runs a MoE model's experts spread over the GPUs (expert parallel) with attention data
  /// parallel across them, each rank its own sequences and KV cache.
  bool expert_parallel = false;
  /// kCardMinusReserve given a static share instead (SGLang's --mem-fraction-static): the
  /// weights and the pool take this share of the card; 0 = the reserve rule.
  double static_fraction = 0;
  /// CUDA graphs are captured before the pool is sized, inside the share; false: after it,
  /// out of what the share leaves on the card.
  bool graphs_in_budget = true;
  int64_t block_tokens = 0;  ///< the pool holds whole blocks of this many tokens (0: any)
  /// A context of this many tokens for all sequences together, allocated at start
  /// (llama.cpp's n_ctx); 0 = the requested concurrency x (prompt + output).
  int64_t context_tokens = 0;
  /// Bytes per cached element of K and of V when set apart from precision.kv_cache
  /// (llama.cpp's --cache-type-k/-v); 0 = precision.kv_cache's.
  double k_bytes = 0;
  double v_bytes = 0;
  /// Tensors come from PyTorch's caching allocator (fragmentation slack); false for engines
  /// that allocate exact buffers (ggml's backend buffers).
  bool caching_allocator = true;
  /// The pool is sized after a profile run at the engine's own limits, a forward pass over
  /// max_batched_tokens and the sampler over max_seqs rows, whatever the request's
  /// concurrency; its share is of the card's usable total and holds the weights, that peak,
  /// the memory outside PyTorch (NCCL) and, when captured first, the CUDA graphs; the CUDA
  /// context and the allocator's slack live in what the share leaves (vLLM's
  /// determine_available_memory).
  bool profile_run = false;
  /// The compute buffer is reserved at start for the worst-case graph: max_batched_tokens
  /// tokens (n_ubatch) over the whole context, in f32 (ggml's graph allocator, llama.cpp).
  bool worst_case_graph = false;
  /// The input token table stays in host memory (llama.cpp keeps the input layer on the CPU:
  /// a lookup needs no GPU); a tied table is also the output layer, which the GPU holds.
  bool input_embedding_on_host = false;
  /// Bytes per second one SM (compute unit) streams in the engine's single-stream decode
  /// kernels: a kernel that keeps few bytes in flight per SM is bound by memory latency
  /// (Little's law), so the card streams at 1 / (1 / bandwidth + 1 / (SMs x this)); cards with
  /// much bandwidth per SM (HBM parts) reach a smaller share of it. 0: the generation's
  /// constant efficiency (perf_model.cpp).
  double decode_bytes_per_s_per_sm = 0;
  /// llama.cpp's n_gpu_layers: the last this many repeating layers (with their KV cache) live
  /// on the GPUs, the output layer too when it exceeds the layer count; the rest stay in host
  /// memory and run on the CPU. -1 = every layer.
  int64_t gpu_layers = -1;
  /// Layers can stay in host memory and run on the CPU (gpu_layers): where the whole model
  /// fits on no layout of a card, the serving search keeps the most layers that do.
  bool host_layers = false;
  /// llama.cpp's --n-cpu-moe N: the routed experts of the first N layers stay in host memory
  /// and run on the CPU, which reads only the experts a token routes to; attention, shared
  /// experts and the rest stay on the GPUs. 0 or -1 (not set) = none.
  int64_t cpu_moe_layers = -1;
  /// The longest sequence the engine accepts (vLLM's --max-model-len); 0 = the model's context.
  int64_t max_model_len = 0;
  /// Bytes a vocabulary entry per sampled row in the profile's sampler warm-up.
  double sampler_bytes_per_logit = 0;
  /// Without chunked prefill each batch holds whole prompts: the batched-token limit is
  /// max(max_model_len, this) when max_model_len is at most chunked_above (older vLLM).
  int64_t whole_prompt_min_tokens = 0;
  int64_t chunked_above = 0;
  /// Values an earlier release had: a version below `before` takes them.
  struct Older {
    const char* before = nullptr;  ///< "0.20.0"; null = unused
    double memory_fraction = 0;
    bool graphs_in_budget = true;
    bool whole_prompts = false;  ///< no chunked prefill by default (whole_prompt_min_tokens)
    double non_torch_bytes = 0;  ///< memory outside PyTorch the profile finds on one GPU
  };
  std::array<Older, 3> older{};
  /// Whether this version batches whole prompts (set by AtVersion from `older`).
  bool whole_prompts = false;
  /// Memory outside PyTorch's allocator that a profiling engine counts on one GPU (cuBLAS and
  /// attention workspaces; NCCL is the communicators' reserve on more than one).
  double non_torch_bytes = 0;

  /// The engine sizes a KV pool at start whatever the request's concurrency.
  bool Preallocates() const { return kv_budget != KvBudget::kAsNeeded || context_tokens > 0; }
};

/// The policy an engine had at `version` ("" = the profile's, the current one): the first
/// of `older` whose `before` is above it applies. Versions compare numerically by part.
ServingPolicy AtVersion(const ServingPolicy& s, const std::string& version);
/// Whether dotted version a is below b ("0.8.5" < "0.10.0").
bool VersionBelow(const std::string& a, const std::string& b);

/// A serving engine's settings on one card and layout, as its own defaults make them.
struct ServingDefaults {
  int64_t max_batched_tokens = 8192;
  int64_t max_seqs = 0;
  double reserve_bytes = 0;
};
ServingDefaults DefaultsOn(const ServingPolicy& s, const GpuSpec& g, const Parallel& p);

// ---- The bundle --------------------------------------------------------------------------

/// A project's policies, by the request's `framework` id, with where each value comes from.
/// The software platforms a card runs on (GpuBackend) and a stack's builds support.
enum Backend : uint8_t {
  kCuda = 1,
  kRocm = 2,
  kGaudi = 4,   ///< Intel Gaudi (HPU)
  kAscend = 8,  ///< Huawei Ascend (CANN)
  kXpu = 16,    ///< Intel data-centre and Arc GPUs (oneAPI)
  kAllBackends = 31,
};

/// A card's platform, from its vendor and generation; 0 where none of the above (Apple's Metal
/// is the inference_only flag's).
uint8_t BackendOf(const GpuSpec& g);

/// Where a stack (or a library the workload needs, such as bitsandbytes) runs, from its own
/// docs and build files: checked against the card before anything is estimated (CardProblem).
/// Only what a source states is refused; a platform no source speaks of is allowed.
struct StackSupport {
  uint8_t backends = kAllBackends;  ///< platforms it has a build for
  double min_cuda_cc = 0;           ///< the lowest CUDA compute capability its builds run on
  /// Releases before `min_cuda_cc_since` ran on older cards: down to `earlier_min_cuda_cc`.
  const char* min_cuda_cc_since = nullptr;
  double earlier_min_cuda_cc = 0;
  /// The AMD generations its ROCm build supports (catalog `generation`); none listed: all.
  std::array<const char*, 6> rocm_generations{};
  const char* version = "";  ///< the release the facts were read from
  /// A caveat for AMD cards where ROCm support is recent or partial (a warning, not a refusal):
  /// its code (the page words it) and its English.
  const char* rocm_note_code = nullptr;
  const char* rocm_note = nullptr;
  /// A caveat for Gaudi and Ascend, where the stack runs as a vendor's plugin or fork.
  const char* plugin_note_code = nullptr;
  const char* plugin_note = nullptr;
  const char* source = "";
};

/// Why `s` (named `name`, at release `version`, "" = current) cannot run on `g`, or "" when
/// it can.
std::string SupportProblem(const StackSupport& s, const char* name, const GpuSpec& g,
                           const std::string& version = "");

struct StackProfile {
  const char* id = "";    ///< the request's `framework` ("vllm", "pytorch_fsdp", ...); "" = none
  const char* name = "";  ///< as its project writes it
  bool serving = false;   ///< a serving engine (else a training stack)
  /// The profile is the engine's CUDA or ROCm build, which does not run on an inference-only
  /// card (GpuSpec::inference_only: Apple silicon, Metal). False for llama.cpp, whose Metal
  /// backend is the same program, and for plain PyTorch (MPS).
  bool needs_cuda_or_rocm = false;
  StackSupport support;
  TrainingPolicy training;
  StackLayouts layouts;
  ServingPolicy engine;
  std::array<const char*, 6> sources{};  ///< where each value comes from (null: no more)
  /// The sources as a list.
  std::vector<std::string> Sources() const;
};

/// bitsandbytes, which runs QLoRA's 4-bit base and the 8-bit optimizers.
const StackSupport& BitsandbytesSupport();

/// Plain PyTorch: the policies' defaults, used when a request names no framework.
const StackProfile& PlainPytorch();

/// Why the profile cannot run this layout ("" when it can).
std::string LayoutProblem(const StackProfile& s, const Parallel& p);

}  // namespace gpuplan
