// SPDX-License-Identifier: MIT
// The mismatches an estimate already shows, before anything is measured.
#include <string>

#include "after/calibration.h"
#include "after/remedies.h"
#include "core/format.h"
#include "physics/estimate.h"

namespace gpuplan {
namespace {

std::string Percent(double fraction) { return text::Fmt("%.0f%%", fraction * 100); }

}  // namespace

std::vector<Diagnosis> DiagnoseEstimate(const Setup& r, const Estimate& e) {
  std::vector<Diagnosis> out;
  const bool memory_only = e.infeasible.size() == 1 && e.infeasible[0].code == "exceeds_memory";
  const double share = e.capacity_bytes > 0 ? e.total_with_headroom_bytes / e.capacity_bytes : 0;
  if (memory_only) {
    const double over = share - 1;
    const bool just = over <= remedies::kJustShort;
    out.push_back({just ? "memory_just_short" : "memory_short",
                   "estimate",
                   {{"over_fraction", over},
                    {"need_bytes", e.total_with_headroom_bytes},
                    {"capacity_bytes", e.capacity_bytes}},
                   "the setup needs " + Percent(over) + " more memory than the card has" +
                       (just ? ": cheap levers first, a bigger card last"
                             : ": too far for the cheap levers alone; a bigger card or more cards"),
                   remedies::Memory(r, e.total_with_headroom_bytes)});
  } else if (e.fits && share < remedies::kPlentifulShare) {
    // Memory plentiful: the card will be under-fed unless the batch grows.
    out.push_back({"throughput_low",
                   "estimate",
                   {{"memory_share", share}},
                   "memory is plentiful (" + Percent(share) +
                       " of the card with headroom): if measured throughput is low, the "
                       "bottleneck is reading or communication, not memory; check the data "
                       "pipeline first",
                   remedies::Throughput(r, e)});
  }
  if (e.has_training && r.parallel.gpus > 1 && e.fits &&
      e.training.scaling_efficiency < remedies::kLowScaling) {
    out.push_back({"speedup_low",
                   "estimate",
                   {{"scaling_efficiency", e.training.scaling_efficiency}},
                   "the estimate keeps " + Percent(e.training.scaling_efficiency) +
                       " of linear speed-up on these cards: the interconnect or the sharding "
                       "costs the rest",
                   remedies::Speedup(r, e)});
  }
  return out;
}

}  // namespace gpuplan
