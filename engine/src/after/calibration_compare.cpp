// SPDX-License-Identifier: MIT
// Each measured quantity next to the estimate, before and after the derived factors.
#include <cmath>
#include <string>

#include "after/calibration_steps.h"

namespace gpuplan::calibration {
namespace {

void Add(const std::string& quantity, const std::string& path, double est, double meas, double cal,
         std::vector<Comparison>* out) {
  Comparison c;
  c.quantity = quantity;
  c.estimate_path = path;
  c.estimated = est;
  c.measured = meas;
  c.error = (est - meas) / meas;
  c.within = std::fabs(c.error) <= kSuccessLine;
  c.calibrated = cal;
  c.calibrated_error = (cal - meas) / meas;
  out->push_back(c);
}

void CompareMemory(const Estimate& before, const Estimate& after, Context* c) {
  const Setup& r = c->request;
  const Measurement& m = c->measured;
  const MemoryBreakdown& b = before.memory.per_gpu;
  const MemoryBreakdown& a = after.memory.per_gpu;
  if (m.peak_allocated_bytes > 0) {
    Add("peak_allocated_bytes", "/memory/allocated_bytes", b.Allocated(), m.peak_allocated_bytes,
        a.Allocated(), &c->out.comparisons);
  }
  if (m.peak_reserved_bytes > 0) {
    // The caching allocator's reserve: the tensors plus its slack (no CUDA context).
    const double before_slack = r.calibration.allocator_slack >= 0 ? r.calibration.allocator_slack
                                                                   : r.runtime.allocator_slack;
    const double after_slack = c->out.factors.allocator_slack >= 0 ? c->out.factors.allocator_slack
                                                                   : r.runtime.allocator_slack;
    Add("peak_reserved_bytes", "/memory/allocated_bytes", b.Allocated() * (1 + before_slack),
        m.peak_reserved_bytes, a.Allocated() * (1 + after_slack), &c->out.comparisons);
  }
}

// Speed-up over the smallest measured count (the curve of 1, 2 and 4 cards on the same data),
// estimate against measured.
void CompareSpeedup(const Setup& calibrated, Context* c) {
  const Setup& r = c->request;
  const std::vector<Point>& points = c->points;
  if (points.size() <= 1) return;
  const Point base = points.front();
  const double est_base = TrainingRate(At(r, base.gpus));
  const double cal_base = TrainingRate(At(calibrated, base.gpus));
  for (size_t i = 1; i < points.size(); ++i) {
    const Point& p = points[i];
    Add("speedup@" + std::to_string(p.gpus), "/performance/training/tokens_per_s",
        TrainingRate(At(r, p.gpus)) / est_base, p.tokens_per_s / base.tokens_per_s,
        TrainingRate(At(calibrated, p.gpus)) / cal_base, &c->out.comparisons);
  }
}

void CompareThroughput(const Estimate& before, const Estimate& after, const Setup& calibrated,
                       Context* c) {
  const Setup& r = c->request;
  for (const Point& p : c->points) {
    const bool own = p.gpus == r.parallel.gpus;
    const double est = own ? before.training.tokens_per_s : TrainingRate(At(r, p.gpus));
    const double cal = own ? after.training.tokens_per_s : TrainingRate(At(calibrated, p.gpus));
    Add("tokens_per_s@" + std::to_string(p.gpus), "/performance/training/tokens_per_s", est,
        p.tokens_per_s, cal, &c->out.comparisons);
  }
}

void CompareLatency(const Estimate& before, const Estimate& after, Context* c) {
  const Measurement& m = c->measured;
  if (m.ttft_ms > 0) {
    Add("ttft_ms", "/performance/inference/ttft_ms", before.serving.at_request.ttft_s * 1e3,
        m.ttft_ms, after.serving.at_request.ttft_s * 1e3, &c->out.comparisons);
  }
  if (m.tpot_ms > 0) {
    Add("tpot_ms", "/performance/inference/tpot_ms", before.serving.at_request.tpot_s * 1e3,
        m.tpot_ms, after.serving.at_request.tpot_s * 1e3, &c->out.comparisons);
  }
}

}  // namespace

void Compare(const Estimate& before, const Estimate& after, const Setup& calibrated, Context* c) {
  CompareMemory(before, after, c);
  if (c->request.workload.IsTraining()) {
    CompareSpeedup(calibrated, c);
    CompareThroughput(before, after, calibrated, c);
  } else {
    CompareLatency(before, after, c);
  }
}

}  // namespace gpuplan::calibration
