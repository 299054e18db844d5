// SPDX-License-Identifier: MIT
// Closing the loop after a measurement: compare what a user measured with the estimate for the
// same setup, derive correction factors that re-apply to every later estimate, and say which
// of the three common mismatches (memory just short, throughput low, speed-up low) the numbers
// point to.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/diagnostics.h"
#include "physics/calibration_factors.h"

namespace gpuplan {

struct Setup;
struct Estimate;

/// Training throughput measured at one card count, same per-GPU batch (weak scaling).
struct ScalingPoint {
  int64_t gpus = 1;
  double tokens_per_s = 0;  ///< the whole job's
};

/// What the user measured on the request's setup (request field `measured`); 0 / < 0 = not given.
struct Measurement {
  double peak_allocated_bytes = 0;  ///< torch.cuda.max_memory_allocated()
  double peak_reserved_bytes = 0;   ///< torch.cuda.max_memory_reserved()
  bool out_of_memory = false;       ///< the run did not fit
  double tokens_per_s = 0;          ///< training, the whole job at parallel.gpus
  std::vector<ScalingPoint> scaling;
  double ttft_ms = 0;  ///< serving, median at workload.concurrency
  double tpot_ms = 0;
  double gpu_utilization = -1;   ///< 0-1, nvidia-smi's utilisation while it ran
  double gpu_memory_share = -1;  ///< 0-1, memory in use / the card's (nvidia-smi)
  double host_ram_share = -1;    ///< 0-1, host RAM in use / installed
};

/// One measured quantity next to its estimate, before and after calibration.
struct Comparison {
  std::string quantity;       ///< e.g. "peak_allocated_bytes", "tokens_per_s@4"
  std::string estimate_path;  ///< JSON pointer of the estimate's figure it is compared with
  double estimated = 0;
  double measured = 0;
  double error = 0;       ///< (estimated - measured) / measured
  bool within = false;    ///< |error| <= kSuccessLine
  double calibrated = 0;  ///< the estimate with the derived factors
  double calibrated_error = 0;
};

/// One remedy of a diagnosis, cheapest first.
struct Remedy {
  struct Change {
    std::string path;   ///< JSON pointer of the request field
    std::string value;  ///< its new value as JSON text
  };
  std::string code;
  std::string message;
  std::vector<Change> changes;  ///< every field it changes; empty for advice
  int fits = -1;  ///< 1 / 0: whether the setup then fits (memory remedies); -1 = not known
};

/// One of the three common mismatches, with the evidence and the remedies.
struct Diagnosis {
  std::string code;   ///< memory_just_short, throughput_low, speedup_low
  std::string basis;  ///< "estimate" or "measurement"
  std::map<std::string, double> params;
  std::string message;
  std::vector<Remedy> remedies;
};

/// The success line: an estimate within 10% of the measurement needs no correction.
inline constexpr double kSuccessLine = 0.10;
/// The usual monitoring targets for a well-sized run.
inline constexpr double kTargetMemoryShare = 0.85;
inline constexpr double kTargetUtilization = 0.90;
inline constexpr double kHostRamLow = 0.70;
inline constexpr double kHostRamHigh = 0.80;

/// What `calibrate` answers.
struct CalibrationResult {
  std::vector<Comparison> comparisons;
  CalibrationFactors factors;   ///< the request's own factors, replaced where a measurement says
  std::vector<Note> notes;      ///< how each factor was derived, or why it could not be
  std::vector<Note> yardstick;  ///< the monitoring targets, met or not
  std::vector<Diagnosis> diagnosis;
};

/// Derives correction factors from `m`, measured on the setup `r` describes. Pure.
CalibrationResult Calibrate(const Setup& r, const Measurement& m);

/// The mismatches the estimate itself already shows (memory just short, memory under-used,
/// low multi-card speed-up), with their usual remedies (remedies.h).
std::vector<Diagnosis> DiagnoseEstimate(const Setup& r, const Estimate& e);

}  // namespace gpuplan
