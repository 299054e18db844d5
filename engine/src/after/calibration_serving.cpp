// SPDX-License-Identifier: MIT
// The serving factors measured latencies fix: bandwidth from TPOT (decode reads the weights and
// the KV cache), compute from TTFT (prefill is matmuls).
#include "after/calibration_steps.h"
#include "core/format.h"
#include "physics/perf_model.h"

namespace gpuplan::calibration {
namespace {

using text::Fmt;

InferencePerf Serving(const Setup& r) { return EstimateSetup(r, false).serving.at_request; }

// The bandwidth factor that reproduces the measured TPOT. Each try is left in `f`, which the
// TTFT solve of the same round starts from.
Solved SolveTpot(const Context& c, double hi, CalibrationFactors* f) {
  return Solve(
      [&](double s) {
        f->bandwidth = s;
        return Serving(c.With(*f)).tpot_s * 1e3;
      },
      c.measured.tpot_ms, kMinFactor, hi);
}

// The compute factor that reproduces the measured TTFT.
Solved SolveTtft(const Context& c, double hi, CalibrationFactors* f) {
  return Solve(
      [&](double s) {
        f->compute = s;
        return Serving(c.With(*f)).ttft_s * 1e3;
      },
      c.measured.ttft_ms, kMinFactor, hi);
}

void NoteBandwidth(const Solved& bw, const Efficiencies& eff, Context* c) {
  const double tpot_ms = c->measured.tpot_ms;
  if (bw.flat) {
    c->NotDerived("bandwidth", "TPOT is compute-bound in the estimate at this concurrency");
  } else if (bw.reached) {
    c->Derived("bandwidth", bw.value, "from the measured TPOT " + Fmt("%.3g", tpot_ms) + " ms");
  } else {
    c->AtBound("bandwidth", bw.value,
               "the measured TPOT needs a bandwidth efficiency outside " +
                   Fmt("%.2f", kMinFactor * eff.decode_bandwidth) + "-1");
  }
}

void NoteCompute(const Solved& cp, const Efficiencies& eff, Context* c) {
  const double ttft_ms = c->measured.ttft_ms;
  if (cp.flat) {
    c->NotDerived("compute", "TTFT is bound by reading the weights in the estimate");
  } else if (cp.reached) {
    c->Derived("compute", cp.value, "from the measured TTFT " + Fmt("%.3g", ttft_ms) + " ms");
  } else {
    c->AtBound("compute", cp.value,
               "the measured TTFT needs a prefill efficiency outside " +
                   Fmt("%.2f", kMinFactor * eff.prefill_compute) + "-1");
  }
}

}  // namespace

void FitServing(Context* c) {
  const Measurement& m = c->measured;
  if (m.tpot_ms <= 0 && m.ttft_ms <= 0) return;
  const Efficiencies eff = DefaultEfficiencies(c->request.gpu);
  Solved bw;
  Solved cp;
  // Two rounds: each solve then sees the other's factor as the first round left it.
  for (int round = 0; round < 2; ++round) {
    CalibrationFactors f = c->out.factors;
    if (m.tpot_ms > 0) {
      bw = SolveTpot(*c, 1 / eff.decode_bandwidth, &f);
      if (!bw.flat) c->out.factors.bandwidth = f.bandwidth = bw.value;
    }
    if (m.ttft_ms > 0) {
      cp = SolveTtft(*c, 1 / eff.prefill_compute, &f);
      if (!cp.flat) c->out.factors.compute = f.compute = cp.value;
    }
  }
  if (m.tpot_ms > 0) NoteBandwidth(bw, eff, c);
  if (m.ttft_ms > 0) NoteCompute(cp, eff, c);
}

}  // namespace gpuplan::calibration
