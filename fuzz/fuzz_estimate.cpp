// SPDX-License-Identifier: MIT
// Any bytes as a request to estimate, script, calibrate and launch (they share the request
// reader).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view request(reinterpret_cast<const char*>(data), size);
  const gpuplan::Engine& engine = gpuplan::fuzz::Shipped();
  gpuplan::fuzz::CheckEnvelope(engine.Estimate(request));
  gpuplan::fuzz::CheckEnvelope(engine.Script(request));
  gpuplan::fuzz::CheckEnvelope(engine.Calibrate(request));
  gpuplan::fuzz::CheckEnvelope(engine.Launch(request));
  return 0;
}
