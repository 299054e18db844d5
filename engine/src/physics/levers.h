// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <vector>

#include "physics/request.h"

namespace gpuplan {

/// One memory-saving change to a request and what it does to the per-GPU total (MISSION M8).
struct Lever {
  std::string code;   ///< stable id, e.g. "full_recompute"
  std::string path;   ///< JSON pointer of the request field it changes
  std::string value;  ///< the new value, as JSON text
  double total_bytes = 0;
  double total_with_headroom_bytes = 0;
  double saved_bytes = 0;  ///< base total minus this lever's total
  bool fits = false;
  std::string cost;        ///< what it costs, in words
  double time_factor = 0;  ///< training: run time / the request's; serving: TPOT ratio; 0 unknown
};

/// Every single-step lever that lowers memory for this request, each evaluated on its own,
/// best saving first. `base_total` is the request's own per-GPU total.
std::vector<Lever> MemoryLevers(const Request& r, double base_total);

}  // namespace gpuplan
