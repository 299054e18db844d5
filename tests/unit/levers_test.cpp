// SPDX-License-Identifier: MIT
// MISSION M8: an almost-fitting setup names the lever that fixes it, and each lever's figure is
// the same estimate the user gets by making that change.
#include <gtest/gtest.h>

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
