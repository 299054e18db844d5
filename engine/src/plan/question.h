// SPDX-License-Identifier: MIT
// What was asked: the setup as the request gives it, and what only the planner reads of the
// request (its bounds and preferences, where the model came from, the stack settings it named).
// The searches vary small values of `setup`; the question itself is never copied per candidate.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "physics/setup.h"
#include "stacks/settings.h"

namespace gpuplan {

/// Bounds and preferences for `plan` (contract: constraints; the site limits and latency
/// targets every estimate checks are the setup's Targets).
struct Constraints {
  int64_t max_gpus = 0;  ///< 0 = no limit given
  std::vector<std::string> gpus;
  std::string objective = "default";
  double budget_usd = 0;
  double deadline_s = 0;
  bool quantize = false;                 ///< plan may try lighter weight formats for serving
  std::map<std::string, double> wait_s;  ///< expected queue per card id (wait or switch)
};

/// One validated request.
struct Question {
  Setup setup;               ///< the setup as asked, its stack's policies resolved
  std::string model_preset;  ///< catalog id when the model came from a preset
  std::string model_repo;    ///< its Hugging Face repository, when the catalog names one
  /// The config.json the model was read from (the preset's or the request's), as JSON text;
  /// empty for explicit numbers. The measurement script rebuilds the model from it.
  std::string model_config;
  Constraints constraints;
  TrainingOverrides training;  ///< the stack settings the request named (launch writes them)
  ServingOverrides serving;
};

}  // namespace gpuplan
