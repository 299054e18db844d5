// SPDX-License-Identifier: MIT
// Any bytes as a request to plan (the whole search over the shipped catalog), to fleet
// (which runs a plan per workload and card) to limits (bisections and a plan per model) and to
// traffic (a plan and a sizing per card).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view request(reinterpret_cast<const char*>(data), size);
  gpuplan::fuzz::CheckEnvelope(gpuplan::fuzz::Shipped().Plan(request));
  gpuplan::fuzz::CheckEnvelope(gpuplan::fuzz::Shipped().Fleet(request));
  gpuplan::fuzz::CheckEnvelope(gpuplan::fuzz::Shipped().Limits(request));
  gpuplan::fuzz::CheckEnvelope(gpuplan::fuzz::Shipped().Traffic(request));
  return 0;
}
