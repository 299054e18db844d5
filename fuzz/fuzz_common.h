// SPDX-License-Identifier: MIT
// What every fuzz target checks of an envelope: valid JSON, `ok` a boolean, and on failure a
// non-empty list of errors each with a code, a JSON-pointer path and a message. Anything else,
// and every crash, hang, leak or sanitizer report, is a finding.
#pragma once

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "embedded_catalog.h"
#include "gpuplan/api.h"

namespace gpuplan::fuzz {

inline const Engine& Shipped() {
  static const Engine engine(EmbeddedGpusJson(), EmbeddedModelsJson());
  return engine;
}

inline void CheckEnvelope(const std::string& text) {
  const nlohmann::json env = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (env.is_discarded() || !env.is_object() || !env.contains("ok") || !env["ok"].is_boolean()) {
    std::abort();
  }
  if (env["ok"].get<bool>()) {
    if (!env.contains("result")) std::abort();
    return;
  }
  const auto& errors = env["errors"];
  if (!errors.is_array() || errors.empty()) std::abort();
  for (const auto& e : errors) {
    if (!e["code"].is_string() || !e["path"].is_string() || !e["message"].is_string() ||
        e["message"].get<std::string>().empty()) {
      std::abort();
    }
    // A figure that is not a number is a bug, however politely reported.
    if (e["code"] == "internal_not_a_number") std::abort();
  }
}

}  // namespace gpuplan::fuzz
