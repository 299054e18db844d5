// SPDX-License-Identifier: MIT
// Helpers shared by the unit tests: models from config.json text, requests through the API.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "embedded_catalog.h"
#include "gpuplan/api.h"
#include "json/catalog_io.h"
#include "json/hf_config.h"
#include "json/request_io.h"
#include "model/model_spec.h"

namespace gpuplan::testing {

using Json = nlohmann::json;

/// A ModelSpec read from config.json text, failing the test on any diagnostic.
inline ModelSpec FromHf(const std::string& text) {
  Diagnostics errors;
  std::vector<Note> warnings;
  const json_io::ReadContext ctx{&errors, nullptr};
  const auto spec =
      json_io::ModelFromHfConfig(Json::parse(text), "/model/hf_config", ctx, &warnings);
  EXPECT_TRUE(errors.empty()) << (errors.empty() ? "" : errors[0].path + " " + errors[0].message);
  return spec.value_or(ModelSpec{});
}

/// The engine with the shipped catalog.
inline const Engine& ShippedEngine() {
  static const Engine engine(EmbeddedGpusJson(), EmbeddedModelsJson());
  return engine;
}

/// The shipped catalog as the engine loads it.
inline const json_io::LoadedCatalog& ShippedCatalog() {
  static const json_io::LoadedCatalog cat = [] {
    Diagnostics errors;
    return json_io::LoadCatalog(EmbeddedGpusJson(), EmbeddedModelsJson(), &errors);
  }();
  return cat;
}

/// A request read as the engine reads it (every default filled in), failing the test on any
/// error; the card may be left out.
inline Question ParseQuestion(const Json& j) {
  json_io::ParsedRequest parsed;
  Diagnostics errors;
  EXPECT_TRUE(json_io::ParseRequest(j.dump(), ShippedCatalog(), false, &parsed, &errors))
      << (errors.empty() ? "" : errors[0].path + " " + errors[0].message);
  return parsed.request;
}

/// The setup of such a request, its stack's policies resolved.
inline Setup Parse(const Json& j) { return ParseQuestion(j).setup; }

/// Runs an estimate; returns the whole envelope.
inline Json Envelope(const Json& request) {
  return Json::parse(ShippedEngine().Estimate(request.dump()));
}

/// The result of an envelope that must be ok (any engine call's answer text).
inline Json ResultOf(const std::string& envelope_text) {
  const Json env = Json::parse(envelope_text);
  EXPECT_TRUE(env.value("ok", false)) << env.dump(1).substr(0, 600);
  return env.value("result", Json::object());
}

/// Runs an estimate that must succeed; returns its result.
inline Json Result(const Json& request) {
  return ResultOf(ShippedEngine().Estimate(request.dump()));
}

inline double PerGpu(const Json& result, const char* part) {
  return result["memory"]["per_gpu_bytes"][part].get<double>();
}

inline double Detail(const Json& result, const char* key) {
  const Json& d = result["memory"]["detail"];
  return d.contains(key) ? d[key].get<double>() : 0.0;
}

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

}  // namespace gpuplan::testing
