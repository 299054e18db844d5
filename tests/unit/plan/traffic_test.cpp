// SPDX-License-Identifier: MIT
// Serving sized from traffic: Little's law holds for every answer, the rate is
// carried, the targets are met, and the cost follows the cards.
#include <gtest/gtest.h>

#include "test_util.h"

namespace gpuplan::testing {
namespace {

Json Request20(double rps, double hit) {
  return {{"model", {{"preset", "llama-3.1-8b"}}},
          {"workload", {{"kind", "inference"}}},
          {"pricing", {{"usd_per_gpu_hour", 2.0}}},
          {"constraints",
           {{"tpot_ms", 50},
            {"ttft_ms", 2000},
            {"gpus", {"h100-sxm-80gb", "l40s-48gb", "a100-sxm-80gb"}}}},
          {"traffic",
           {{"requests_per_s", rps},
            {"prompt_tokens", {{"mean", 1500}, {"p95", 6000}}},
            {"output_tokens", {{"mean", 300}, {"p95", 1200}}},
            {"prefix_cache_hit", hit}}}};
}

Json Traffic(const Json& request) { return ResultOf(ShippedEngine().Traffic(request.dump())); }

TEST(Traffic, EveryOptionCarriesTheRateWithinTheTargets) {
  const Json r = Traffic(Request20(20, 0.3));
  ASSERT_EQ(r["options"].size(), 3U) << r.dump(1);
  for (const Json& o : r["options"]) {
    const double per = o["requests_per_s_per_replica"];
    EXPECT_NEAR(per * o["replicas"].get<double>(), 20.0, 1e-9);
    EXPECT_LE(o["tpot_ms"].get<double>(), 50.0);
    EXPECT_LE(o["ttft_p95_ms"].get<double>(), 2000.0);
    // Little's law: a replica holding c sequences, each in flight W = TTFT + 300 x TPOT,
    // serves c / W requests a second; c is the smallest whole number that carries its share.
    const double w = (o["ttft_mean_ms"].get<double>() + 300 * o["tpot_ms"].get<double>()) / 1e3;
    const double c = o["concurrency_per_replica"];
    EXPECT_GE(c / w, per * (1 - 1e-9)) << o.dump();
    EXPECT_EQ(o["cards"], o["replicas"].get<int>() * o["gpus_per_replica"].get<int>());
    // $2 a card-hour; 20 requests of 1800 tokens a second = 129.6 M tokens an hour.
    EXPECT_NEAR(o["usd_per_hour"].get<double>(), 2.0 * o["cards"].get<double>(), 1e-9);
    EXPECT_NEAR(o["usd_per_million_tokens"].get<double>(), 2.0 * o["cards"].get<double>() / 129.6,
                1e-9);
    EXPECT_NEAR(o["usd_per_million_output_tokens"].get<double>(),
                2.0 * o["cards"].get<double>() / 21.6, 1e-9);
  }
  // Cheapest first: with one price, fewest cards first.
  for (size_t i = 1; i < r["options"].size(); ++i) {
    EXPECT_LE(r["options"][i - 1]["cards"].get<int>(), r["options"][i]["cards"].get<int>());
  }
}

TEST(Traffic, TheDecodeStepIsTheEstimatesStretchedByPrefill) {
  // The forward estimate at the chosen concurrency gives the unstretched TPOT; the traffic
  // answer divides it by (1 - prefill share).
  const Json r = Traffic(Request20(20, 0.3));
  for (const Json& o : r["options"]) {
    const Json e = Result({{"model", {{"preset", "llama-3.1-8b"}}},
                           {"gpu", o["gpu"]},
                           {"parallel",
                            {{"gpus", o["gpus_per_replica"]},
                             {"tp", o["replica"]["tp"]},
                             {"pp", o["replica"]["pp"]}}},
                           {"precision", {{"weights", o["replica"]["weights"]}}},
                           {"workload",
                            {{"kind", "inference"},
                             {"prompt_tokens", 1500},
                             {"output_tokens", 300},
                             {"concurrency", o["concurrency_per_replica"]}}}});
    const double tpot = e["performance"]["inference"]["tpot_ms"];
    EXPECT_NEAR(o["tpot_ms"].get<double>() * (1 - o["prefill_share"].get<double>()), tpot,
                1e-6 * tpot)
        << o["gpu"];
  }
}

TEST(Traffic, MoreTrafficNeverNeedsFewerCards) {
  const Json a = Traffic(Request20(5, 0));
  const Json b = Traffic(Request20(50, 0));
  for (const Json& x : a["options"]) {
    for (const Json& y : b["options"]) {
      if (x["gpu"] == y["gpu"]) {
        EXPECT_LE(x["cards"].get<int>(), y["cards"].get<int>()) << x["gpu"];
      }
    }
  }
}

TEST(Traffic, ThePrefixCacheShortensThePrefill) {
  // Half the prompt from the cache: the p95 prompt prefills 3000 tokens instead of 6000, a
  // little under half the time (attention grows with the square of the length).
  const Json none = Traffic(Request20(20, 0));
  const Json half = Traffic(Request20(20, 0.5));
  for (const Json& x : none["options"]) {
    for (const Json& y : half["options"]) {
      if (x["gpu"] != y["gpu"]) continue;
      const double ratio = y["ttft_p95_ms"].get<double>() / x["ttft_p95_ms"].get<double>();
      EXPECT_LT(ratio, 0.5 + 1e-9) << x["gpu"];
      EXPECT_GT(ratio, 0.4) << x["gpu"];
    }
  }
}

TEST(Traffic, BadTrafficNamesTheField) {
  Json q = Request20(20, 0);
  q["traffic"]["prompt_tokens"]["p95"] = 100;
  Json env = Json::parse(ShippedEngine().Traffic(q.dump()));
  ASSERT_FALSE(env["ok"]);
  EXPECT_EQ(env["errors"][0]["path"], "/traffic/prompt_tokens/p95");
  q = Request20(20, 0);
  q.erase("traffic");
  env = Json::parse(ShippedEngine().Traffic(q.dump()));
  ASSERT_FALSE(env["ok"]);
  EXPECT_EQ(env["errors"][0]["path"], "/traffic");
  q = Request20(20, 0);
  q["workload"]["kind"] = "lora";
  env = Json::parse(ShippedEngine().Traffic(q.dump()));
  ASSERT_FALSE(env["ok"]);
  EXPECT_EQ(env["errors"][0]["path"], "/workload/kind");
  q = Request20(20, 0);
  q["traffic"]["prefix_cache_hit"] = 1.5;
  env = Json::parse(ShippedEngine().Traffic(q.dump()));
  ASSERT_FALSE(env["ok"]);
  EXPECT_EQ(env["errors"][0]["path"], "/traffic/prefix_cache_hit");
}

}  // namespace
}  // namespace gpuplan::testing
