// SPDX-License-Identifier: MIT
// Correction factors a measured run gives (after/calibration.h derives them); the physics
// applies them to its assumptions.
#pragma once

#include <string>

namespace gpuplan {

/// Multipliers on the engine's assumptions, 1 = uncalibrated (request field `calibration`).
struct CalibrationFactors {
  double compute = 1;           ///< on the achieved fraction of the matmul peak (training, prefill)
  double bandwidth = 1;         ///< on the achieved fraction of memory bandwidth while decoding
  double memory = 1;            ///< on the modelled parts of memory: activations and buffers
  double interconnect = 1;      ///< on the bandwidth collectives achieve over links and network
  double allocator_slack = -1;  ///< measured reserved / allocated - 1; < 0 = the request's
  std::string measured_on;      ///< the card id the factors were measured on ("" = not said)
  /// What the measured card held at the run's peak: torch's peak reserved plus what the engine
  /// puts outside its allocator (context, communicators, graphs); 0 = no run that fitted.
  double measured_peak_bytes = 0;
  /// The measured setup's memory fingerprint (MemoryFingerprint): the peak is evidence for
  /// this setup on `measured_on` and for no other ("" = none).
  std::string measured_setup;

  bool Any() const {
    return compute != 1 || bandwidth != 1 || memory != 1 || interconnect != 1 ||
           allocator_slack >= 0 || measured_peak_bytes > 0;
  }
};

}  // namespace gpuplan
