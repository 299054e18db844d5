// SPDX-License-Identifier: MIT
#pragma once

#include <map>
#include <string>
#include <vector>

#include "gpuplan/diagnostics.h"
#include "gpuplan/levers.h"
#include "gpuplan/memory_model.h"
#include "gpuplan/request.h"

namespace gpuplan {

/// Board power of the job (issue 4 adds node overheads and site limits).
struct PowerEstimate {
  double gpu_watts = 0;
  double node_watts = 0;
  double total_watts = 0;
};

/// Everything `estimate` reports for one fixed setup.
struct Estimate {
  ParamCounts params;
  MemoryResult memory;
  double capacity_bytes = 0;
  double total_bytes = 0;
  double total_with_headroom_bytes = 0;
  bool fits = false;
  double host_ram_bytes = 0;  ///< per node
  int64_t gpus_per_node_used = 1;
  PowerEstimate power;
  std::vector<Note> infeasible;
  std::vector<Note> warnings;
  std::map<std::string, Explanation> explain;  ///< keyed by the result's JSON pointer
  std::vector<Lever> levers;                   ///< memory-saving changes, best saving first
};

/// Evaluates one validated request. Pure: no I/O, no clock. `with_levers` also evaluates
/// each memory-saving lever on its own (MISSION M8).
Estimate EstimateSetup(const Request& r, bool with_levers = true);

}  // namespace gpuplan
