// SPDX-License-Identifier: MIT
// Memory per GPU. Each term cites where its byte count comes from; the sum is what the
// caching allocator would hold at the step's peak, plus the runtime the allocator never sees.
// A training step's peak is not the sum of everything it ever allocates: gradients and saved
// activations are alive together only in part (TrainingStepPeak), so each part is reported as
// it stands at the peak moment.
// The parts are computed per pipeline stage (stage.h) and assembled here.
#include "physics/memory_model.h"

#include <algorithm>
#include <utility>

#include "core/units.h"
#include "physics/stage.h"

namespace gpuplan {

double CommReserveBytes(const RuntimeOptions& rt, const Parallel& p) {
  return p.gpus > 1 ? (rt.comm_reserve_bytes >= 0 ? rt.comm_reserve_bytes : 0.5 * kGiB) : 0;
}
namespace {

// One moment of a training step: what is alive then, beyond weights and optimizer states.
struct Moment {
  double gradients = 0;
  double activations = 0;       // calibrated
  double buffers = 0;           // calibrated
  double step_temporaries = 0;  // exact: the optimizer step's own, counted with its states
  double Alive() const { return gradients + activations + buffers + step_temporaries; }
};

// The moments a training step's peak can fall on. The end of forward, into the loss's
// backward, holds every saved activation, the logits and loss, and what gradient memory
// survives from before: all of it when the stack keeps its gradient buffer between steps
// (GradientResidency) or when earlier micro-batches of the step have accumulated theirs
// (grad_accum > 1); with PyTorch's zero_grad(set_to_none=True) only the first gradients
// backward makes (the head's). The end of backward holds every gradient and what backward has
// not yet freed: the other in-flight micro-batches' activations, the first layer's (freed
// last), and backward's working sets. Weights and optimizer states are alive at every moment.
// The optimizer step holds every gradient and whatever its implementation allocates, after
// backward has freed the activations.
struct StepPeak {
  Moment end_of_forward;
  Moment end_of_backward;
  Moment optimizer_step;
  const Moment& Peak() const {
    const Moment& passes =
        end_of_forward.Alive() > end_of_backward.Alive() ? end_of_forward : end_of_backward;
    return optimizer_step.Alive() > passes.Alive() ? optimizer_step : passes;
  }
};

// The largest parameter tensor this GPU steps, in elements (before any ZeRO sharding): a
// layer's biggest matrix, or the embedding table or head when they train.
double LargestSteppedTensor(const Stage& s) {
  const double linear = D(s.in.params.largest_linear) / D(s.in.parallel.tp);
  return std::max({linear, s.params.embedding, s.params.lm_head});
}

// What the optimizer step allocates beyond the states it updates (torch/optim/adam.py, torch
// 2.x). Adam and AdamW: a foreach step takes the square root of every second moment of a
// device-and-dtype group at once (exp_avg_sq_sqrt = torch._foreach_sqrt), a tensor set the size
// and dtype of the second moments, half the moment bytes; a for-loop step does it one parameter
// at a time, with its quotient a second temporary of the largest parameter; a fused kernel
// updates in place. SGD without weight decay, bitsandbytes' 8-bit optimizers and Lion step in
// place; Adafactor's variance estimate (one parameter at a time) is not modelled. LoRA's
// adapters are small tensors: a for-loop step over them allocates next to nothing. A step
// taken inside backward (one parameter's optimizer as its gradient lands), or on the host
// (offloaded states), holds nothing here.
double OptimizerStepTemporaries(const Stage& s, const TrainingState& state,
                                bool stepped_in_backward) {
  const Optimizer o = s.in.optimizer;
  if (stepped_in_backward || state.moments <= 0) return 0;
  if (o != Optimizer::kAdam && o != Optimizer::kAdamW) return 0;
  const double second_moments = state.moments / 2;
  switch (s.in.training.optimizer_kernel) {
    case OptimizerKernel::kFused:
      return 0;
    case OptimizerKernel::kForeach:
      return second_moments;
    case OptimizerKernel::kForLoop: {
      if (!s.full_training) return 0;
      const double stepped = s.params.Total() / (s.in.parallel.zero >= 1 ? s.shard : 1);
      const double largest = LargestSteppedTensor(s) / (s.in.parallel.zero >= 1 ? s.shard : 1);
      return stepped > 0 ? std::min(second_moments, 2 * largest * second_moments / stepped) : 0;
    }
  }
  return 0;
}

StepPeak TrainingStepPeak(const Stage& s, const TrainingState& state, const TrainingBuffers& buf,
                          const TrainingActivations& act) {
  const MemoryInput& in = s.in;
  const GradientResidency& res = in.training.residency;
  const double scale = in.modelled_scale;
  const bool stepped_in_backward = in.techniques.optimizer_in_backward ||
                                   in.training.gradients == GradientLifetime::kSteppedInBackward;
  const bool accumulating = in.workload.grad_accum > 1;
  const bool kept = in.parallel.zero >= 3 ? res.kept_between_steps_zero3 : res.kept_between_steps;
  StepPeak peak;
  Moment& f = peak.end_of_forward;
  f.gradients =
      !stepped_in_backward && (kept || accumulating) ? state.gradients : state.first_gradients;
  // The last layer's forward transients are gone before the head makes the logits.
  f.activations = (act.saved + std::max(act.logits_and_loss, act.forward_working)) * scale;
  f.buffers =
      (buf.steady + (res.buckets_kept_between_steps || accumulating ? buf.buckets : 0)) * scale;
  Moment& b = peak.end_of_backward;
  b.gradients = state.gradients;
  b.activations = (std::max(0.0, act.saved - act.per_micro_batch) + act.first_layer +
                   act.recompute + act.backward_working) *
                  scale;
  b.buffers = (buf.steady + buf.buckets) * scale;
  Moment& o = peak.optimizer_step;
  o.gradients = state.gradients;
  o.buffers = (buf.steady + (res.buckets_kept_between_steps ? buf.buckets : 0)) * scale;
  o.step_temporaries = OptimizerStepTemporaries(s, state, stepped_in_backward);
  return peak;
}

// The seven parts of one stage; `r` holds its stage index and gains the detail.
void AssembleStage(const Stage& s, MemoryResult* r) {
  const MemoryInput& in = s.in;
  const Detail d(in.with_detail, &r->detail);
  const double weights = WeightBytes(s, d);
  TrainingState state{weights, 0, 0, 0};
  MemoryBreakdown& b = r->per_gpu;
  double offloaded = 0;
  StepPeak peak;
  const bool training = in.workload.IsTraining();
  if (training) {
    state = TrainingStateBytes(s, weights, d);
    offloaded = Offload(s, &state);
    const TrainingBuffers buffers = TrainingBufferBytes(s, state.gradients, d);
    const TrainingActivations activations = TrainingActivationBytes(s, d, &offloaded);
    peak = TrainingStepPeak(s, state, buffers, activations);
    const Moment& at = peak.Peak();
    b.gradients = at.gradients;
    b.activations = at.activations;
    b.buffers = at.buffers;
    d.Record("gradients.all", state.gradients);
  } else {
    // Weights and KV cache are exact counts; a measured peak corrects only the parts that are
    // modelled (calibration.h).
    b.kv_cache = KvCacheBytes(s, d);
    r->kv_bytes_per_token = KvBytesPerTokenLayer(s) * D(s.layers.Count());
    b.activations = InferenceActivationBytes(s, d) * in.modelled_scale;
  }
  b.weights = state.weights;
  b.optimizer_states = state.moments + state.master + (training ? peak.Peak().step_temporaries : 0);
  d.Record("optimizer_states.master_weights", state.master);
  d.Record("optimizer_states.moments", state.moments);
  const RuntimeOptions& rt = in.runtime;
  const double reserve = rt.reserve_bytes >= 0 ? rt.reserve_bytes : in.gpu.runtime_reserve_bytes;
  const double comm = CommReserveBytes(rt, in.parallel);
  // A pool the engine allocates whole at start is one block: no fragmentation on it; an
  // engine with exact buffers (ggml) has none at all.
  const bool pooled = !training && in.serving.Preallocates();
  const double fragmentable = b.Allocated() - (pooled ? b.kv_cache : 0);
  const double slack =
      (training || in.serving.caching_allocator) ? rt.allocator_slack * fragmentable : 0;
  // A serving engine's CUDA graphs (vLLM) live outside PyTorch's allocator.
  const double graphs = training ? 0 : in.serving.graph_bytes;
  b.runtime = reserve + comm + slack + graphs;
  if (graphs > 0) d.Record("runtime.cuda_graphs", graphs);
  d.Record("runtime.reserve", reserve);
  d.Record("runtime.communicators", comm);
  d.Record("runtime.allocator_slack", slack);
  if (training) {
    // Each moment's parts and total as total_bytes would count them: the largest is the peak.
    r->has_moments = true;
    size_t i = 0;
    for (const Moment* m : {&peak.end_of_forward, &peak.end_of_backward, &peak.optimizer_step}) {
      MemoryBreakdown& at = r->moments[i++];
      at = b;
      at.gradients = m->gradients;
      at.activations = m->activations;
      at.buffers = m->buffers;
      at.optimizer_states = state.moments + state.master + m->step_temporaries;
      at.runtime = reserve + comm + rt.allocator_slack * at.Allocated();
    }
    d.Record("peak.end_of_forward", r->moments[0].Total());
    d.Record("peak.end_of_backward", r->moments[1].Total());
    d.Record("peak.optimizer_step", r->moments[2].Total());
    d.Record("optimizer_states.step_temporaries", peak.optimizer_step.step_temporaries);
  }
  r->offloaded_bytes_per_gpu = offloaded + HostWeightBytes(s);
  r->host_expert_bytes = HostExpertBytes(s);
}

MemoryResult StageMemory(const MemoryInput& in, int64_t stage) {
  MemoryResult r;
  r.stage = stage;
  AssembleStage(Stage(in, stage), &r);
  return r;
}

}  // namespace

double TrainingMemoryFloor(const MemoryInput& in) {
  // AssembleStage's parts at the peak: weights and optimizer states as they are, gradients at
  // least the first ones (TrainingStepPeak), runtime at least its reserve and communicators
  // (slack and activations are never negative). The last stage's total only raises the peak.
  const Stage s(in, 0);
  const Detail none(false, nullptr);
  TrainingState state = TrainingStateBytes(s, WeightBytes(s, none), none);
  Offload(s, &state);
  const RuntimeOptions& rt = in.runtime;
  const double reserve = rt.reserve_bytes >= 0 ? rt.reserve_bytes : in.gpu.runtime_reserve_bytes;
  return state.weights + state.moments + state.master + state.first_gradients + reserve +
         CommReserveBytes(rt, in.parallel);
}

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
