// SPDX-License-Identifier: MIT
// The engine's robustness properties: every figure finite, memory monotone in what should grow
// it, ZeRO-3 memory falling as cards are added, decode faster with more bandwidth, and extreme
// inputs answered with a clear error naming the field or a correct finite number, never an
// overflow.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "test_util.h"

namespace gpuplan {
namespace {

using testing::Detail;
using testing::Json;
using testing::PerGpu;
using testing::Result;

// Every number anywhere in `v` is finite; `where` names the first that is not.
bool AllFinite(const Json& v, std::string* where, const std::string& at = "") {
  if (v.is_number_float() && !std::isfinite(v.get<double>())) {
    *where = at;
    return false;
  }
  if (v.is_structured()) {
    for (const auto& [k, child] : v.items()) {
      if (!AllFinite(child, where, at + "/" + k)) return false;
    }
  }
  return true;
}

Json Training(const std::string& kind = "full_finetune") {
  return {{"model", {{"preset", "llama-3.2-1b"}}},
          {"workload", {{"kind", kind}, {"micro_batch", 2}, {"seq_len", 2048}}},
          {"gpu", "h100-sxm-80gb"}};
}

Json Serving() {
  return {{"model", {{"preset", "llama-3.1-8b"}}},
          {"workload", {{"kind", "inference"}, {"concurrency", 8}}},
          {"gpu", "h100-sxm-80gb"}};
}

TEST(Robustness, EveryFigureOfEveryCommandIsFinite) {
  std::string where;
  for (const Json& req : {Training(), Training("lora"), Training("qlora"), Serving()}) {
    const Json e = Result(req);
    EXPECT_TRUE(AllFinite(e, &where)) << where;
    Json plan = req;
    plan.erase("gpu");
    plan["constraints"] = {{"max_gpus", 64}};
    const Json p = Json::parse(testing::ShippedEngine().Plan(plan.dump()));
    ASSERT_TRUE(p["ok"].get<bool>());
    EXPECT_TRUE(AllFinite(p, &where)) << where;
  }
}

TEST(Robustness, MemoryGrowsWithSequenceAndBytesPerElement) {
  double last = 0;
  for (int seq : {512, 1024, 2048, 4096, 8192}) {
    Json r = Training();
    r["workload"]["seq_len"] = seq;
    // The saved activations (at the peak only when a pass binds rather than the optimizer
    // step).
    const double activations = Detail(Result(r), "activations.layers");
    EXPECT_GT(activations, last) << seq;
    last = activations;
  }
  // Serving weights by format: 4 < 8 < 16 < 32 bits per weight.
  last = 0;
  for (const char* w : {"awq_int4", "int8", "bf16", "fp32"}) {
    Json r = Serving();
    r["precision"] = {{"weights", w}};
    const double weights = PerGpu(Result(r), "weights");
    EXPECT_GT(weights, last) << w;
    last = weights;
  }
  // And the KV cache with its element size.
  Json fp8 = Serving();
  fp8["precision"] = {{"kv_cache", "fp8"}};
  EXPECT_LT(PerGpu(Result(fp8), "kv_cache"), PerGpu(Result(Serving()), "kv_cache"));
}

TEST(Robustness, ZeroThreeMemoryPerCardFallsAsCardsAreAdded) {
  double last = 1e300;
  for (int gpus : {1, 2, 4, 8, 16, 32, 64}) {
    Json r = Training();
    r["model"]["preset"] = "llama-3.1-8b";
    r["parallel"] = {{"gpus", gpus}, {"zero", 3}};
    const Json e = Result(r);
    const double state =
        PerGpu(e, "weights") + PerGpu(e, "gradients") + PerGpu(e, "optimizer_states");
    EXPECT_LT(state, last) << gpus;
    last = state;
  }
}

TEST(Robustness, DecodeSpeedsUpWithBandwidth) {
  // The same card with its memory bandwidth doubled: decode is bandwidth-bound at this batch,
  // so TPOT must fall (and never rise).
  const Json gpus = Json::parse(testing::ShippedEngine().Catalog(CatalogPart::kGpus))["result"];
  Json card;
  for (const Json& g : gpus["gpus"]) {
    if (g["id"] == "l40s-48gb") card = g;
  }
  ASSERT_FALSE(card.is_null());
  double last = 1e300;
  for (double scale : {0.5, 1.0, 2.0, 4.0}) {
    Json c = card;
    c["id"] = "l40s-scaled";
    c["mem_bandwidth_gb_per_s"] = card["mem_bandwidth_gb_per_s"].get<double>() * scale;
    Json r = Serving();
    r["gpu"] = c;
    const double tpot = Result(r)["performance"]["inference"]["tpot_ms"].get<double>();
    EXPECT_LT(tpot, last) << scale;
    last = tpot;
  }
}

// An extreme request gets either a correct finite answer or errors that each name a field.
void ExpectClearAnswer(const Json& req) {
  const Json env = testing::Envelope(req);
  if (env["ok"].get<bool>()) {
    std::string where;
    EXPECT_TRUE(AllFinite(env, &where)) << req.dump() << " at " << where;
    return;
  }
  ASSERT_FALSE(env["errors"].empty()) << req.dump();
  for (const Json& e : env["errors"]) {
    EXPECT_NE(e["code"], "internal_not_a_number") << req.dump();
    EXPECT_FALSE(e["message"].get<std::string>().empty()) << e.dump();
    EXPECT_NE(e["message"].get<std::string>().find_first_not_of(' '), std::string::npos);
  }
}

TEST(Robustness, ExtremeInputsGetAClearAnswer) {
  Json huge = {{"model",
                {{"params", 1e15},
                 {"layers", 4096},
                 {"hidden", 131072},
                 {"intermediate", 524288},
                 {"heads", 1024},
                 {"kv_heads", 1024},
                 {"vocab", 1000000}}},
               {"workload", {{"kind", "pretrain"}}},
               {"gpu", "h100-sxm-80gb"}};
  ExpectClearAnswer(huge);
  huge["model"].erase("params");
  ExpectClearAnswer(huge);

  Json long_seq = Training();
  long_seq["workload"]["seq_len"] = 1000000000;
  ExpectClearAnswer(long_seq);
  Json long_prompt = Serving();
  long_prompt["workload"]["prompt_tokens"] = 1000000000;
  long_prompt["workload"]["concurrency"] = 1000000;
  ExpectClearAnswer(long_prompt);

  Json zero = Training();
  zero["parallel"] = {{"gpus", 0}};
  const Json env = testing::Envelope(zero);
  ASSERT_FALSE(env["ok"].get<bool>());
  EXPECT_EQ(env["errors"][0]["path"], "/parallel/gpus");

  Json tiny = {{"model",
                {{"layers", 1},
                 {"hidden", 1},
                 {"intermediate", 1},
                 {"heads", 1},
                 {"kv_heads", 1},
                 {"vocab", 1}}},
               {"workload", {{"kind", "inference"}, {"prompt_tokens", 1}, {"output_tokens", 1}}},
               {"gpu", "h100-sxm-80gb"}};
  ExpectClearAnswer(tiny);
  Json tiny_train = tiny;
  tiny_train["workload"] = {{"kind", "full_finetune"}, {"seq_len", 1}, {"tokens", 1}};
  ExpectClearAnswer(tiny_train);

  Json many = Training();
  many["parallel"] = {{"gpus", 65536}, {"zero", 3}};
  many["workload"]["tokens"] = 1e18;
  ExpectClearAnswer(many);

  Json plan = Serving();
  plan.erase("gpu");
  plan["workload"]["concurrency"] = 100000000;
  plan["constraints"] = {{"max_gpus", 65536}};
  const Json p = Json::parse(testing::ShippedEngine().Plan(plan.dump()));
  if (p["ok"].get<bool>()) {
    std::string where;
    EXPECT_TRUE(AllFinite(p, &where)) << where;
  } else {
    EXPECT_FALSE(p["errors"].empty());
  }
}

}  // namespace
}  // namespace gpuplan
