// SPDX-License-Identifier: MIT
// The shipped catalog through the engine's own loader, plus the cross-field rules a JSON
// Schema cannot state. Published parameter counts are the catalog's own cited figures.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "core/units.h"
#include "embedded_catalog.h"
#include "json/catalog_io.h"

namespace gpuplan {
namespace {

using Json = nlohmann::json;

json_io::LoadedCatalog Shipped(Diagnostics* errors) {
  return json_io::LoadCatalog(EmbeddedGpusJson(), EmbeddedModelsJson(), errors);
}

Json ShippedGpusJson() { return Json::parse(EmbeddedGpusJson())["gpus"]; }

TEST(Catalog, LoadsWithoutAProblem) {
  Diagnostics errors;
  const auto cat = Shipped(&errors);
  for (const auto& e : errors) ADD_FAILURE() << e.path << ": " << e.message;
  EXPECT_FALSE(cat.version.empty());
  // At least 30 model presets; catalog 2026.12.2 brought the 37 cards to 99, so a merge that
  // loses a card fails here.
  EXPECT_GE(cat.gpus.size(), 99u);
  EXPECT_GE(cat.models.size(), 30u);
}

TEST(Catalog, EveryPresetMatchesItsPublishedCount) {
  // Within 0.5% of the figure the catalog cites; a publisher that only gives a rounded figure
  // ("7B" for 6.74B) is held to 10%.
  Diagnostics errors;
  const auto cat = Shipped(&errors);
  for (const auto& p : cat.models) {
    if (p.params_published <= 0) continue;
    const double derived = static_cast<double>(CountParams(p.spec).total);
    const double tolerance = p.params_published_rounded ? 0.10 : 0.005;
    EXPECT_NEAR(derived / p.params_published, 1.0, tolerance)
        << p.id << ": derived " << derived << ", published " << p.params_published;
  }
}

TEST(Catalog, DenseFiguresAreOrderedAsTheHardwareIs) {
  // Lower precision never computes slower on the same tensor cores: fp4 >= fp8 >= bf16 >= tf32
  // and int8 >= bf16. A violation usually means a sparse figure slipped in as dense. B300 and
  // GB300 (Blackwell Ultra) cut INT8 to about 1/15 of BF16; their entries leave it out.
  for (const auto& g : ShippedGpusJson()) {
    const std::string id = g["id"];
    const auto get = [&g](const char* k) { return g.contains(k) ? g[k].get<double>() : 0.0; };
    // Cards without bf16 units (Volta, Turing) are ranked on their fp16 tensor figure.
    const double bf16 =
        get("bf16_dense_tflops") > 0 ? get("bf16_dense_tflops") : get("fp16_dense_tflops");
    if (get("tf32_dense_tflops") > 0) {
      EXPECT_LE(get("tf32_dense_tflops"), bf16) << id;
    }
    if (get("fp8_dense_tflops") > 0) {
      EXPECT_GE(get("fp8_dense_tflops"), bf16) << id;
    }
    if (get("int8_dense_tops") > 0) {
      EXPECT_GE(get("int8_dense_tops"), bf16) << id;
    }
    if (get("fp4_dense_tflops") > 0) {
      EXPECT_GE(get("fp4_dense_tflops"), get("fp8_dense_tflops")) << id;
    }
    // FP6 runs at the FP8 rate on Blackwell and at the FP4 rate on CDNA4 (MI355X): between
    // the two, where a card gives all three.
    const double fp6 = get("fp6_dense_tflops");
    if (fp6 > 0 && get("fp8_dense_tflops") > 0 && get("fp4_dense_tflops") > 0) {
      EXPECT_LE(get("fp8_dense_tflops"), fp6) << id;
      EXPECT_LE(fp6, get("fp4_dense_tflops")) << id;
    }
    EXPECT_GE(bf16, get("fp32_tflops")) << id;
  }
}

TEST(Catalog, BlockScaledFormatsRunOnThePlainFormatsUnits) {
  // MXFP8 is FP8 with a scale per 32 elements, MXFP4 and NVFP4 are FP4 with one per 32 or 16:
  // a card that runs them natively has the plain format's tensor units, so its figure.
  for (const auto& g : ShippedGpusJson()) {
    if (!g.contains("block_scaled")) continue;
    const std::string id = g["id"];
    for (const std::string f : g["block_scaled"]) {
      if (f == "mxfp8") {
        EXPECT_TRUE(g.contains("fp8_dense_tflops")) << id << ": " << f;
      }
      if (f == "mxfp4" || f == "nvfp4") {
        EXPECT_TRUE(g.contains("fp4_dense_tflops")) << id << ": " << f;
      }
    }
  }
}

TEST(Catalog, EveryCardIsSourcedAndNamedWithItsMemory) {
  std::set<std::string> ids;
  for (const auto& g : ShippedGpusJson()) {
    const std::string id = g["id"];
    EXPECT_TRUE(ids.insert(id).second) << "duplicate " << id;
    ASSERT_TRUE(g.contains("sources")) << id;
    for (const char* k : {"memory", "bandwidth", "compute", "power"}) {
      EXPECT_TRUE(g["sources"].contains(k)) << id << " has no source for " << k;
    }
    // A measured figure names its measurement (README: sources.usable_memory, sm_count,
    // block_scaled).
    for (const auto& [field, source] :
         {std::pair{"usable_memory_gib", "usable_memory"}, std::pair{"sm_count", "sm_count"},
          std::pair{"block_scaled", "block_scaled"}}) {
      if (g.contains(field)) {
        EXPECT_TRUE(g["sources"].contains(source)) << id << " has no source for " << field;
      }
    }
    // The name carries the memory size ("NVIDIA H100 SXM 80GB"), as the id does.
    const double memory =
        g.contains("memory_gib") ? g["memory_gib"].get<double>() : g["memory_gb"].get<double>();
    const std::string size = std::to_string(static_cast<int>(std::lround(memory)));
    const std::string name = g["name"];
    EXPECT_NE(name.find(size), std::string::npos) << id << ": " << name;
    EXPECT_NE(id.find(size), std::string::npos) << id;
    if (g.contains("price") && !g["price"].is_null()) {
      EXPECT_TRUE(g["price"].contains("as_of")) << id;
      EXPECT_TRUE(g["price"].value("indicative", false)) << id << ": prices are indicative";
    }
  }
}

TEST(Catalog, ContractIdsExist) {
  // The contract's example request names these ids: requests written from it must keep working.
  Diagnostics errors;
  const auto cat = Shipped(&errors);
  EXPECT_NE(cat.FindGpu("h100-sxm-80gb"), nullptr);
  EXPECT_NE(cat.FindGpu("a100-sxm-80gb"), nullptr);
  EXPECT_NE(cat.FindModel("llama-3.1-8b"), nullptr);
  EXPECT_EQ(cat.FindGpu("h100-sxm-80gb")->name, "NVIDIA H100 SXM 80GB");
}

}  // namespace
}  // namespace gpuplan
