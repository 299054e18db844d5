// SPDX-License-Identifier: MIT
// The steps of Calibrate (after/calibration.h), one file each: the factors the measurements fix
// (memory, training, serving), the comparisons, the monitoring targets and the diagnosis of the
// measured run. Internal to after/.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "after/calibration.h"
#include "physics/estimate.h"

namespace gpuplan::calibration {

// Bounds on a derived factor: beyond them the measurement says something other than an
// efficiency (a wrong card, a throttled clock, another setup), and the note says so.
inline constexpr double kMinFactor = 0.05;

/// Training throughput measured at one card count.
struct Point {
  int64_t gpus;
  double tokens_per_s;
};

/// One calibration under way: the setup, what was measured on it, and the answer so far.
struct Context {
  Context(const Setup& r, const Measurement& m);

  /// The request with the uncalibrated model under factors `f`.
  Setup With(const CalibrationFactors& f) const;

  // The note each fit leaves on its factor.
  void Derived(const std::string& factor, double value, const std::string& how);
  void NotDerived(const std::string& factor, const std::string& why);
  void AtBound(const std::string& factor, double value, const std::string& what);

  const Setup& request;  ///< as given, with its own factors
  const Measurement& measured;
  /// The request without factors: derived factors are absolute, relative to the uncalibrated
  /// model, not to the request's.
  Setup uncalibrated;
  std::vector<Point> points;  ///< training throughput, smallest card count first
  CalibrationResult out;
};

struct Solved {
  double value = 1;
  bool reached = false;  ///< false: the target lies outside what [lo, hi] can give
  bool flat = false;     ///< f does not depend on the factor here
};

/// Solves f(s) = target for a monotone f over [lo, hi], bisecting on log s.
Solved Solve(const std::function<double(double)>& f, double target, double lo, double hi);

/// The request at another card count, same per-GPU batch: the weak scaling a 1/2/4-card
/// measurement does. A count the model-parallel layout does not divide runs as pure data parallel.
Setup At(const Setup& r, int64_t gpus);

/// The whole job's training tokens/s the estimate gives for `r`.
double TrainingRate(const Setup& r);

/// The memory factor from the measured peak allocated (calibration_memory.cpp).
void FitMemory(Context* c);
/// The allocator slack from the measured peaks reserved and allocated (calibration_memory.cpp).
void FitAllocatorSlack(Context* c);
/// What the card held when the run fitted (measured_peak_bytes) and the fingerprint of the setup
/// it fitted with (measured_setup); an out-of-memory run clears both (calibration_memory.cpp).
void RecordRun(const Estimate& calibrated, Context* c);
/// Compute from the throughput at the smallest card count, interconnect from the speed-up over
/// the others; fills `c->points` (calibration_training.cpp).
void FitTraining(Context* c);
/// Bandwidth from the measured TPOT, compute from the measured TTFT (calibration_serving.cpp).
void FitServing(Context* c);

/// Each measured quantity next to the estimate before and after calibration
/// (calibration_compare.cpp).
void Compare(const Estimate& before, const Estimate& after, const Setup& calibrated, Context* c);

/// The share of the card's memory the run used at peak; -1 when nothing measured says
/// (calibration_yardstick.cpp).
double MemoryShare(const Setup& r, const Measurement& m);
/// The monitoring targets (calibration.h), met or not (calibration_yardstick.cpp).
void Yardstick(Context* c);

/// Which of the three mismatches the measured run shows, with the remedies checked on the
/// calibrated request (calibration_diagnosis.cpp).
void Diagnose(const Setup& calibrated, const Estimate& after, Context* c);

}  // namespace gpuplan::calibration
