// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <vector>

#include "physics/setup.h"

namespace gpuplan {

/// One memory-saving change to a request and what it does to the per-GPU total.
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
std::vector<Lever> MemoryLevers(const Setup& r, double base_total);

/// Levers applied together: where no single one makes a setup fit, two or three may (a full
/// fine-tune of 8B on 24 GB: paged 8-bit AdamW, full recomputation, no fp32 master).
struct LeverCombination {
  std::vector<Lever> levers;  ///< each with its code, path, value and cost in words
  double total_bytes = 0;
  double total_with_headroom_bytes = 0;
  double saved_bytes = 0;
  double time_factor = 0;  ///< all of them together; 0 where one is not in the time model
};

/// The combinations of two (and, with `at_most` 3, three) levers that make the request fit and
/// none of whose subsets does, cheapest in time first, at most five.
std::vector<LeverCombination> LeverCombinations(const Setup& r, double base_total,
                                                size_t at_most = 3);

}  // namespace gpuplan
