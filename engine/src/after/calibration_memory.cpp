// SPDX-License-Identifier: MIT
// The memory factors a measured peak fixes: the scale on the modelled parts (activations and
// buffers), and the caching allocator's slack.
#include <algorithm>
#include <string>

#include "after/calibration_steps.h"
#include "physics/estimate_parts.h"

namespace gpuplan::calibration {
namespace {

// The memory factor's upper bound (kMinFactor is the lower): past it the measured peak is not
// the modelled parts' error but another setup's.
constexpr double kMaxMemoryFactor = 10;

}  // namespace

void FitMemory(Context* c) {
  const Measurement& m = c->measured;
  if (m.peak_allocated_bytes <= 0) return;
  // Uncalibrated parts: weights, gradients, optimizer states and KV cache are exact counts.
  const Estimate plain = EstimateSetup(c->uncalibrated, false);
  const MemoryBreakdown& b = plain.memory.per_gpu;
  const double modelled = b.activations + b.buffers;
  const double exact = b.Allocated() - modelled;
  if (modelled < 0.01 * b.Allocated()) {
    c->NotDerived("memory",
                  "activations and buffers are under 1% of the estimate: the "
                  "difference is not theirs to explain");
    return;
  }
  // A training step's peak is the larger of two moments (memory_model.cpp), each exact + scale
  // x modelled: the scale that brings the larger to the measured peak is the smallest of those
  // that bring each moment there.
  double s = (m.peak_allocated_bytes - exact) / modelled;
  for (const MemoryBreakdown& at : plain.memory.moments) {
    const double at_modelled = at.activations + at.buffers;
    if (at_modelled <= 0) continue;
    s = std::min(s, (m.peak_allocated_bytes - (at.Allocated() - at_modelled)) / at_modelled);
  }
  const double clamped = std::clamp(s, kMinFactor, kMaxMemoryFactor);
  c->out.factors.memory = clamped;
  if (clamped != s) {
    c->AtBound("memory", clamped,
               "the measured peak is outside what activations and buffers can account for");
  } else {
    c->Derived("memory", s,
               "from the measured peak allocated: (peak - weights - gradients - optimizer "
               "states - KV cache) / (activations + buffers), training at the moment of "
               "the step (end of forward or of backward) that reaches the peak first");
  }
}

void FitAllocatorSlack(Context* c) {
  const Measurement& m = c->measured;
  if (m.peak_allocated_bytes <= 0 || m.peak_reserved_bytes <= 0) return;
  const double slack = m.peak_reserved_bytes / m.peak_allocated_bytes - 1;
  c->out.factors.allocator_slack = std::clamp(slack, 0.0, 1.0);
  if (slack < 0 || slack > 1) {
    c->AtBound("allocator_slack", c->out.factors.allocator_slack,
               "reserved should lie between 1x and 2x allocated");
  } else {
    c->Derived("allocator_slack", slack, "= peak reserved / peak allocated - 1");
  }
}

void RecordRun(const Estimate& calibrated, Context* c) {
  const Measurement& m = c->measured;
  CalibrationFactors& f = c->out.factors;
  if (m.out_of_memory) {
    // A run that did not fit is evidence of nothing fitting: an earlier run's goes too.
    f.measured_peak_bytes = 0;
    f.measured_setup.clear();
    return;
  }
  if (m.peak_allocated_bytes <= 0) return;
  // What torch's counters miss is what the engine puts outside its allocator: the runtime less
  // the allocator's slack, which the reserved peak already holds.
  const MemoryBreakdown& b = calibrated.memory.per_gpu;
  const auto slack = calibrated.memory.detail.find("runtime.allocator_slack");
  const double outside = b.runtime - (slack != calibrated.memory.detail.end() ? slack->second : 0);
  const double held = m.peak_reserved_bytes > 0
                          ? std::max(m.peak_reserved_bytes, m.peak_allocated_bytes) + outside
                          : m.peak_allocated_bytes + b.runtime;
  if (held > c->request.gpu.CapacityBytes()) {
    f.measured_peak_bytes = 0;
    f.measured_setup.clear();
    c->NotDerived("measured_peak_bytes",
                  "the measured peak and the runtime outside the allocator exceed the card: "
                  "was the run on another card?");
    return;
  }
  f.measured_peak_bytes = held;
  f.measured_setup = MemoryFingerprint(c->request, calibrated.params);
  c->out.notes.push_back(
      Note{"factor_run_recorded",
           {{"held_bytes", held}, {"capacity_bytes", c->request.gpu.CapacityBytes()}},
           "the run held " + Gib(held) + " on " + c->request.gpu.id +
               " (peak reserved plus the context and communicators outside the allocator): "
               "the same setup on this card fits as measured",
           "/calibration/measured_peak_bytes"});
}

}  // namespace gpuplan::calibration
