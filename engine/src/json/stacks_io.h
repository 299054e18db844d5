// SPDX-License-Identifier: MIT
// The training stacks and serving engines a request can name: catalog/stacks.json, compiled
// into the engine and read here into the policy structs the physics takes (stacks/policy.h).
// Each policy value in the file carries its own source; `StackValueSources` gives them back.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/diagnostics.h"
#include "stacks/policy.h"

namespace gpuplan::json_io {

/// Every profile of the shipped catalog/stacks.json, in the file's order (the page's).
const std::vector<StackProfile>& Stacks();
/// The profile with this id; null when there is none.
const StackProfile* FindStack(std::string_view id);

/// Reads stacks.json text. False, with each problem's JSON path in `errors`, when it is not a
/// valid one; the strings the profiles point to live as long as the program.
bool ReadStacks(std::string_view text, std::vector<StackProfile>* out, Diagnostics* errors);

/// One policy value of a profile and where it comes from: ("engine.memory_fraction", source).
std::vector<std::pair<std::string, std::string>> StackValueSources(std::string_view id);

/// The text of catalog/stacks.json as compiled in.
std::string_view EmbeddedStacksJson();

}  // namespace gpuplan::json_io
