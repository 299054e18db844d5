// SPDX-License-Identifier: MIT
// Prices by market and cards a buyer can get and run: each card's offers are read per market
// (pricing.market), export SKUs and restricted cards are neither priced nor ranked before the
// cards sold in the market, end-of-life cards rank after current ones, and a stack that has no
// build for a card refuses it with the stack's own reason.
#include "model/market.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "plan/planner.h"
#include "test_util.h"

namespace gpuplan::testing {
namespace {

Offer Rental(const char* market, const char* cls, double price, const char* currency) {
  Offer o;
  o.market = market;
  o.provider = std::string("p-") + cls;
  o.provider_class = cls;
  o.price = price;
  o.currency = currency;
  o.as_of = "2026-11";
  o.source = "test";
  return o;
}

GpuSpec CardWith(CardSupply s) {
  GpuSpec g;
  g.id = "test-card";
  g.name = "Test Card";
  g.supply = std::make_shared<CardSupply>(std::move(s));
  return g;
}

ExchangeRates Rates() {
  ExchangeRates r;
  r.usd_per_unit["CNY"] = 0.14;  // a round rate, so the conversions below are exact by hand
  return r;
}

MarketChoice In(const char* market, const char* cls = "") {
  MarketChoice c;
  c.market = market;
  c.provider_class = cls;
  return c;
}

TEST(ApplyMarket, TheLowestRentalOfTheMarketPricesTheCard) {
  CardSupply s;
  s.offers = {Rental("global", "specialty_cloud", 2.0, "USD"),
              Rental("global", "marketplace", 1.5, "USD"),
              Rental("cn", "marketplace", 10.0, "CNY")};
  Offer buy = Rental("global", "purchase", 20000, "USD");
  buy.purchase = true;
  s.offers.push_back(buy);  // a purchase never prices an hour
  GpuSpec g = CardWith(s);

  ApplyMarket(In("global"), Rates(), &g);
  EXPECT_EQ(g.market_status, MarketStatus::kOffered);
  ASSERT_TRUE(g.usd_per_hour.has_value());
  EXPECT_DOUBLE_EQ(*g.usd_per_hour, 1.5);
  EXPECT_EQ(g.offer, 1);

  // One provider class only: the specialty cloud's $2.00.
  ApplyMarket(In("global", "specialty_cloud"), Rates(), &g);
  EXPECT_DOUBLE_EQ(*g.usd_per_hour, 2.0);
  EXPECT_EQ(g.offer, 0);

  // China: CNY 10.00 at 0.14 USD per CNY = $1.40.
  ApplyMarket(In("cn"), Rates(), &g);
  EXPECT_NEAR(*g.usd_per_hour, 1.40, 1e-12);
  EXPECT_EQ(g.ChosenOffer()->currency, "CNY");

  // A market with no offer leaves the card unpriced but sold.
  ApplyMarket(In("eu"), Rates(), &g);
  EXPECT_FALSE(g.usd_per_hour.has_value());
  EXPECT_EQ(g.market_status, MarketStatus::kNoOffer);
  EXPECT_EQ(g.ChosenOffer(), nullptr);
}

TEST(ApplyMarket, AnExportSkuIsNotOfferedElsewhereAndARestrictedCardOnlyFromStock) {
  CardSupply sku;
  sku.sold_only_in = "cn";
  sku.offers = {Rental("cn", "marketplace", 8.88, "CNY"),
                Rental("global", "marketplace", 1.0, "USD")};  // a stray listing
  GpuSpec h = CardWith(sku);
  ApplyMarket(In("global"), Rates(), &h);
  EXPECT_EQ(h.market_status, MarketStatus::kOtherMarketSku);
  EXPECT_FALSE(h.usd_per_hour.has_value());
  ApplyMarket(In("cn"), Rates(), &h);
  EXPECT_EQ(h.market_status, MarketStatus::kOffered);
  EXPECT_NEAR(*h.usd_per_hour, 8.88 * 0.14, 1e-12);  // 1.2432

  CardSupply restricted;
  restricted.restricted = {{"cn", "2023-11", "export controls", "test"}};
  restricted.offers = {Rental("global", "specialty_cloud", 3.0, "USD")};
  GpuSpec r = CardWith(restricted);
  ApplyMarket(In("cn"), Rates(), &r);
  EXPECT_EQ(r.market_status, MarketStatus::kRestricted);
  EXPECT_FALSE(r.usd_per_hour.has_value());
  // Rented out of stock already in the market: priced, and the estimate says it is restricted.
  restricted.offers.push_back(Rental("cn", "marketplace", 5.0, "CNY"));
  GpuSpec stock = CardWith(restricted);
  ApplyMarket(In("cn"), Rates(), &stock);
  EXPECT_EQ(stock.market_status, MarketStatus::kOffered);
  EXPECT_NEAR(*stock.usd_per_hour, 0.70, 1e-12);
}

TEST(ApplyMarket, ACurrencyWithoutARateIsNotAPrice) {
  CardSupply s;
  s.offers = {Rental("eu", "specialty_cloud", 2.0, "EUR")};
  GpuSpec g = CardWith(s);
  ApplyMarket(In("eu"), Rates(), &g);  // Rates() has no EUR
  EXPECT_FALSE(g.usd_per_hour.has_value());
}

// `q` with `gpu` set.
Json On(Json q, const char* gpu) {
  q["gpu"] = gpu;
  return q;
}

// A one-card catalog text whose card carries `extra`.
std::string OneCard(const Json& extra, const Json& rates = nullptr) {
  Json card = {{"id", "t-80gb"},
               {"name", "T 80GB"},
               {"vendor", "nvidia"},
               {"memory_gib", 80},
               {"mem_bandwidth_gb_per_s", 3000},
               {"bf16_dense_tflops", 900},
               {"board_power_w", 700}};
  card.update(extra);
  Json doc = {{"schema_version", 1}, {"catalog_version", "t"}, {"gpus", {card}}};
  if (!rates.is_null()) doc["exchange_rates"] = rates;
  return doc.dump();
}

std::vector<std::string> LoadErrors(const std::string& gpus) {
  Diagnostics errors;
  json_io::LoadCatalog(gpus, R"({"schema_version": 1, "models": []})", &errors);
  std::vector<std::string> out;
  for (const auto& e : errors) out.push_back(e.path + ": " + e.message);
  return out;
}

TEST(CatalogOffers, EachProblemIsNamedAtItsPath) {
  const Json offer = {{"market", "cn"},          {"provider_class", "marketplace"},
                      {"price", 8.88},           {"currency", "CNY"},
                      {"unit", "gpu_hour"},      {"as_of", "2026-08-13"},
                      {"source", "a price page"}};
  const Json rates = {
      {"as_of", "2026-01-08"}, {"source", "CFETS"}, {"usd_per_unit", {{"CNY", 0.14}}}};
  EXPECT_TRUE(LoadErrors(OneCard({{"offers", {offer}}}, rates)).empty());

  // CNY without a rate in the catalog.
  auto e = LoadErrors(OneCard({{"offers", {offer}}}));
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].rfind("/gpus/0/offers/0/currency: has no exchange rate", 0), 0u) << e[0];

