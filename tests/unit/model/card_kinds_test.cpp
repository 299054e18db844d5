// SPDX-License-Identifier: MIT
// Cards that are not discrete CUDA/ROCm accelerators: an inference-only card
// (Apple silicon) takes no training and no CUDA/ROCm-only serving engine, and a unified-memory
// card whose usable share is given holds only that share. The cards are given inline, so the
// rules are checked whatever the shipped catalog holds; the last tests read the shipped cards.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plan/planner.h"
#include "test_util.h"

namespace gpuplan::testing {
namespace {

// An Apple M3 Max 128GB as the catalog gives it: 128 GiB of unified LPDDR5, of which macOS 26
// lets the GPU wire 107.52 GiB by default (recommendedMaxWorkingSetSize).
Json AppleCard() {
  return {{"id", "test-m3-max-128gb"},
          {"name", "Test M3 Max 128GB"},
          {"vendor", "other"},
          {"generation", "apple-m3"},
          {"memory_gib", 128},
          {"usable_memory_gib", 107.52},
          {"unified_memory", true},
          {"inference_only", true},
          {"mem_bandwidth_gb_per_s", 400},
          {"sm_count", 40},
          {"fp32_tflops", 14.2},
          {"fp16_dense_tflops", 14.2},
          {"board_power_w", 140},
          {"form_factor", "board"},
          {"gpus_per_node", 1}};
}

Json Serving(const Json& gpu, const char* framework) {
  Json q = {{"model", {{"preset", "llama-3.1-8b"}}},
            {"gpu", gpu},
            {"workload", {{"kind", "inference"}, {"concurrency", 1}}}};
  if (framework != nullptr) q["framework"] = framework;
  return q;
}

Json Training(const Json& gpu) {
  return {{"model", {{"preset", "llama-3.1-8b"}}},
          {"gpu", gpu},
          {"workload", {{"kind", "lora"}, {"seq_len", 2048}}}};
}

std::vector<std::string> Codes(const Json& result) {
  std::vector<std::string> codes;
  for (const Json& n : result.value("infeasible", Json::array())) codes.push_back(n["code"]);
  return codes;
}

const Json* Infeasible(const Json& result, const std::string& code) {
  if (!result.contains("infeasible")) return nullptr;
  for (const Json& n : result["infeasible"]) {
    if (n["code"] == code) return &n;
  }
  return nullptr;
}

TEST(InferenceOnlyCard, TrainingIsInfeasibleAndSaysWhichCard) {
  const Json r = Result(Training(AppleCard()));
  const Json* n = Infeasible(r, "inference_only_card");
  ASSERT_NE(n, nullptr) << r["infeasible"].dump();
  EXPECT_FALSE(r["memory"]["fits"].get<bool>());
  EXPECT_NE((*n)["message"].get<std::string>().find("Test M3 Max 128GB"), std::string::npos);
  EXPECT_EQ((*n)["path"], "/gpu");
  // A LoRA of 8B fits 107 GiB with room to spare: the card, not its memory, is the reason.
  EXPECT_EQ(Infeasible(r, "exceeds_memory"), nullptr);
  // The same card without the flag trains.
  Json trains = AppleCard();
  trains.erase("inference_only");
  EXPECT_TRUE(Codes(Result(Training(trains))).empty());
}

TEST(InferenceOnlyCard, LlamaCppAndNoFrameworkServe) {
  for (const char* framework : {"llama_cpp", static_cast<const char*>(nullptr)}) {
    const Json r = Result(Serving(AppleCard(), framework));
    EXPECT_TRUE(Codes(r).empty()) << (framework ? framework : "none") << r["infeasible"].dump();
    EXPECT_TRUE(r["memory"]["fits"].get<bool>()) << (framework ? framework : "none");
  }
}

TEST(InferenceOnlyCard, CudaAndRocmEnginesAreInfeasible) {
  for (const char* framework : {"vllm", "sglang", "tensorrt_llm"}) {
    const Json r = Result(Serving(AppleCard(), framework));
    const Json* n = Infeasible(r, "engine_unsupported_on_card");
    ASSERT_NE(n, nullptr) << framework << r["infeasible"].dump();
    EXPECT_FALSE(r["memory"]["fits"].get<bool>()) << framework;
    EXPECT_EQ((*n)["path"], "/framework");
    EXPECT_NE((*n)["message"].get<std::string>().find("Test M3 Max 128GB"), std::string::npos);
    // On a CUDA card the same engine serves.
    EXPECT_EQ(Infeasible(Result(Serving("h100-sxm-80gb", framework)), "engine_unsupported_on_card"),
              nullptr)
        << framework;
  }
}

TEST(InferenceOnlyCard, PlanRejectsItWithTheEstimatesCode) {
  const gpuplan::Setup base = Parse(Training(AppleCard()));
  const std::vector<GpuSpec> cards = {base.gpu, *ShippedCatalog().FindGpu("h100-sxm-80gb")};
  Json training = Training(AppleCard());
  training.erase("gpu");
  const PlanResult t = Plan(ParseQuestion(training), cards);
  ASSERT_EQ(t.rejected.size(), 1u);
  EXPECT_EQ(t.rejected[0].gpu_id, "test-m3-max-128gb");
  EXPECT_EQ(t.rejected[0].code, "inference_only_card");
  EXPECT_EQ(t.rejected[0].path, "/gpu");
  ASSERT_EQ(t.recommendations.size(), 1u);
  EXPECT_EQ(t.recommendations[0].request.gpu.id, "h100-sxm-80gb");

  Json vllm = Serving(AppleCard(), "vllm");
  vllm.erase("gpu");
  const PlanResult v = Plan(ParseQuestion(vllm), cards);
  ASSERT_EQ(v.rejected.size(), 1u);
  EXPECT_EQ(v.rejected[0].code, "engine_unsupported_on_card");
  EXPECT_EQ(v.rejected[0].path, "/framework");

  Json llama = Serving(AppleCard(), "llama_cpp");
  llama.erase("gpu");
  const PlanResult l = Plan(ParseQuestion(llama), cards);
  for (const PlanRejection& rej : l.rejected) {
    EXPECT_NE(rej.code, "engine_unsupported_on_card") << rej.gpu_id;
  }
  bool apple = false;
  for (const PlanChoice& c : l.recommendations) apple = apple || c.request.gpu.id == base.gpu.id;
  EXPECT_TRUE(apple) << "llama.cpp serves 8B on the Apple card";
}

TEST(UnifiedMemoryCard, CapacityIsTheUsableShare) {
  // Hand-worked: 107.52 x 2^30 = 107 x 1,073,741,824 + 0.52 x 1,073,741,824
  // = 114,890,375,168 + 558,345,748.48 = 115,448,720,916.48 bytes, not the pool's 128 GiB
  // (137,438,953,472 bytes).
  const Json r = Result(Serving(AppleCard(), "llama_cpp"));
  EXPECT_NEAR(r["memory"]["capacity_bytes"].get<double>(), 115448720916.48, 1.0);
  const Json& why = r["explain"]["/memory/capacity_bytes"];
  EXPECT_NE(why["formula"].get<std::string>().find("unified"), std::string::npos) << why.dump();
  // The usable figure of a discrete card is the driver's total, not its capacity; a unified
  // card without a usable figure keeps its whole pool, as before.
  Json discrete = AppleCard();
  discrete.erase("unified_memory");
  EXPECT_EQ(Result(Serving(discrete, "llama_cpp"))["memory"]["capacity_bytes"], 128 * kGiB);
  Json unmeasured = AppleCard();
  unmeasured.erase("usable_memory_gib");
  EXPECT_EQ(Result(Serving(unmeasured, "llama_cpp"))["memory"]["capacity_bytes"], 128 * kGiB);
}

TEST(UnifiedMemoryCard, FitsIsJudgedOnTheUsableShare) {
  // Llama 3.1 70B in fp8 (70.6 GB of weights) with an 82K-token context: about 110 GiB with
  // the 20% headroom, between the usable 107.52 GiB and the 128 GiB pool.
  Json q = Serving(AppleCard(), "llama_cpp");
  q["model"] = {{"preset", "llama-3.1-70b"}};
  q["precision"] = {{"weights", "fp8"}};
  q["workload"]["prompt_tokens"] = 80000;
  q["workload"]["output_tokens"] = 2000;
  const Json unified = Result(q);
  const double need = unified["memory"]["total_with_headroom_bytes"].get<double>();
  ASSERT_GT(need, 107.52 * kGiB);
  ASSERT_LT(need, 128 * kGiB);
  EXPECT_FALSE(unified["memory"]["fits"].get<bool>());
  EXPECT_NE(Infeasible(unified, "exceeds_memory"), nullptr);
  q["gpu"].erase("unified_memory");
  EXPECT_TRUE(Result(q)["memory"]["fits"].get<bool>());
}

TEST(CatalogCard, NewFieldsAreReadAndChecked) {
  Json card = AppleCard();
  card["id"] = "test-blackwell-96gb";
  card["fp8_dense_tflops"] = 100;
  card["fp6_dense_tflops"] = 100;
  card["fp4_dense_tflops"] = 200;
  card["block_scaled"] = {"mxfp8", "nvfp4"};
  const gpuplan::Setup r = Parse(Serving(card, nullptr));
  EXPECT_DOUBLE_EQ(r.gpu.fp6_flops, 100e12);
  EXPECT_EQ(r.gpu.block_scaled, (std::vector<std::string>{"mxfp8", "nvfp4"}));
  EXPECT_TRUE(r.gpu.unified_memory);
  EXPECT_TRUE(r.gpu.inference_only);
  // Unknown, repeated or non-list formats, and a non-boolean flag, are errors at their path.
  for (const Json& bad : {Json{"fp4"}, Json{"mxfp4", "mxfp4"}, Json("nvfp4"), Json::array()}) {
    card["block_scaled"] = bad;
    const Json env = Envelope(Serving(card, nullptr));
    EXPECT_FALSE(env["ok"].get<bool>()) << bad.dump();
    EXPECT_NE(env.dump().find("/gpu/block_scaled"), std::string::npos) << env.dump();
  }
  card["block_scaled"] = {"mxfp6"};
  card["inference_only"] = "yes";
  const Json env = Envelope(Serving(card, nullptr));
  EXPECT_FALSE(env["ok"].get<bool>());
  EXPECT_NE(env.dump().find("/gpu/inference_only"), std::string::npos) << env.dump();
}

TEST(ShippedCards, AppleSiliconIsInferenceOnlyAndHoldsItsWiredLimit) {
  // The catalog's M3 Max 128GB: 107.52 GiB usable (macOS 26's default working set).
  const GpuSpec* m3 = ShippedCatalog().FindGpu("apple-m3-max-128gb");
  ASSERT_NE(m3, nullptr);
  EXPECT_TRUE(m3->inference_only);
  EXPECT_NEAR(m3->CapacityBytes(), 115448720916.48, 1.0);
  EXPECT_NEAR(
      Result(Serving("apple-m3-max-128gb", "llama_cpp"))["memory"]["capacity_bytes"].get<double>(),
      115448720916.48, 1.0);
  EXPECT_NE(Infeasible(Result(Training("apple-m3-max-128gb")), "inference_only_card"), nullptr);
  // DGX Spark shares its 128 GiB too, and trains: CUDA reports 119.70 GiB, its capacity.
  const GpuSpec* spark = ShippedCatalog().FindGpu("dgx-spark-128gb");
  ASSERT_NE(spark, nullptr);
  EXPECT_FALSE(spark->inference_only);
  EXPECT_NEAR(spark->CapacityBytes(), 119.70 * kGiB, 1.0);
  EXPECT_TRUE(Codes(Result(Training("dgx-spark-128gb"))).empty());
}

}  // namespace
}  // namespace gpuplan::testing
