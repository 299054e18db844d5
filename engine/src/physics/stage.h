// SPDX-License-Identifier: MIT
// What one pipeline stage holds, the memory model's common ground: its layers, the parameters
// one GPU keeps of them, the bits they are stored in, and where the parts record their detail.
// The parts themselves live in parameter_memory.cpp, activation_memory.cpp and kv_cache.cpp.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/format.h"
#include "physics/memory_model.h"

namespace gpuplan {

using text::D;

/// Layers of each kind held by one pipeline stage.
struct StageLayers {
  int64_t dense = 0;
  int64_t moe = 0;
  int64_t begin = 0;  ///< index of the stage's first layer
  int64_t end = 0;    ///< one past its last layer
  bool first = true;
  bool last = true;
  int64_t Count() const { return dense + moe; }
};

/// Parameter counts one GPU holds before any ZeRO sharding, split by how they are stored.
struct GpuParams {
  double linear = 0;     ///< non-expert weight matrices, already divided by tp
  double expert = 0;     ///< routed-expert matrices on this GPU (divided by ep and tp)
  double other = 0;      ///< norms, biases, routers: replicated, kept in 16/32 bits
  double embedding = 0;  ///< token table rows on this GPU
  double lm_head = 0;
  double Total() const { return linear + expert + other + embedding + lm_head; }
};

/// The facts every part of one stage's memory starts from.
struct Stage {
  Stage(const MemoryInput& in, int64_t stage);

  const MemoryInput& in;
  int64_t index;
  StageLayers layers;
  GpuParams params;
  FormatBits bits;
  bool fp32_model;     ///< weights (and so activations and gradients) in fp32 or tf32
  bool full_training;  ///< pretraining or full fine-tuning: every parameter trains
  /// A k-bit base whose unquantised parameters were upcast to fp32 (policy.h): fp32
  /// embeddings, norms and head, and fp32 activations
  bool kbit_upcast;
  double act_bytes;  ///< bytes of one saved activation element (bf16 2, fp32 4)
  /// Serving with layers left on the CPU (ServingPolicy::gpu_layers): the share of the
  /// repeating layers on the GPUs, and whether the output layer is there too.
  double gpu_layer_share = 1;
  bool output_on_gpu = true;
  /// Serving: the routed experts of layers below this index stay in host memory
  /// (ServingPolicy::cpu_moe_layers).
  int64_t cpu_moe_layers = 0;
  double shard;  ///< ranks ZeRO shards over
  double linear_bits = 16;
  double expert_bits = 16;  ///< routed experts (gpt-oss: MXFP4 beside bf16 attention)
  double emb_bits = 16;
  double head_bits = 16;
};

/// Where a stage's parts write their sub-items (the result's memory.detail); the planner's
/// quick checks skip them.
class Detail {
 public:
  Detail(bool on, std::map<std::string, double>* out) : on_(on), out_(out) {}
  void Record(const char* key, double bytes) const {
    if (on_) Write(key, bytes);
  }

 private:
  // Out of line, so the planner's checks (detail off) pay a test, not a call: in WebAssembly
  // the whole of Record stayed a call, 3% of a plan's time.
  void Write(const char* key, double bytes) const;

  bool on_;
  std::map<std::string, double>* out_;
};

/// The training state of one stage's GPU, before offloading.
struct TrainingState {
  double weights = 0;
  double gradients = 0;
  double master = 0;
  double moments = 0;
  /// The first gradients backward makes, while every activation is still saved: the head's
  /// on the last stage, else the stage's last layer's (before any reduce-scatter shards them).
  double first_gradients = 0;
};

// Each part of one stage's memory, in bytes per GPU (parameter_memory.cpp).
double WeightBytes(const Stage& s, const Detail& d);
/// Weights a stage keeps in host memory (layers left on the CPU); 0 when all are on GPUs.
double HostWeightBytes(const Stage& s);
/// The part of it that is routed experts kept on the CPU (--n-cpu-moe): a token reads only
/// the experts it routes to.
double HostExpertBytes(const Stage& s);
TrainingState TrainingStateBytes(const Stage& s, double weights, const Detail& d);
/// Moves what offloading (or a paged optimizer) keeps in host memory out of `state`; returns
/// the bytes moved.
double Offload(const Stage& s, TrainingState* state);

/// Training's buffers on one GPU, by when they are alive.
struct TrainingBuffers {
  double steady = 0;   ///< through forward and backward: gathered units, a dequantised weight
  double buckets = 0;  ///< the data-parallel gradient buckets (GradientResidency says when)
};
TrainingBuffers TrainingBufferBytes(const Stage& s, double gradients, const Detail& d);

/// Training's activations on one GPU of a stage, by when they are alive. Forward saves each
/// layer's tensors; backward, last layer first, frees them as it makes that layer's gradients,
/// so the first layer's are freed last (memory_model.cpp puts the two moments together).
struct TrainingActivations {
  double saved = 0;             ///< saved by every micro-batch in flight, at the end of forward
  double per_micro_batch = 0;   ///< of which one micro-batch's (the one whose backward runs)
  double first_layer = 0;       ///< the stage's first layer's saved tensors, one micro-batch
  double recompute = 0;         ///< recomputation's working set, in backward
  double backward_working = 0;  ///< gradients flowing through one layer in backward
  double logits_and_loss = 0;   ///< last stage: logits and loss, at the end of forward
  double forward_working = 0;   ///< a layer's forward transients (context parallel's ring)
};

/// Saved activations, the backward working sets and the logits (activation_memory.cpp);
/// `offloaded` gains what activation offloading moves to host memory.
TrainingActivations TrainingActivationBytes(const Stage& s, const Detail& d, double* offloaded);
double InferenceActivationBytes(const Stage& s, const Detail& d);

/// The KV cache of the stage's layers at the workload's concurrency (kv_cache.cpp).
double KvCacheBytes(const Stage& s, const Detail& d);
/// The KV cache one token of context adds to one of the stage's layers on this GPU.
double KvBytesPerTokenLayer(const Stage& s);

}  // namespace gpuplan
