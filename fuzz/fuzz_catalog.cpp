// SPDX-License-Identifier: MIT
// Any bytes as a custom catalog: the text before the first NUL is gpus.json, the rest
// models.json (a missing half is the shipped one). A catalog that loads is then used by an
// estimate and a small plan, as the page does after loading one.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string_view gpus = input.substr(0, nul);
  const std::string_view models =
      nul == std::string_view::npos ? gpuplan::EmbeddedModelsJson() : input.substr(nul + 1);
  const gpuplan::Engine engine(gpus, models);
  gpuplan::fuzz::CheckEnvelope(engine.Catalog(gpuplan::CatalogPart::kAll));
  if (!engine.CatalogOk()) return 0;
  // The first card and model of whatever loaded.
  const nlohmann::json cat = nlohmann::json::parse(engine.Catalog(gpuplan::CatalogPart::kAll));
  const auto& g = cat["result"]["gpus"];
  const auto& m = cat["result"]["models"];
  if (g.empty() || m.empty()) return 0;
  const nlohmann::json request = {
      {"model", {{"preset", m[0]["id"]}}}, {"workload", {{"kind", "lora"}}}, {"gpu", g[0]["id"]}};
  gpuplan::fuzz::CheckEnvelope(engine.Estimate(request.dump()));
  nlohmann::json plan = request;
  plan.erase("gpu");
  plan["constraints"] = {{"max_gpus", 8}};
  gpuplan::fuzz::CheckEnvelope(engine.Plan(plan.dump()));
  return 0;
}
