// SPDX-License-Identifier: MIT
// What the request's stack adds to the estimate (stacks/policy.h): a serving engine's own
// settings on the card, the KV pool it preallocates, and whether the request fits in it.
// Kept apart so the page's build can compile it for size, off the planner's hot path but
// for KvPool.
#pragma once

#include "physics/estimate.h"
#include "physics/setup.h"

namespace gpuplan {

/// The KV cache the request's serving engine sets aside per GPU for this breakdown; the
/// breakdown's own KV cache when no engine was named.
double KvPool(const Setup& r, const MemoryBreakdown& b);

/// Whether the breakdown fits its card: its total with the planning headroom within the
/// card (contract: headroom), and its KV cache within the pool its serving engine sets aside
/// at start. The pool itself is the engine's own arithmetic, with no headroom or allocator
/// slack inside it: the headroom applies to the card.
bool FitsCard(const Setup& r, const MemoryBreakdown& b);

/// The profile's figures on `e` (which holds the memory): a serving engine's defaults on
/// this card, its KV pool, and whether the request's KV cache fits in it.
void AddFramework(const Setup& r, Estimate* e);

}  // namespace gpuplan
