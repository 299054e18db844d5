// SPDX-License-Identifier: MIT
// Calibrate's order of steps, and what the steps share: the solver, the request at another card
// count, the notes on each factor.
#include "after/calibration.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "after/calibration_steps.h"
#include "core/format.h"
#include "physics/estimate.h"
#include "physics/perf_model.h"

namespace gpuplan {
namespace calibration {

using text::Fmt;

Context::Context(const Setup& r, const Measurement& m) : request(r), measured(m), uncalibrated(r) {
  uncalibrated.calibration = CalibrationFactors{};
  out.factors = r.calibration;
  out.factors.measured_on = r.gpu.id;
}

Setup Context::With(const CalibrationFactors& f) const {
  Setup q = uncalibrated;
  q.calibration = f;
  return q;
}

void Context::Derived(const std::string& factor, double value, const std::string& how) {
  out.notes.push_back(Note{"factor_derived",
                           {{"value", value}},
                           factor + " x" + Fmt("%.3g", value) + " " + how,
                           "/calibration/" + factor});
}

void Context::NotDerived(const std::string& factor, const std::string& why) {
  out.notes.push_back(
      Note{"factor_not_derived", {}, factor + " kept: " + why, "/calibration/" + factor});
}

void Context::AtBound(const std::string& factor, double value, const std::string& what) {
  out.notes.push_back(Note{"factor_at_bound",
                           {{"value", value}},
                           factor + " x" + Fmt("%.3g", value) + " is the limit of the model: " +
                               what + "; check the card, its clocks and the setup",
                           "/calibration/" + factor});
}

Solved Solve(const std::function<double(double)>& f, double target, double lo, double hi) {
  const double flo = f(lo);
  const double fhi = f(hi);
  if (std::fabs(fhi - flo) <= 1e-9 * std::max(std::fabs(flo), std::fabs(fhi))) {
    return {1, false, true};
  }
  const bool increasing = fhi > flo;
  if (increasing ? target <= flo : target >= flo) return {lo, false, false};
  if (increasing ? target >= fhi : target <= fhi) return {hi, false, false};
  double a = std::log(lo);
  double b = std::log(hi);
  for (int i = 0; i < 60; ++i) {
    const double mid = (a + b) / 2;
    if ((f(std::exp(mid)) < target) == increasing) {
      a = mid;
    } else {
      b = mid;
    }
  }
  return {std::exp((a + b) / 2), true, false};
}

Setup At(const Setup& r, int64_t gpus) {
  Setup q = r;
  Parallel& p = q.parallel;
  p.gpus = gpus;
  if (gpus % (p.tp * p.pp * p.cp) != 0) {
    p.tp = p.pp = p.cp = p.ep = 1;
  }
  if (p.ShardGroup() <= 1) p.zero = 0;
  q.workload.global_batch = 0;
  return q;
}

double TrainingRate(const Setup& r) {
  return EstimateTraining(r, CountParams(r.model)).tokens_per_s;
}

namespace {

// Within 0.1% of no correction is no correction: a bisection's last digits are not a finding.
void Snap(CalibrationFactors* f) {
  for (double* v : {&f->compute, &f->bandwidth, &f->memory, &f->interconnect}) {
    if (std::fabs(*v - 1) < 1e-3) *v = 1;
  }
}

}  // namespace
}  // namespace calibration

CalibrationResult Calibrate(const Setup& r, const Measurement& m) {
  namespace cal = calibration;
  cal::Context c(r, m);
  const Estimate before = EstimateSetup(r, false);
  cal::FitMemory(&c);
  cal::FitAllocatorSlack(&c);
  if (r.workload.IsTraining()) {
    cal::FitTraining(&c);
  } else {
    cal::FitServing(&c);
  }
  cal::Snap(&c.out.factors);
  Setup after = r;
  after.calibration = c.out.factors;
  const Estimate calibrated = EstimateSetup(after, false);
  cal::RecordRun(calibrated, &c);
  after.calibration = c.out.factors;
  cal::Compare(before, calibrated, after, &c);
  cal::Yardstick(&c);
  cal::Diagnose(after, calibrated, &c);
  return std::move(c.out);
}

}  // namespace gpuplan
