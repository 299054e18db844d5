// SPDX-License-Identifier: MIT
// The WebAssembly binding: the only includer of <emscripten/bind.h>. It forwards strings to
// gpuplan::Engine, which never throws (C++ catch blocks are compiled out in this build, so the
// engine's own discipline is the safety net: an exception that escapes to JavaScript arrives as
// a bare pointer, and enough of them corrupt the module's memory).
// Built twice (wasm/CMakeLists.txt): gpuplan-plan binds what the page needs to plan (catalog,
// plan, estimate, version), so the tools' code (script, calibration, fleet, limits, launch,
// traffic) is left out of the module every visitor downloads; gpuplan, with
// GPUPLAN_WASM_TOOLS, binds everything and is fetched on a tool's first use.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <memory>
#include <string>

#include "gpuplan/api.h"

namespace {

std::unique_ptr<gpuplan::Engine>& Loaded() {
  static std::unique_ptr<gpuplan::Engine> engine;
  return engine;
}

// An answer as a JavaScript string, decoded by TextDecoder where its UTF-8 bytes lie. Embind's
// own std::string return first walks every byte in JavaScript (for NULs, then for the end): a
// fifth of the page's default plan in Node (18% of 5.8 ms, --cpu-prof) for its 143 KB answer.
emscripten::val Text(const std::string& s) {
  static const emscripten::val decoder = emscripten::val::global("TextDecoder").new_();
  const auto* bytes = reinterpret_cast<const unsigned char*>(s.data());
  return decoder.call<emscripten::val>(
      "decode", emscripten::val(emscripten::typed_memory_view(s.size(), bytes)));
}

constexpr const char* kNoCatalog =
    R"({"ok":false,"errors":[{"code":"no_catalog","path":"","message":"call loadCatalog first"}]})";

// Loads the catalog's gpus.json and models.json text; answers the catalog envelope.
emscripten::val LoadCatalog(const std::string& gpus_json, const std::string& models_json) {
  Loaded() = std::make_unique<gpuplan::Engine>(gpus_json, models_json);
  return Text(Loaded()->Catalog(gpuplan::CatalogPart::kAll));
}

emscripten::val Estimate(const std::string& request) {
  return Text(Loaded() ? Loaded()->Estimate(request) : kNoCatalog);
}

emscripten::val Plan(const std::string& request) {
  return Text(Loaded() ? Loaded()->Plan(request) : kNoCatalog);
}

#ifdef GPUPLAN_WASM_TOOLS
emscripten::val Script(const std::string& request) {
  return Text(Loaded() ? Loaded()->Script(request) : kNoCatalog);
}

emscripten::val Calibrate(const std::string& request) {
  return Text(Loaded() ? Loaded()->Calibrate(request) : kNoCatalog);
}

emscripten::val Fleet(const std::string& request) {
  return Text(Loaded() ? Loaded()->Fleet(request) : kNoCatalog);
}

emscripten::val Limits(const std::string& request) {
  return Text(Loaded() ? Loaded()->Limits(request) : kNoCatalog);
}

emscripten::val Launch(const std::string& request) {
  return Text(Loaded() ? Loaded()->Launch(request) : kNoCatalog);
}

emscripten::val Traffic(const std::string& request) {
  return Text(Loaded() ? Loaded()->Traffic(request) : kNoCatalog);
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
