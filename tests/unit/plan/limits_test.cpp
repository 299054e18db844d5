// SPDX-License-Identifier: MIT
// Reverse questions: each limit is the edge of the forward estimate, the search
// finds the edge of any monotone predicate, and the largest model per purpose is the largest.
#include "plan/limits.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace gpuplan::testing {
namespace {

TEST(Limits, LargestTrueFindsTheEdgeOfAMonotonePredicate) {
  EXPECT_EQ(LargestTrue(1000, [](int64_t n) { return n <= 37; }), 37);
  EXPECT_EQ(LargestTrue(1000, [](int64_t n) { return n <= 64; }), 64);  // a power of two
  EXPECT_EQ(LargestTrue(10, [](int64_t) { return true; }), 10);         // capped
  EXPECT_EQ(LargestTrue(10, [](int64_t) { return false; }), 0);
  EXPECT_EQ(LargestTrue(1, [](int64_t n) { return n <= 1; }), 1);
  EXPECT_EQ(LargestTrue(0, [](int64_t) { return true; }), 0);
  const int64_t big = int64_t{1} << 40;
  EXPECT_EQ(LargestTrue(big, [&](int64_t n) { return n <= big - 3; }), big - 3);
}

Json Limits(const Json& request) { return ResultOf(ShippedEngine().Limits(request.dump())); }

bool Fits(Json request) { return Result(request)["memory"]["fits"].get<bool>(); }

TEST(Limits, TrainingLimitsAreTheEdgeOfWhatFits) {
  const Json q = {{"model", {{"preset", "llama-3.1-8b"}}},
                  {"gpu", "h100-sxm-80gb"},
                  {"workload", {{"kind", "lora"}, {"seq_len", 2048}}}};
  const Json l = Limits(q)["limits"];
  const int64_t mb = l["max_micro_batch"].get<int64_t>();
  ASSERT_GT(mb, 0);
  Json at = q;
  at["workload"]["micro_batch"] = mb;
  EXPECT_TRUE(Fits(at));
  at["workload"]["micro_batch"] = mb + 1;
  EXPECT_FALSE(Fits(at));
  const int64_t seq = l["max_seq_len"].get<int64_t>();
  ASSERT_GT(seq, 2048);
  at = q;
  at["workload"]["seq_len"] = seq;
  EXPECT_TRUE(Fits(at));
  at["workload"]["seq_len"] = seq + 1;
  EXPECT_FALSE(Fits(at));
}

TEST(Limits, ServingLimitsAreTheEdgeOfWhatFitsAndMeetsTheTargets) {
  const Json q = {{"model", {{"preset", "llama-3.1-8b"}}},
                  {"gpu", "rtx-4090-24gb"},
                  {"workload", {{"kind", "inference"}, {"concurrency", 4}, {"output_tokens", 256}}},
                  {"constraints", {{"tpot_ms", 60}}}};
  const Json l = Limits(q)["limits"];
  const int64_t ctx = l["max_context_tokens"].get<int64_t>();
  ASSERT_GT(ctx, 256);
  const auto serves = [&](int64_t prompt, int64_t concurrency) {
    Json at = q;
    at["workload"]["prompt_tokens"] = prompt;
    at["workload"]["concurrency"] = concurrency;
    const Json r = Result(at);
    return r["memory"]["fits"].get<bool>() &&
           r["performance"]["inference"]["meets_targets"].get<bool>();
  };
  EXPECT_TRUE(serves(ctx - 256, 4));
  EXPECT_FALSE(serves(ctx - 256 + 1, 4));
  // One sequence alone reaches at least as far as four together.
  const int64_t alone = l["max_context_alone"].get<int64_t>();
  EXPECT_GE(alone, ctx);
  EXPECT_TRUE(serves(alone - 256, 1));
  EXPECT_FALSE(serves(alone - 256 + 1, 1));
  // The concurrency is the estimate's own.
  EXPECT_EQ(l["max_concurrency"], Result(q)["performance"]["inference"]["max_concurrency"]);
}

TEST(Limits, ContextStopsAtTheModelsOwn) {
  // Llama 3.1 8B (max_position_embeddings 131072) alone on an H200 (141 GB) in fp8 reaches its
  // whole context: 131072 x 65,536 B of fp8 KV cache is 8 GiB next to 8 GB of weights.
  const Json l = Limits({{"model", {{"preset", "llama-3.1-8b"}}},
                         {"gpu", "h200-sxm-141gb"},
                         {"precision", {{"weights", "fp8"}, {"kv_cache", "fp8"}}},
                         {"workload", {{"kind", "inference"}}}})["limits"];
  EXPECT_EQ(l["max_context_alone"], 131072);
  EXPECT_TRUE(l["context_alone_at_model_limit"].get<bool>());
}

TEST(Limits, TheLargestModelPerPurposeIsTheLargestThatRuns) {
  const Json r = Limits({{"model", {{"preset", "llama-3.1-8b"}}},
                         {"gpu", "rtx-4090-24gb"},
                         {"workload", {{"kind", "inference"}}}});
  const Json models =
      Json::parse(ShippedEngine().Catalog(CatalogPart::kModels))["result"]["models"];
  ASSERT_EQ(r["largest_models"].size(), 5U);
  for (const Json& m : r["largest_models"]) {
    ASSERT_FALSE(m["model"].is_null()) << m.dump();
    const std::string kind = m["kind"];
    const double params = m["params"];
    // Every catalog model with more parameters has no plan on one 4090 for this purpose.
    for (const Json& other : models) {
      Json q = {{"model", {{"preset", other["id"]}}},
                {"workload", {{"kind", kind}}},
                {"constraints", {{"gpus", {"rtx-4090-24gb"}}, {"max_gpus", 1}}}};
      const Json plan = Json::parse(ShippedEngine().Plan(q.dump()));
      if (!plan.value("ok", false)) continue;
      const bool runs = !plan["result"]["recommendations"].empty();
      const Json counted = Result({{"model", {{"preset", other["id"]}}},
                                   {"gpu", "rtx-4090-24gb"},
                                   {"workload", {{"kind", kind}}}});
      const double other_params = counted["model"]["params_total"];
      if (other_params > params) {
        EXPECT_FALSE(runs) << kind << ": " << other["id"];
      }
      if (other["id"] == m["model"]) {
        EXPECT_TRUE(runs) << kind;
      }
    }
  }
  // QLoRA's 4-bit base takes a larger model than LoRA's 16-bit one.
  EXPECT_GT(r["largest_models"][3]["params"].get<double>(),
            r["largest_models"][2]["params"].get<double>());
}

TEST(Limits, NeedsACard) {
  const Json env = Json::parse(ShippedEngine().Limits(
      R"({"model": {"preset": "llama-3.1-8b"}, "workload": {"kind": "lora"}})"));
  ASSERT_FALSE(env["ok"]);
  EXPECT_EQ(env["errors"][0]["path"], "/gpu");
}

}  // namespace
}  // namespace gpuplan::testing
