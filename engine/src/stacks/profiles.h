// SPDX-License-Identifier: MIT
// Framework profiles: the serving engines and training stacks a request can name,
// each a bundle of policy values (policy.h) from its project's documented defaults;
// profiles.cpp gives each value's source.
#pragma once

#include <string>
#include <vector>

#include "stacks/policy.h"

namespace gpuplan {

/// Every profile, in the order the page lists them.
const std::vector<StackProfile>& Stacks();
/// The profile with this id; nullptr when there is none.
const StackProfile* FindStack(const std::string& id);

}  // namespace gpuplan
