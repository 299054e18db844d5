// SPDX-License-Identifier: MIT
// A team's workloads on one pool per card type. Checked by relations that hold by
// construction of the question, not by re-deriving the pool arithmetic: demand scales with
// frequency and growth, a flat day needs no burst, a quiet night lets short batch work share
// the serving pool and a busy day does not, renting never costs more than owning the peak.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_util.h"

namespace gpuplan {
namespace {

using testing::Json;

Json Fleet(const Json& request) {
  const Json env = Json::parse(testing::ShippedEngine().Fleet(request.dump()));
  EXPECT_TRUE(env["ok"].get<bool>()) << env.dump(1).substr(0, 2000);
  return env.value("result", Json::object());
}

Json Lora(double every_days) {
  return {{"name", "lora"},
          {"request",
           {{"model", {{"preset", "llama-3.1-8b"}}},
            {"workload", {{"kind", "lora"}, {"seq_len", 2048}, {"tokens", 1e8}}}}},
          {"every_days", every_days}};
}

Json Chat(const Json& curve) {
  return {{"name", "chat"},
          {"request",
           {{"model", {{"preset", "llama-3.1-8b"}}},
            {"workload", {{"kind", "inference"}, {"prompt_tokens", 1024}, {"output_tokens", 256}}},
            {"constraints", {{"ttft_ms", 1000}, {"tpot_ms", 50}}}}},
          {"concurrency_by_hour", curve}};
}

Json On(const std::string& gpu, const std::vector<Json>& workloads, double growth = 1) {
  return {{"workloads", Json(workloads)},
          {"constraints", {{"gpus", {gpu}}, {"max_gpus", 16}}},
          {"growth", growth}};
}

double BatchHours(const Json& r) {
  return r["options"][0]["batch_pool"]["card_hours_per_day"].get<double>();
}

TEST(Fleet, BatchDemandScalesWithFrequencyAndGrowth) {
  const double weekly = BatchHours(Fleet(On("h100-sxm-80gb", {Lora(7)})));
  const double daily = BatchHours(Fleet(On("h100-sxm-80gb", {Lora(1)})));
  EXPECT_NEAR(daily / weekly, 7.0, 1e-9);
  // Growth 1.5: the same job comes round 1.5 times as often.
  const double grown = BatchHours(Fleet(On("h100-sxm-80gb", {Lora(7)}, 1.5)));
  EXPECT_NEAR(grown / weekly, 1.5, 1e-9);
  // A weekly 1-card job: the batch pool is that one card, busy a seventh of a run's day share.
  const Json o = Fleet(On("h100-sxm-80gb", {Lora(7)}))["options"][0];
  EXPECT_EQ(o["batch_pool"]["cards"], 1);
  EXPECT_EQ(o["serving_pool"]["peak_cards"], 0);
  EXPECT_EQ(o["share_pools"]["code"], "one_kind");
}

TEST(Fleet, AFlatDayNeedsNoBurstAndAQuietNightLetsShortBatchWorkShare) {
  const Json flat = Fleet(On("l40s-48gb", {Chat(Json(std::vector<int>(24, 400))), Lora(7)}));
  const Json& f = flat["options"][0];
  EXPECT_EQ(f["serving_pool"]["burst_cards"], 0);
  EXPECT_DOUBLE_EQ(f["serving_pool"]["utilization"].get<double>(), 1.0);
  EXPECT_EQ(f["share_pools"]["code"], "keep_separate");  // no quiet hour at all

  // Busy 10 hours, nearly idle 14: the peak's cards stand free all night, long enough for the
  // LoRA run on one card (1e8 tokens of Llama 3.1 8B LoRA on an L40S: about 13 h).
  std::vector<int> day(24, 2);
  for (int h = 9; h < 19; ++h) day[h] = 800;
  const Json quiet = Fleet(On("l40s-48gb", {Chat(Json(day)), Lora(7)}));
  const Json& q = quiet["options"][0];
  EXPECT_GT(q["serving_pool"]["burst_cards"].get<int>(), 0);
  EXPECT_LT(q["serving_pool"]["utilization"].get<double>(), 1.0);
  EXPECT_EQ(q["share_pools"]["code"], "share_off_peak") << q["share_pools"].dump();
  EXPECT_GE(q["share_pools"]["params"]["window_h"].get<double>(), 14);
  // Owning sizes for the peak; renting follows the curve: never dearer at the same price.
  ASSERT_FALSE(q["cost"].is_null());
  EXPECT_LT(q["cost"]["rent_per_month"].get<double>(), q["cost"]["own_per_month"].get<double>());
}

TEST(Fleet, ACardThatCannotRunEveryWorkloadIsRejectedNamingIt) {
  Json big = Lora(7);
  big["name"] = "70B full fine-tune";
  big["request"]["model"]["preset"] = "llama-3.1-70b";
  big["request"]["workload"]["kind"] = "full_finetune";
  Json req = On("l4-24gb", {Lora(7), big});
  req["constraints"]["gpus"] = {"l4-24gb", "h100-sxm-80gb"};
  const Json r = Fleet(req);
  bool l4 = false;
  for (const Json& x : r["rejected"]) {
    if (x["gpu"] == "l4-24gb") {
      l4 = true;
      EXPECT_EQ(x["workload"], "70B full fine-tune");
    }
  }
  EXPECT_TRUE(l4) << r["rejected"].dump();
}

TEST(Fleet, InputErrorsNameTheWorkloadField) {
  Json offline = {{"name", "eval"},
                  {"request",
                   {{"model", {{"preset", "llama-3.1-8b"}}},
                    {"workload", {{"kind", "inference"}, {"mode", "offline"}}}}}};
  Json env =
      Json::parse(testing::ShippedEngine().Fleet(Json({{"workloads", {Lora(7), offline}}}).dump()));
  ASSERT_FALSE(env["ok"].get<bool>());
  EXPECT_EQ(env["errors"][0]["path"], "/workloads/1/requests_per_run");
  Json bad = Lora(7);
  bad["request"]["workload"]["seq_len"] = -4;
  env =
      Json::parse(testing::ShippedEngine().Fleet(Json({{"workloads", Json::array({bad})}}).dump()));
  EXPECT_EQ(env["errors"][0]["path"], "/workloads/0/request/workload/seq_len");
  env = Json::parse(
      testing::ShippedEngine().Fleet(Json({{"workloads", Json::array({Chat({1, 2})})}}).dump()));
  EXPECT_EQ(env["errors"][0]["path"], "/workloads/0/concurrency_by_hour");
  env = Json::parse(testing::ShippedEngine().Fleet(R"({"workloads": []})"));
  EXPECT_EQ(env["errors"][0]["path"], "/workloads");
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

TEST(Fleet, OwnershipIsPurchaseOverTheYearsPlusPowerInTheUsersCurrency) {
  // One weekly LoRA job on one H100: the batch pool is that card. By hand, buying it for
  // 216,000 CNY over 3 years is 216,000 / 36 = 6,000 CNY a month; with power at 0 the cost of
  // ownership is exactly that, and the user's own hourly price (20 CNY) prices renting.
  Json req = {{"workloads", Json::array({{{"name", "lora"},
                                          {"request",
                                           {{"model", {{"preset", "llama-3.1-8b"}}},
                                            {"workload", {{"kind", "lora"}, {"tokens", 1e8}}}}},
                                          {"every_days", 7}}})},
              {"constraints", {{"gpus", {"h100-sxm-80gb"}}}},
              {"currency", {{"code", "CNY"}, {"per_usd", 7.2}}},
              {"prices", {{"h100-sxm-80gb", 20}}},
              {"ownership", {{"purchase_per_card", 216000}, {"years", 3}, {"power_per_kwh", 0}}}};
  Json env = Json::parse(testing::ShippedEngine().Fleet(req.dump()));
  ASSERT_TRUE(env["ok"].get<bool>()) << env.dump();
  Json cost = env["result"]["options"][0]["cost"];
  EXPECT_EQ(cost["currency"], "CNY");
  EXPECT_EQ(cost["own_basis"], "ownership");
  EXPECT_DOUBLE_EQ(cost["purchase_per_month"].get<double>(), 6000.0);
  EXPECT_DOUBLE_EQ(cost["own_per_month"].get<double>(), 6000.0);
  // Renting follows the user's price list: twice the hourly price, twice the rent.
  const double rent20 = cost["rent_per_month"].get<double>();
  req["prices"]["h100-sxm-80gb"] = 40;
  const double rent40 = Json::parse(testing::ShippedEngine().Fleet(
      req.dump()))["result"]["options"][0]["cost"]["rent_per_month"]
                            .get<double>();
  EXPECT_NEAR(rent40 / rent20, 2.0, 1e-12);
  req["prices"]["h100-sxm-80gb"] = 20;
  // Power, with the job run once in ten years so the card is idle all month: an idle H100
  // (700 W board) draws 15% of it, 105 W; x 24 h x 30.4 d x PUE 1.4 at 1 CNY/kWh =
  // 0.105 x 24 x 30.4 x 1.4 = 107.25 CNY (the busy hours add under 0.1).
  req["ownership"]["power_per_kwh"] = 1;
  req["workloads"][0]["every_days"] = 3650;
  env = Json::parse(testing::ShippedEngine().Fleet(req.dump()));
  cost = env["result"]["options"][0]["cost"];
  EXPECT_NEAR(cost["power_per_month"].get<double>(), 107.25, 0.1);
  req["workloads"][0]["every_days"] = 7;
  // Without the user's price list, the catalog's USD price is converted at 7.2.
  req.erase("prices");
  req.erase("ownership");
  const double cny = Json::parse(testing::ShippedEngine().Fleet(
      req.dump()))["result"]["options"][0]["cost"]["own_per_month"]
                         .get<double>();
  req["currency"] = {{"code", "USD"}};
  const double usd = Json::parse(testing::ShippedEngine().Fleet(
      req.dump()))["result"]["options"][0]["cost"]["own_per_month"]
                         .get<double>();
  EXPECT_NEAR(cny / usd, 7.2, 1e-12);
  // One purchase price cannot stand for several card types.
  req["constraints"]["gpus"] = {"h100-sxm-80gb", "l4-24gb"};
  req["ownership"] = {{"purchase_per_card", 216000}};
  env = Json::parse(testing::ShippedEngine().Fleet(req.dump()));
  ASSERT_FALSE(env["ok"].get<bool>());
  EXPECT_EQ(env["errors"][0]["path"], "/ownership/purchase_per_card");
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

TEST(Fleet, ServingReplicasAreSizedToFollowTheCurve) {
  // 768 sequences at the peak hour fit one 4-card replica on A100s, which would then stay up
  // all night; replicas of one card follow the curve down to a single card at night, and one
  // 80 GB card holds Llama 3.1 8B in bf16 (16 GB) with room for a large batch.
  std::vector<int> day(24, 16);
  for (int h = 9; h < 17; ++h) day[h] = 768;
  const Json r = Json::parse(testing::ShippedEngine().Fleet(
      Json({{"workloads",
             Json::array(
                 {{{"name", "chat"},
                   {"request",
                    {{"model", {{"preset", "llama-3.1-8b"}}},
                     {"workload",
                      {{"kind", "inference"}, {"prompt_tokens", 1024}, {"output_tokens", 256}}},
                     {"constraints", {{"ttft_ms", 1000}, {"tpot_ms", 50}}}}},
                   {"concurrency_by_hour", day}}})},
            {"constraints", {{"gpus", {"a100-sxm-80gb"}}, {"max_gpus", 16}}}})
          .dump()));
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  const Json& pool = r["result"]["options"][0]["serving_pool"];
  EXPECT_EQ(pool["min_cards"], 1);
  EXPECT_GT(pool["peak_cards"].get<int>(), 1);
  EXPECT_LT(pool["utilization"].get<double>(), 1.0);
}

}  // namespace
}  // namespace gpuplan