  Json bad = offer;
  bad["as_of"] = "2026-13";
  e = LoadErrors(OneCard({{"offers", {bad}}}, rates));
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].rfind("/gpus/0/offers/0/as_of: must be a date", 0), 0u) << e[0];

  bad = offer;
  bad["market"] = "CN";
  e = LoadErrors(OneCard({{"offers", {bad}}}, rates));
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].rfind("/gpus/0/offers/0/market: must be a market id", 0), 0u) << e[0];

  bad = offer;
  bad.erase("source");
  e = LoadErrors(OneCard({{"offers", {bad}}}, rates));
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].rfind("/gpus/0/offers/0/source: is required", 0), 0u) << e[0];

  e = LoadErrors(OneCard({{"compute_capability", 9.0}, {"vendor", "amd"}}));
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].rfind("/gpus/0/compute_capability: is a CUDA figure", 0), 0u) << e[0];
}

TEST(CatalogOffers, ALegacyPriceHoldsInEveryMarket) {
  Diagnostics errors;
  const auto cat = json_io::LoadCatalog(
      OneCard({{"price", {{"usd_per_hour", 2.5}, {"as_of", "2026-11"}, {"source", "own"}}}}),
      R"({"schema_version": 1, "models": []})", &errors);
  ASSERT_TRUE(errors.empty());
  GpuSpec g = cat.gpus[0];
  for (const char* m : {"global", "cn"}) {
    ApplyMarket(In(m), cat.rates, &g);
    ASSERT_TRUE(g.usd_per_hour.has_value()) << m;
    EXPECT_DOUBLE_EQ(*g.usd_per_hour, 2.5) << m;
  }
}

