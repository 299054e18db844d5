// SPDX-License-Identifier: MIT
// An almost-fitting setup names the lever that fixes it, and each lever's figure is
// the same estimate the user gets by making that change.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "test_util.h"

namespace gpuplan {
namespace {

using testing::Json;
using testing::Result;

Json ContractExample() {
  // The contract's request: LoRA on Llama 3.1 8B, micro-batch 4 x 4096 tokens, no full
  // recomputation: 85 GB of saved activations alone, which no 80 GB card holds.
  return {
      {"model", {{"preset", "llama-3.1-8b"}}},
      {"workload", {{"kind", "lora"}, {"micro_batch", 4}, {"seq_len", 4096}, {"grad_accum", 8}}},
      {"memory_techniques", {{"recompute", "selective"}, {"flash_attention", true}}},
      {"parallel", {{"gpus", 8}, {"zero", 2}}},
      {"gpu", "h100-sxm-80gb"}};
}

TEST(Levers, AlmostFitsNamesTheFix) {
  const Json r = Result(ContractExample());
  EXPECT_FALSE(r["memory"]["fits"].get<bool>());
  ASSERT_FALSE(r["levers"].empty());
  const Json& best = r["levers"][0];
  EXPECT_EQ(best["code"], "full_recompute");
  EXPECT_TRUE(best["fits"].get<bool>());
  const std::string message = r["infeasible"][0]["message"];
  EXPECT_NE(message.find("/memory_techniques/recompute"), std::string::npos) << message;
}

TEST(Levers, EachLeverIsTheEstimateOfItsChange) {
  const Json r = Result(ContractExample());
  for (const auto& lever : r["levers"]) {
    Json changed = ContractExample();
    const std::string path = lever["change"]["path"];
    changed[Json::json_pointer(path)] = lever["change"]["value"];
    if (lever["code"] == "halve_micro_batch") changed["workload"]["grad_accum"] = 16;
    if (lever["code"] == "qlora_instead") changed["precision"] = {{"weights", "nf4"}};
    EXPECT_EQ(Result(changed)["memory"]["total_bytes"], lever["total_bytes"]) << lever["code"];
    EXPECT_GT(lever["saved_bytes"].get<double>(), 0);
  }
}

TEST(Levers, InferenceOffersKvAndWeightFormats) {
  const Json r =
      Result({{"model", {{"preset", "llama-3.1-70b"}}},
              {"workload", {{"kind", "inference"}, {"prompt_tokens", 32768}, {"concurrency", 8}}},
              {"gpu", "h100-sxm-80gb"}});
  std::vector<std::string> codes;
  for (const auto& l : r["levers"]) codes.push_back(l["code"]);
  for (const char* c : {"fp8_kv_cache", "fp8_weights", "awq_int4_weights", "halve_concurrency"}) {
    EXPECT_NE(std::find(codes.begin(), codes.end(), c), codes.end()) << c;
  }
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan::testing {
namespace {

TEST(LeverCombinations, WhereNoSingleLeverFitsTwoOrThreeTogetherDo) {
  // Llama 3.1 8B fully fine-tuned on one RTX 5090 32GB: 8,030,261,248 bf16 weights are
  // 16,060,522,496 B = 14.96 GiB, and mixed-precision AdamW adds 16 bytes a parameter, so no
  // single change fits. Paged 8-bit AdamW (the moments leave the GPU's allocator), stepping in
  // backward (one gradient alive at a time) and full recomputation together do: the recipe
  // people run, above the weights' 14.96 x 1.2 = 17.95 GiB with headroom, under 32 GiB.
  const Json r =
      Result({{"model", {{"preset", "llama-3.1-8b"}}},
              {"workload", {{"kind", "full_finetune"}, {"micro_batch", 1}, {"seq_len", 2048}}},
              {"gpu", "rtx-5090-32gb"}});
  ASSERT_FALSE(r["memory"]["fits"].get<bool>());
  for (const Json& l : r["levers"]) EXPECT_FALSE(l["fits"].get<bool>()) << l["code"];
  ASSERT_FALSE(r["lever_combinations"].empty());
  bool recipe = false;
  bool job_changed_seen = false;
  for (const Json& c : r["lever_combinations"]) {
    std::vector<std::string> codes;
    bool changes_job = false;
    for (const Json& l : c["levers"]) {
      codes.push_back(l["code"]);
      changes_job = changes_job || l["change"]["path"] == "/workload/kind";
    }
    EXPECT_FALSE(job_changed_seen && !changes_job)
        << "a combination that keeps the job comes first";
    job_changed_seen = job_changed_seen || changes_job;
    EXPECT_LE(c["total_with_headroom_bytes"].get<double>(), 32.0 * 1073741824.0);
    std::sort(codes.begin(), codes.end());
    if (codes ==
        std::vector<std::string>{"full_recompute", "optimizer_in_backward", "paged_adamw_8bit"}) {
      recipe = true;
      EXPECT_GT(c["total_with_headroom_bytes"].get<double>(), 17.95 * 1073741824.0);
      EXPECT_GT(c["time_factor"].get<double>(), 1.0);  // recomputation costs time
    }
  }
  EXPECT_TRUE(recipe);
  const std::string why = r["infeasible"][0]["message"];
  EXPECT_NE(why.find("no single change fits, but together"), std::string::npos) << why;
}

}  // namespace
}  // namespace gpuplan::testing
