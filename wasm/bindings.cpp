// SPDX-License-Identifier: MIT
// The WebAssembly binding: the only includer of <emscripten/bind.h>. It forwards strings to
// gpuplan::Engine, which never throws (C++ catch blocks are compiled out in this build, so the
// engine's own discipline is the safety net: shared/TOOLCHAIN.md section 4).
// Built twice (wasm/CMakeLists.txt): gpuplan-plan binds what the page needs to plan (catalog,
// plan, estimate, version), so the tools' code (script, calibration, fleet, limits, launch,
// traffic) is left out of the module every visitor downloads; gpuplan, with
// GPUPLAN_WASM_TOOLS, binds everything and is fetched on a tool's first use.
#include <emscripten/bind.h>

#include <memory>
#include <string>

#include "gpuplan/api.h"

namespace {

std::unique_ptr<gpuplan::Engine>& Loaded() {
  static std::unique_ptr<gpuplan::Engine> engine;
  return engine;
}

constexpr const char* kNoCatalog =
    R"({"ok":false,"errors":[{"code":"no_catalog","path":"","message":"call loadCatalog first"}]})";

// Loads the catalog's gpus.json and models.json text; answers the catalog envelope.
std::string LoadCatalog(const std::string& gpus_json, const std::string& models_json) {
  Loaded() = std::make_unique<gpuplan::Engine>(gpus_json, models_json);
  return Loaded()->Catalog(gpuplan::CatalogPart::kAll);
}

std::string Estimate(const std::string& request) {
  return Loaded() ? Loaded()->Estimate(request) : kNoCatalog;
}

std::string Plan(const std::string& request) {
  return Loaded() ? Loaded()->Plan(request) : kNoCatalog;
}

#ifdef GPUPLAN_WASM_TOOLS
std::string Script(const std::string& request) {
  return Loaded() ? Loaded()->Script(request) : kNoCatalog;
}

std::string Calibrate(const std::string& request) {
  return Loaded() ? Loaded()->Calibrate(request) : kNoCatalog;
}

std::string Fleet(const std::string& request) {
  return Loaded() ? Loaded()->Fleet(request) : kNoCatalog;
}

std::string Limits(const std::string& request) {
  return Loaded() ? Loaded()->Limits(request) : kNoCatalog;
}

std::string Launch(const std::string& request) {
  return Loaded() ? Loaded()->Launch(request) : kNoCatalog;
}

std::string Traffic(const std::string& request) {
  return Loaded() ? Loaded()->Traffic(request) : kNoCatalog;
}

#endif  // GPUPLAN_WASM_TOOLS

std::string Version() { return std::string(gpuplan::Version()); }

}  // namespace

EMSCRIPTEN_BINDINGS(gpuplan) {
  emscripten::function("loadCatalog", &LoadCatalog);
  emscripten::function("estimate", &Estimate);
  emscripten::function("plan", &Plan);
  emscripten::function("version", &Version);
#ifdef GPUPLAN_WASM_TOOLS
  emscripten::function("script", &Script);
  emscripten::function("calibrate", &Calibrate);
  emscripten::function("fleet", &Fleet);
  emscripten::function("limits", &Limits);
  emscripten::function("launch", &Launch);
  emscripten::function("traffic", &Traffic);
#endif
}
