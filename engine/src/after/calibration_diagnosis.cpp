// SPDX-License-Identifier: MIT
// Which of the three common mismatches a measured run shows: memory short, memory
// plentiful but throughput low, a low multi-card speed-up. The estimate's own diagnosis, before
// anything is measured, is after/diagnosis.cpp.
#include <string>

#include "after/calibration_steps.h"
#include "after/remedies.h"
#include "core/format.h"
#include "physics/estimate_parts.h"

namespace gpuplan::calibration {
namespace {

using text::D;
using text::Fmt;

// A measured peak says how far short; an out-of-memory run without one, the estimate.
Diagnosis MemoryShort(const Setup& calibrated, const Estimate& after, double need, Context* c) {
  const Setup& r = c->request;
  const Measurement& m = c->measured;
  const double cap = r.gpu.CapacityBytes();
  const double need_bytes = m.peak_allocated_bytes > 0 ? need : after.total_with_headroom_bytes;
  const double over = need_bytes / cap - 1;
  const bool just = over <= remedies::kJustShort;
  const std::string headroom = Fmt("%.0f%%", r.headroom * 100);
  return {just ? "memory_just_short" : "memory_short",
          "measurement",
          {{"over_fraction", over}, {"need_bytes", need_bytes}, {"capacity_bytes", cap}},
          (m.out_of_memory ? std::string("the run ran out of memory")
                           : "the measured peak leaves less than the " + headroom + " headroom") +
              (just ? ": cheap levers first, a bigger card last"
                    : ": too far for the cheap levers alone; a bigger card or more cards") +
              " (each remedy checked with the calibrated memory)",
          remedies::Memory(calibrated, need_bytes)};
}

// A run that fitted, short of the planning headroom: it runs as measured, and the remedies buy
// margin rather than make it fit (the planning headroom is for what the estimate cannot see).
Diagnosis HeadroomNotMet(const Setup& calibrated, double need, double spare, Context* c) {
  const Setup& r = c->request;
  const double cap = r.gpu.CapacityBytes();
  return {"headroom_not_met",
          "measurement",
          {{"spare_bytes", spare},
           {"spare_fraction", spare / cap},
           {"headroom", r.headroom},
           {"need_bytes", need},
           {"capacity_bytes", cap}},
          "the run fitted with " + Gib(spare) + " (" + Fmt("%.0f%%", 100 * spare / cap) +
              ") to spare, short of the " + Fmt("%.0f%%", r.headroom * 100) +
              " planning headroom: it runs as measured; the remedies buy margin for longer "
              "sequences, other batches or fragmentation",
          remedies::Memory(calibrated, need)};
}

// Low utilisation, or a rate or latency worse than the estimate beyond the success line.
bool SlowerThanEstimated(const Context& c) {
  bool slow = c.measured.gpu_utilization >= 0 && c.measured.gpu_utilization < kTargetUtilization;
  for (const Comparison& x : c.out.comparisons) {
    const bool rate = x.quantity.rfind("tokens_per_s", 0) == 0;
    const bool latency = x.quantity == "tpot_ms" || x.quantity == "ttft_ms";
    if ((rate && x.error > kSuccessLine) || (latency && x.error < -kSuccessLine)) slow = true;
  }
  return slow;
}

void DiagnoseMemory(const Setup& calibrated, const Estimate& after, Context* c) {
  const Setup& r = c->request;
  const Measurement& m = c->measured;
  const double cap = r.gpu.CapacityBytes();
  // The measured tensors plus the runtime part the estimate adds (context, NCCL, slack).
  const double need = (m.peak_allocated_bytes + after.memory.per_gpu.runtime) * (1 + r.headroom);
  const double share = MemoryShare(r, m);
  const bool short_of_memory =
      m.out_of_memory || (m.peak_allocated_bytes > 0 && need > cap) || share > 0.95;
  // What the card held when the run fitted (RecordRun), else what nvidia-smi saw.
  const double held = c->out.factors.measured_peak_bytes > 0 ? c->out.factors.measured_peak_bytes
                      : share >= 0                           ? share * cap
                                                             : -1;
  if (short_of_memory && !m.out_of_memory && held >= 0 && held <= cap) {
    c->out.diagnosis.push_back(HeadroomNotMet(calibrated, need, cap - held, c));
  } else if (short_of_memory) {
    c->out.diagnosis.push_back(MemoryShort(calibrated, after, need, c));
  } else if (share >= 0 && share < kTargetMemoryShare && SlowerThanEstimated(*c)) {
    c->out.diagnosis.push_back(
        {"throughput_low",
         "measurement",
         {{"memory_share", share}, {"gpu_utilization", m.gpu_utilization}},
         "memory is plentiful (" + Fmt("%.0f%%", share * 100) +
             ") but throughput is low: the bottleneck is reading or communication; check "
             "the data pipeline first",
         remedies::Throughput(calibrated, after)});
  }
}

void DiagnoseSpeedup(const Setup& calibrated, Context* c) {
  const std::vector<Point>& points = c->points;
  if (points.size() <= 1) return;
  const Point base = points.front();
  double worst = 1;
  int64_t at = base.gpus;
  for (size_t i = 1; i < points.size(); ++i) {
    const double eff =
        (points[i].tokens_per_s / base.tokens_per_s) / (D(points[i].gpus) / D(base.gpus));
    if (eff < worst) {
      worst = eff;
      at = points[i].gpus;
    }
  }
  if (worst >= remedies::kLowScaling) return;
  const Setup q = At(calibrated, at);
  c->out.diagnosis.push_back(
      {"speedup_low",
       "measurement",
       {{"scaling_efficiency", worst}, {"gpus", D(at)}},
       "the measured speed-up on " + std::to_string(at) + " cards is " +
           Fmt("%.0f%%", worst * 100) +
           " of linear: most likely the interconnect or the sharding; measure again on "
           "fewer cards",
       remedies::Speedup(q, EstimateSetup(q, false))});
}

}  // namespace

void Diagnose(const Setup& calibrated, const Estimate& after, Context* c) {
  DiagnoseMemory(calibrated, after, c);
  DiagnoseSpeedup(calibrated, c);
}

}  // namespace gpuplan::calibration