TEST(PricingMarket, AnUnknownMarketIsAnErrorAndTheDefaultIsGlobal) {
  json_io::ParsedRequest parsed;
  Diagnostics errors;
  const Json q = {{"model", {{"preset", "llama-3.1-8b"}}},
                  {"workload", {{"kind", "lora"}}},
                  {"pricing", {{"market", "mars"}}}};
  EXPECT_FALSE(json_io::ParseRequest(q.dump(), ShippedCatalog(), false, &parsed, &errors));
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors[0].path, "/pricing/market");
  EXPECT_NE(errors[0].message.find("cn, global"), std::string::npos) << errors[0].message;

  const Json plain = {{"model", {{"preset", "llama-3.1-8b"}}}, {"workload", {{"kind", "lora"}}}};
  const Json r = Result(On(plain, "h100-sxm-80gb"));
  EXPECT_EQ(r["request_normalized"]["pricing"]["market"], "global");
  EXPECT_EQ(r["cost"]["market"], "global");
}

Json Lora8b(const char* gpu, const char* market) {
  return {{"model", {{"preset", "llama-3.1-8b"}}},
          {"workload", {{"kind", "lora"}}},
          {"gpu", gpu},
          {"pricing", {{"market", market}}}};
}

bool HasWarning(const Json& r, const std::string& code) {
  if (!r.contains("warnings")) return false;
  for (const Json& w : r["warnings"]) {
    if (w["code"] == code) return true;
  }
  return false;
}

TEST(PricingMarket, TheCostNamesItsOfferAndAnExportSkuIsUnpricedAbroad) {
  // The shipped H800 is a China-market SKU with an AutoDL rental of CNY 8.88 an hour; the
  // catalog's rate is 1 / 7.0197 (CFETS, 2026-01-08) rounded to 0.142456 USD per CNY:
  // 8.88 x 0.142456 = 1.26501 USD.
  const Json cn = Result(Lora8b("h800-sxm-80gb", "cn"));
  EXPECT_EQ(cn["cost"]["offer"]["currency"], "CNY");
  EXPECT_EQ(cn["cost"]["offer"]["provider"], "AutoDL");
  EXPECT_DOUBLE_EQ(cn["cost"]["offer"]["price"].get<double>(), 8.88);
  EXPECT_NEAR(cn["cost"]["usd_per_gpu_hour"].get<double>(), 1.26501, 1e-4);
  EXPECT_TRUE(HasWarning(cn, "card_restricted_in_market"));  // no new shipments since 2023-10

  const Json global = Result(Lora8b("h800-sxm-80gb", "global"));
  EXPECT_TRUE(global["cost"]["usd_per_gpu_hour"].is_null());
  EXPECT_FALSE(global["cost"].contains("offer"));
  EXPECT_TRUE(HasWarning(global, "card_not_sold_in_market"));

  // The request's own price names no catalog offer.
  Json own = Lora8b("h800-sxm-80gb", "global");
  own["pricing"]["usd_per_gpu_hour"] = 2.0;
  EXPECT_EQ(Result(own)["cost"]["offer"]["provider_class"], "request");
}

size_t RankOf(const PlanResult& p, const std::string& id) {
  for (size_t i = 0; i < p.recommendations.size(); ++i) {
    if (p.recommendations[i].request.gpu.id == id) return i;
  }
  return p.recommendations.size();
}

PlanResult PlanOver(Json q, const std::vector<std::string>& ids) {
  q.erase("gpu");
  q["constraints"]["gpus"] = ids;
  const Question base = ParseQuestion(q);
  return Plan(base, json_io::CardsToSearch(base, ShippedCatalog()));
}

TEST(PlanByMarket, ACardTheMarketDoesNotSellNeverLeads) {
  // An 8B LoRA fits one H800 or one H100. Globally the H800 is not sold: the H100 leads and the
  // H800 comes last, saying why; in China the H800 is rented (CNY 8.88) while the H100 is
  // restricted with no offer there: the order turns round.
  const std::vector<std::string> ids = {"h800-sxm-80gb", "h100-sxm-80gb"};
  const PlanResult global = PlanOver(Lora8b("h100-sxm-80gb", "global"), ids);
  ASSERT_EQ(global.recommendations.size(), 2u);
  EXPECT_EQ(global.recommendations[0].request.gpu.id, "h100-sxm-80gb");
  EXPECT_EQ(global.recommendations[1].rank_code, "not_sold_in_market");
  EXPECT_NE(global.recommendations[1].rank_reason.find("global market"), std::string::npos);

  const PlanResult cn = PlanOver(Lora8b("h100-sxm-80gb", "cn"), ids);
  ASSERT_EQ(cn.recommendations.size(), 2u);
  EXPECT_EQ(cn.recommendations[0].request.gpu.id, "h800-sxm-80gb");
  EXPECT_EQ(cn.recommendations[1].rank_code, "not_sold_in_market");
  EXPECT_EQ(RankOf(cn, "h100-sxm-80gb"), 1u);
}

