// SPDX-License-Identifier: MIT
// Memory per GPU. Each term cites where its byte count comes from; the sum is what the
// caching allocator would hold at the step's peak, plus the runtime the allocator never sees.
// The parts are computed per pipeline stage (stage.h) and assembled here.
#include "physics/memory_model.h"

#include <utility>

#include "core/units.h"
#include "physics/stage.h"

namespace gpuplan {
namespace {

// The seven parts of one stage; `r` holds its stage index and gains the detail.
void AssembleStage(const Stage& s, MemoryResult* r) {
  const MemoryInput& in = s.in;
  const Detail d(in.with_detail, &r->detail);
  const double weights = WeightBytes(s, d);
  TrainingState state{weights, 0, 0, 0};
  double activations = 0;
  double kv = 0;
  double buffers = 0;
  double offloaded = 0;
  if (in.workload.IsTraining()) {
    state = TrainingStateBytes(s, weights, d);
    offloaded = Offload(s, &state);
    buffers = TrainingBufferBytes(s, state.gradients, d);
    activations = TrainingActivationBytes(s, d, &offloaded);
  } else {
    kv = KvCacheBytes(s, d);
    activations = InferenceActivationBytes(s, d);
  }
  MemoryBreakdown& b = r->per_gpu;
  b.weights = state.weights;
  b.gradients = state.gradients;
  b.optimizer_states = state.moments + state.master;
  // Weights, gradients, optimizer states and KV cache are exact counts; a measured peak
  // corrects only the parts that are modelled (calibration.h).
  b.activations = activations * in.modelled_scale;
  b.kv_cache = kv;
  b.buffers = buffers * in.modelled_scale;
  d.Record("optimizer_states.master_weights", state.master);
  d.Record("optimizer_states.moments", state.moments);
  const RuntimeOptions& rt = in.runtime;
  const double reserve = rt.reserve_bytes >= 0 ? rt.reserve_bytes : in.gpu.runtime_reserve_bytes;
  const double comm =
      in.parallel.gpus > 1 ? (rt.comm_reserve_bytes >= 0 ? rt.comm_reserve_bytes : 0.5 * kGiB) : 0;
  const double slack = rt.allocator_slack * b.Allocated();
  // A serving engine's CUDA graphs (vLLM) live outside PyTorch's allocator.
  const double graphs = in.workload.IsTraining() ? 0 : in.serving.graph_bytes;
  b.runtime = reserve + comm + slack + graphs;
  if (graphs > 0) d.Record("runtime.cuda_graphs", graphs);
  d.Record("runtime.reserve", reserve);
  d.Record("runtime.communicators", comm);
  d.Record("runtime.allocator_slack", slack);
  r->offloaded_bytes_per_gpu = offloaded;
}

MemoryResult StageMemory(const MemoryInput& in, int64_t stage) {
  MemoryResult r;
  r.stage = stage;
  AssembleStage(Stage(in, stage), &r);
  return r;
}

}  // namespace

MemoryResult EstimateMemory(const MemoryInput& in) {
  // The most loaded stage: the first holds the embedding and the most in-flight micro-batches,
  // the last the head and the logits. Evaluate both and report the larger.
  MemoryResult best = StageMemory(in, 0);
  if (in.parallel.pp > 1) {
    MemoryResult last = StageMemory(in, in.parallel.pp - 1);
    if (last.per_gpu.Total() > best.per_gpu.Total()) best = std::move(last);
  }
  return best;
}

}  // namespace gpuplan
