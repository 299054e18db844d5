// SPDX-License-Identifier: MIT
// Wait or switch: when the best card has a queue, does waiting for it finish the
// job sooner, or cheaper, than starting now on another card?
#pragma once

#include <string>
#include <vector>

#include "core/diagnostics.h"
#include "plan/planner.h"

namespace gpuplan {

/// One card's way through the queue: wait, then run the plan's best setup for it.
struct WaitOption {
  std::string gpu_id;
  int64_t count = 0;
  double wait_s = 0;         ///< the user's expected wait for this card (0: available now)
  double run_s = 0;          ///< the job on the plan's setup for this card
  double finish_s = 0;       ///< wait + run, from now
  double finish_high_s = 0;  ///< wait + run at the upper end of its likely range (TimeBandHigh)
  double usd_total = -1;     ///< < 0: no price
  bool misses_deadline = false;
  /// Against the plan's first card: the job length (tokens) at which waiting for it and
  /// starting on this card now finish together; 0 when one of them always wins.
  double break_even_tokens = 0;
};

struct WaitOrSwitch {
  std::vector<WaitOption> options;  ///< in the plan's order
  size_t first_finisher = 0;        ///< index into options
  /// The option the verdict takes: the first to finish, or, under a deadline, the cheapest
  /// option that meets it (and the budget) at the upper end of its likely range.
  size_t chosen = 0;
  Note verdict;  ///< wait_for_best, switch_now, no_queue, cheapest_meeting_deadline
};

/// Training plans only (a serving pool waits by not serving); empty options otherwise.
WaitOrSwitch DecideWaitOrSwitch(const Question& base, const PlanResult& plan);

}  // namespace gpuplan