TEST(PlanByMarket, AnEndOfLifeCardRanksAfterCurrentOnesAndSaysSo) {
  // Serving a 1B model: a V100 16GB ($0.79/h, 900 GB/s) is cheaper per token than an A10G
  // ($1.006/h, 600 GB/s), but Volta's toolkits are gone (CUDA 13.0): the A10G leads.
  const Json q = {{"model", {{"preset", "llama-3.2-1b"}}},
                  {"workload", {{"kind", "inference"}, {"concurrency", 4}}},
                  {"pricing", {{"market", "global"}}}};
  const PlanResult p = PlanOver(q, {"v100-sxm2-16gb", "a10g-24gb"});
  ASSERT_EQ(p.recommendations.size(), 2u);
  EXPECT_EQ(p.recommendations[0].request.gpu.id, "a10g-24gb");
  EXPECT_EQ(p.recommendations[1].rank_code, "end_of_life_after_current");
  EXPECT_NE(p.recommendations[1].rank_reason.find("2025-08"), std::string::npos);
  // Alone, it is still answered, with the caveat.
  Json alone = q;
  alone["gpu"] = "v100-sxm2-16gb";
  EXPECT_TRUE(HasWarning(Result(alone), "end_of_life_card"));
}

const Json* Infeasible(const Json& r, const std::string& code) {
  if (!r.contains("infeasible")) return nullptr;
  for (const Json& n : r["infeasible"]) {
    if (n["code"] == code) return &n;
  }
  return nullptr;
}

Json Serve(const char* gpu, const char* framework) {
  return {{"model", {{"preset", "llama-3.1-8b"}}},
          {"framework", framework},
          {"workload", {{"kind", "inference"}, {"concurrency", 1}}},
          {"gpu", gpu}};
}

TEST(StackSupport, AStackWithoutABuildForTheCardRefusesIt) {
  // vLLM's current wheels need compute capability 7.5; the V100 is 7.0. Releases before
  // 0.20.0 still ran on it.
  const Json v = Result(Serve("v100-sxm2-32gb", "vllm"));
  const Json* n = Infeasible(v, "stack_unsupported_on_card");
  ASSERT_NE(n, nullptr) << v["infeasible"].dump();
  EXPECT_EQ((*n)["path"], "/framework");
  EXPECT_NE((*n)["message"].get<std::string>().find("7.5"), std::string::npos);
  Json older = Serve("v100-sxm2-32gb", "vllm");
  older["serving"] = {{"version", "0.10.0"}};
  EXPECT_EQ(Infeasible(Result(older), "stack_unsupported_on_card"), nullptr);

  // TensorRT-LLM is CUDA only; SGLang's ROCm build is for CDNA3 and CDNA4.
  const Json trt = Result(Serve("mi300x-192gb", "tensorrt_llm"));
  n = Infeasible(trt, "stack_unsupported_on_card");
  ASSERT_NE(n, nullptr);
  EXPECT_NE((*n)["message"].get<std::string>().find("no ROCm build"), std::string::npos);
  EXPECT_NE(Infeasible(Result(Serve("mi250x-128gb", "sglang")), "stack_unsupported_on_card"),
            nullptr);
  EXPECT_EQ(Infeasible(Result(Serve("mi300x-192gb", "sglang")), "stack_unsupported_on_card"),
            nullptr);

  // QLoRA's 4-bit base is bitsandbytes, which has no Ascend build; on ROCm it runs, with the
  // release that made it official named.
  const Json qlora = {{"model", {{"preset", "llama-3.1-8b"}}}, {"workload", {{"kind", "qlora"}}}};
  EXPECT_NE(Infeasible(Result(On(qlora, "ascend-910b-64gb")), "stack_unsupported_on_card"),
            nullptr);
  const Json amd = Result(On(qlora, "mi300x-192gb"));
  EXPECT_EQ(Infeasible(amd, "stack_unsupported_on_card"), nullptr);
  EXPECT_TRUE(HasWarning(amd, "bitsandbytes_rocm_from_0_50"));
}

TEST(StackSupport, APlanRejectsTheCardWithTheStacksReason) {
  const Json q = {{"model", {{"preset", "llama-3.1-8b"}}},
                  {"framework", "vllm"},
                  {"workload", {{"kind", "inference"}, {"concurrency", 1}}}};
  const PlanResult p = PlanOver(q, {"v100-sxm2-32gb", "l4-24gb"});
  ASSERT_EQ(p.rejected.size(), 1u);
  EXPECT_EQ(p.rejected[0].gpu_id, "v100-sxm2-32gb");
  EXPECT_EQ(p.rejected[0].code, "stack_unsupported_on_card");
  ASSERT_EQ(p.recommendations.size(), 1u);
  EXPECT_EQ(p.recommendations[0].request.gpu.id, "l4-24gb");
}

}  // namespace
}  // namespace gpuplan::testing
