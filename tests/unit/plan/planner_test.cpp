// SPDX-License-Identifier: MIT
// `plan`: pruning is exact (the pruned search keeps the very setup the full search keeps, on
// random requests), the planning order (memory first, count second) and the constraints hold.
#include "plan/planner.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "physics/estimate.h"
#include "test_util.h"

namespace gpuplan {
namespace {

using testing::Json;
using testing::Parse;
using testing::ParseQuestion;

const json_io::LoadedCatalog& Catalog() { return testing::ShippedCatalog(); }

std::string Describe(const PlanChoice& c) {
  const Parallel& p = c.request.parallel;
  std::string s = c.request.gpu.id + " x" + std::to_string(c.count) + " tp" + std::to_string(p.tp) +
                  " pp" + std::to_string(p.pp) + " z" + std::to_string(p.zero) + " mb" +
                  std::to_string(c.request.workload.micro_batch) + " rc" +
                  std::to_string(static_cast<int>(c.request.techniques.recompute));
  for (double k : c.key) s += " " + std::to_string(k);
  return s;
}

TEST(PlanPruning, MatchesTheFullSearchOnRandomRequests) {
  std::mt19937 rng(4242);
  const auto pick = [&rng](const std::vector<std::string>& v) {
    return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
  };
  const std::vector<std::string> models = {"llama-3.1-8b", "llama-2-13b",   "qwen2.5-32b",
                                           "mixtral-8x7b", "llama-3.1-70b", "gemma-2-9b"};
  const std::vector<std::string> kinds = {"pretrain", "full_finetune", "lora", "qlora"};
  const std::vector<std::string> objectives = {"default", "time", "cost", "count", "power"};
  std::vector<GpuSpec> cards;
  // PCIe cards without a fast link scale poorly: their best is often below the knee, where
  // the scaling-efficiency bound decides.
  for (const char* id : {"h100-sxm-80gb", "a100-sxm-40gb", "rtx-4090-24gb", "l40s-48gb",
                         "mi300x-192gb", "h100-pcie-80gb", "v100-pcie-16gb", "rtx-3090-24gb"}) {
    cards.push_back(*Catalog().FindGpu(id));
  }
  int compared = 0;
  int64_t pruned_evaluations = 0;
  int64_t full_evaluations = 0;
  for (int i = 0; i < 64; ++i) {
    const std::string kind = pick(kinds);
    Json req = {{"model", {{"preset", pick(models)}}},
                {"workload",
                 {{"kind", kind},
                  {"micro_batch", std::uniform_int_distribution<int>(1, 4)(rng)},
                  {"seq_len", 2048},
                  {"grad_accum", 4},
                  {"tokens", 1e9}}},
                {"constraints", {{"max_gpus", 16}, {"objective", pick(objectives)}}}};
    if (kind == "qlora") req["precision"] = {{"weights", "nf4"}};
    if (i % 2 == 1) {
      // Half the requests fix the global batch instead, so the micro-batch search varies.
      req["workload"].erase("grad_accum");
      req["workload"]["global_batch"] = 64;
      req["workload"]["micro_batch"] = 1;
    }
    // A third carry a deadline or a budget (their filters and the deadline ranking), and
    // some reach 48 cards (counts of 3 x 2^k nodes, where the default batch is rounded).
    if (i % 3 == 1) req["constraints"]["deadline_s"] = 86400.0 * (1 << (i % 5));
    if (i % 3 == 2) req["constraints"]["budget_usd"] = 50.0 * (1 << (i % 6));
    if (i % 4 == 3) req["constraints"]["max_gpus"] = 48;
    // And some reach 256, where deep pipelines with few micro-batches per rank are tried
    // (the pipeline-fill bound), a few of them under the interleaved schedule.
    if (i % 8 == 5) req["constraints"]["max_gpus"] = 256;
    if (i % 16 == 13) req["parallel"] = {{"pp_schedule", "interleaved"}, {"virtual_stages", 2}};
    const Question r = ParseQuestion(req);
    const PlanResult pruned = Plan(r, cards, {true});
    const PlanResult full = Plan(r, cards, {false});
    ASSERT_EQ(pruned.recommendations.size(), full.recommendations.size()) << req.dump();
    for (size_t k = 0; k < full.recommendations.size(); ++k) {
      const PlanChoice& a = pruned.recommendations[k];
      const PlanChoice& b = full.recommendations[k];
      EXPECT_EQ(Describe(a), Describe(b)) << req.dump();
      // What the answer says beside its setup is the same too.
      EXPECT_EQ(a.rank_reason, b.rank_reason) << req.dump();
      EXPECT_EQ(a.almost_fits.has_value(), b.almost_fits.has_value()) << req.dump();
      if (a.almost_fits && b.almost_fits) {
        EXPECT_EQ(a.almost_fits->count, b.almost_fits->count) << req.dump();
        EXPECT_EQ(a.almost_fits->levers.size(), b.almost_fits->levers.size()) << req.dump();
      }
      EXPECT_EQ(a.fewest_cards.has_value(), b.fewest_cards.has_value()) << req.dump();
      if (a.fewest_cards && b.fewest_cards) {
        EXPECT_EQ(a.fewest_cards->count, b.fewest_cards->count) << req.dump();
        EXPECT_EQ(a.fewest_cards->time_s, b.fewest_cards->time_s) << req.dump();
      }
      ++compared;
    }
    ASSERT_EQ(pruned.rejected.size(), full.rejected.size()) << req.dump();
    for (size_t k = 0; k < full.rejected.size(); ++k) {
      EXPECT_EQ(pruned.rejected[k].code, full.rejected[k].code) << req.dump();
      EXPECT_EQ(pruned.rejected[k].reason, full.rejected[k].reason) << req.dump();
    }
    ASSERT_EQ(pruned.advice.size(), full.advice.size()) << req.dump();
    for (size_t k = 0; k < full.advice.size(); ++k) {
      EXPECT_EQ(pruned.advice[k].message, full.advice[k].message) << req.dump();
    }
    pruned_evaluations += pruned.setups_evaluated;
    full_evaluations += full.setups_evaluated;
  }
  EXPECT_GT(compared, 50);
  EXPECT_LT(pruned_evaluations, full_evaluations);  // the bounds are worth their probes
}

TEST(PlanPruning, MemoryFloorIsAtMostEveryTotal) {
  // The floor the training search skips setups on (weights, optimizer states, first
  // gradients, reserve and communicators) is never above the total the memory model gives any
  // micro-batch, accumulation and recomputation of the same layout and ZeRO stage, with and
  // without offloading; were it above, the pruned search would drop a setup that fits.
  std::mt19937 rng(77);
  const auto pick = [&rng](const std::vector<std::string>& v) {
    return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
  };
  const std::vector<std::string> models = {"llama-3.1-8b",  "qwen2.5-32b", "mixtral-8x7b",
                                           "llama-3.1-70b", "gemma-2-9b",  "deepseek-v3"};
  const std::vector<std::string> cards = {"h100-sxm-80gb", "rtx-4090-24gb", "mi300x-192gb"};
  int checked = 0;
  for (int i = 0; i < 300; ++i) {
    const std::string kind = pick({"pretrain", "full_finetune", "lora", "qlora"});
    const int tp = 1 << std::uniform_int_distribution<int>(0, 3)(rng);
    const int pp = 1 << std::uniform_int_distribution<int>(0, 2)(rng);
    const int dp = 1 << std::uniform_int_distribution<int>(0, 3)(rng);
    Json req = {{"model", {{"preset", pick(models)}}},
                {"gpu", pick(cards)},
                {"workload",
                 {{"kind", kind},
                  {"micro_batch", 1 << std::uniform_int_distribution<int>(0, 3)(rng)},
                  {"grad_accum", std::uniform_int_distribution<int>(1, 4)(rng)},
                  {"seq_len", 1024 << std::uniform_int_distribution<int>(0, 3)(rng)}}},
                {"parallel",
                 {{"gpus", tp * pp * dp},
                  {"tp", tp},
                  {"pp", pp},
                  {"zero", dp > 1 ? std::uniform_int_distribution<int>(0, 3)(rng) : 0}}},
                {"memory_techniques",
                 {{"recompute", pick({"none", "selective", "full"})},
                  {"offload", pick({"none", "none", "optimizer", "optimizer_and_params"})}}}};
    if (kind == "qlora") req["precision"] = {{"weights", "nf4"}};
    const gpuplan::Setup r = Parse(req);
    const FitCheck f = CheckFit(r, CountParams(r.model));
    if (!f.layout_ok) continue;
    EXPECT_LE(TrainingFloorWithHeadroom(r, CountParams(r.model)), f.total_with_headroom_bytes)
        << req.dump();
    ++checked;
  }
  EXPECT_GT(checked, 100);
}

TEST(PlanPruning, MatchesTheFullSearchAtScale) {
  // The benchmark's pretraining plan (Llama 3.1 70B, 8k tokens, up to 1,024 cards), where the
  // bounds prune most: deep pipelines with few micro-batches, ZeRO-3 across nodes, and PCIe
  // cards whose best stays below the scaling knee; with and without a deadline.
  std::vector<GpuSpec> cards;
  for (const char* id : {"h100-sxm-80gb", "rtx-4090-24gb", "v100-pcie-16gb"}) {
    cards.push_back(*Catalog().FindGpu(id));
  }
  for (const double deadline_days : {0.0, 60.0}) {
    Json req = {{"model", {{"preset", "llama-3.1-70b"}}},
                {"workload",
                 {{"kind", "pretrain"},
                  {"micro_batch", 1},
                  {"seq_len", 8192},
                  {"global_batch", 1024},
                  {"tokens", 1e12}}},
                {"constraints", {{"max_gpus", 1024}}}};
    if (deadline_days > 0) req["constraints"]["deadline_s"] = deadline_days * 86400;
    const Question r = ParseQuestion(req);
    const PlanResult pruned = Plan(r, cards, {true});
    const PlanResult full = Plan(r, cards, {false});
    ASSERT_EQ(pruned.recommendations.size(), full.recommendations.size()) << req.dump();
    for (size_t k = 0; k < full.recommendations.size(); ++k) {
      EXPECT_EQ(Describe(pruned.recommendations[k]), Describe(full.recommendations[k]));
      EXPECT_EQ(pruned.recommendations[k].fewest_cards.has_value(),
                full.recommendations[k].fewest_cards.has_value());
    }
    ASSERT_EQ(pruned.rejected.size(), full.rejected.size());
    for (size_t k = 0; k < full.rejected.size(); ++k) {
      EXPECT_EQ(pruned.rejected[k].reason, full.rejected[k].reason);
    }
    EXPECT_LT(pruned.setups_evaluated * 4, full.setups_evaluated);
  }
}

TEST(Plan, MemoryFirstThenFewestCards) {
  // Memory first, count second. Llama 3.1 70B LoRA in bf16 (141 GB of weights) fits
  // one 192 GB MI300X. On H100s (80 GiB / 1.2 = 71.6 GB usable) two cards would hold 70.6 GB of
  // weights each before activations and runtime, so four are needed; 24 GB RTX 4090s need
  // more. The single card ranks first.
  const Question r = ParseQuestion(
      {{"model", {{"preset", "llama-3.1-70b"}}},
       {"workload", {{"kind", "lora"}, {"micro_batch", 1}, {"seq_len", 2048}}},
       {"constraints", {{"gpus", {"h100-sxm-80gb", "mi300x-192gb", "rtx-4090-24gb"}}}}});
  std::vector<GpuSpec> cards;
  for (const auto& id : r.constraints.gpus) cards.push_back(*Catalog().FindGpu(id));
  const PlanResult p = Plan(r, cards);
  ASSERT_EQ(p.recommendations.size(), 3u);
  EXPECT_EQ(p.recommendations[0].request.gpu.id, "mi300x-192gb");
  EXPECT_EQ(p.recommendations[0].count, 1);
  EXPECT_EQ(p.recommendations[1].request.gpu.id, "h100-sxm-80gb");
  EXPECT_EQ(p.recommendations[1].count, 4);
  EXPECT_EQ(p.recommendations[2].request.gpu.id, "rtx-4090-24gb");
  EXPECT_GT(p.recommendations[2].count, 4);
}

TEST(Plan, ConstraintsReject) {
  // A liquid-cooled card on an air-cooled site, a deadline no card can meet, a model that
  // fits nowhere within the count limit: each rejection says why.
  Json req = {
      {"model", {{"preset", "llama-3.1-8b"}}},
      {"workload", {{"kind", "pretrain"}, {"micro_batch", 1}, {"seq_len", 2048}, {"tokens", 1e12}}},
      {"constraints", {{"max_gpus", 8}, {"cooling", "air"}, {"deadline_s", 3600}}}};
  std::vector<GpuSpec> cards = {*Catalog().FindGpu("gb200-nvl72-186gb"),
                                *Catalog().FindGpu("h100-sxm-80gb")};
  const PlanResult p = Plan(ParseQuestion(req), cards);
  ASSERT_EQ(p.rejected.size(), 2u);
  EXPECT_EQ(p.rejected[0].code, "needs_liquid_cooling");
  // 8B x 1e12 tokens x 6 FLOPs = 4.8e22 FLOPs; an H100's 989 TFLOP/s, even at full peak,
  // needs 4.8e22 / 9.89e14 / 3600 = 13,500 card-hours: far more than 8 cards in one hour. The
  // count limit binds, and the reason says how many cards the deadline needs at least.
  EXPECT_EQ(p.rejected[1].code, "exceeds_max_gpus");
  EXPECT_GT(p.rejected[1].params.at("cards_needed_at_least"), 13500);
  EXPECT_EQ(p.rejected[1].path, "/constraints/max_gpus");
  req["model"] = {{"preset", "llama-3.1-405b"}};
  req["constraints"] = {{"max_gpus", 2}};
  const PlanResult big = Plan(ParseQuestion(req), {*Catalog().FindGpu("rtx-4090-24gb")});
  ASSERT_EQ(big.rejected.size(), 1u);
  EXPECT_EQ(big.rejected[0].code, "exceeds_memory");
}

TEST(Plan, ACardThatMissesTheLatencyTargetsQuotesOneSequence) {
  // Llama 3.1 70B for 256 users at a 50 ms TPOT on L4s: the bf16 weights, 70.6e9 x 2 B =
  // 141 GB, fit on the 8 cards of a server (17.6 GB each), and every decoded token reads each
  // card's share at 300 GB/s: 17.6e9 / 300e9 = 58.8 ms at the least, even for one sequence.
  // The rejection quotes that sequence; 256 of them do not fit, and their figures (a TPOT of
  // 0, nothing decoded) once stood in the reason against the target.
  const Question r =
      ParseQuestion({{"model", {{"preset", "llama-3.1-70b"}}},
                     {"workload",
                      {{"kind", "inference"},
                       {"prompt_tokens", 2048},
                       {"output_tokens", 512},
                       {"concurrency", 256}}},
                     {"constraints", {{"tpot_ms", 50}, {"ttft_ms", 2000}, {"max_gpus", 1024}}}});
  const PlanResult p = Plan(r, {*Catalog().FindGpu("l4-24gb")});
  ASSERT_EQ(p.rejected.size(), 1u);
  EXPECT_EQ(p.rejected[0].code, "misses_latency_targets");
  EXPECT_EQ(p.rejected[0].params.at("tp"), 8);
  EXPECT_GE(p.rejected[0].params.at("tpot_ms"), 58.8);
  // The reason's words say the same TPOT.
  const std::string& reason = p.rejected[0].reason;
  const size_t at = reason.find("TPOT ");
  ASSERT_NE(at, std::string::npos) << reason;
  EXPECT_GE(std::stod(reason.substr(at + 5)), 58.8) << reason;
}

TEST(Plan, ACardWhereTheEngineRunsNoSequenceSaysWhy) {
  // llama.cpp with one context of 2048 tokens shared by every sequence, and sequences of
  // 3000 + 500 = 3500 tokens: not one runs, however fast the card. The rejection is the
  // engine's context (the field that changes it: serving.n_ctx), not the latency targets,
  // which one sequence on an H100 meets by far.
  const Question r =
      ParseQuestion({{"model", {{"preset", "llama-3.1-8b"}}},
                     {"framework", "llama_cpp"},
                     {"serving", {{"n_ctx", 2048}}},
                     {"workload",
                      {{"kind", "inference"},
                       {"prompt_tokens", 3000},
                       {"output_tokens", 500},
                       {"concurrency", 4}}},
                     {"constraints", {{"max_gpus", 8}, {"ttft_ms", 5000}, {"tpot_ms", 200}}}});
  const PlanResult p = Plan(r, {*Catalog().FindGpu("h100-sxm-80gb")});
  ASSERT_TRUE(p.recommendations.empty());
  ASSERT_EQ(p.rejected.size(), 1u);
  EXPECT_EQ(p.rejected[0].code, "exceeds_engine_context");
  EXPECT_EQ(p.rejected[0].params.at("need_tokens"), 3500);
  EXPECT_EQ(p.rejected[0].params.at("context_tokens"), 2048);
  EXPECT_EQ(p.rejected[0].path, "/serving/n_ctx");
  EXPECT_EQ(p.rejected[0].reason.rfind("not even one sequence runs on ", 0), 0u)
      << p.rejected[0].reason;
}

TEST(Plan, ServingSizesReplicasForTheConcurrency) {
  // 512 concurrent sequences of Llama 3.1 8B at a 50 ms TPOT target: each replica holds what
  // fits and meets the target; replicas x GPUs per replica serve the rest.
  const Question r = ParseQuestion({{"model", {{"preset", "llama-3.1-8b"}}},
                                    {"workload",
                                     {{"kind", "inference"},
                                      {"prompt_tokens", 2048},
                                      {"output_tokens", 512},
                                      {"concurrency", 512}}},
                                    {"constraints", {{"tpot_ms", 50}, {"max_gpus", 64}}}});
  const PlanResult p = Plan(r, {*Catalog().FindGpu("h100-sxm-80gb")});
  ASSERT_EQ(p.recommendations.size(), 1u);
  const PlanChoice& c = p.recommendations[0];
  EXPECT_EQ(c.count, c.replicas * c.request.parallel.tp);
  EXPECT_GE(c.request.workload.concurrency * c.replicas, 512);
  // The chosen replica meets the target at its share of the sequences.
  const Estimate e = EstimateSetup(c.request, false);
  EXPECT_LE(e.serving.at_request.tpot_s, 0.050);
  EXPECT_TRUE(e.fits);
  // With one card per replica allowed at most, more replicas are needed.
  Question narrow = r;
  narrow.constraints.max_gpus = 64;
  const PlanResult l4 = Plan(narrow, {*Catalog().FindGpu("l4-24gb")});
  ASSERT_EQ(l4.recommendations.size(), 1u);
  EXPECT_GT(l4.recommendations[0].replicas, 1);
}

TEST(Plan, RowsComeInRankOrderOverThreeCopiesOfTheCatalog) {
  // Serving ranks by cost per million output tokens, priced cards first, unpriced after them
  // (search_serving.cpp Key); equal keys go by card id. Three copies of every card, named
  // "<id>-0/1/2" and listed a catalog apart, have equal keys: each must come out as three
  // neighbours in that order, between rows no cheaper and no dearer.
  const Question r = ParseQuestion({{"model", {{"preset", "llama-3.1-8b"}}},
                                    {"workload",
                                     {{"kind", "inference"},
                                      {"prompt_tokens", 2048},
                                      {"output_tokens", 512},
                                      {"concurrency", 64}}},
                                    {"constraints", {{"tpot_ms", 50}, {"max_gpus", 64}}}});
  std::vector<GpuSpec> cards;
  for (int copy = 0; copy < 3; ++copy) {
    for (GpuSpec g : Catalog().gpus) {
      g.id += "-" + std::to_string(copy);
      cards.push_back(std::move(g));
    }
  }
  const PlanResult p = Plan(r, cards);
  const auto& recs = p.recommendations;
  ASSERT_GE(recs.size(), 60u);  // most of the catalog serves an 8B model
  ASSERT_EQ(recs.size() % 3, 0u);
  for (size_t i = 0; i < recs.size(); i += 3) {
    const std::string& id = recs[i].request.gpu.id;
    const std::string stem = id.substr(0, id.size() - 1);
    EXPECT_EQ(id, stem + "0");
    EXPECT_EQ(recs[i + 1].request.gpu.id, stem + "1");
    EXPECT_EQ(recs[i + 2].request.gpu.id, stem + "2");
  }
  // Cards the market sells come first, end-of-life cards after them (the catalog's
  // end_of_life), cards not sold in the market last; within each, priced before unpriced.
  const auto tier = [](const GpuSpec& g) {
    if (g.market_status == MarketStatus::kOtherMarketSku ||
        g.market_status == MarketStatus::kRestricted) {
      return 2;
    }
    return g.supply && !g.supply->end_of_life_since.empty() ? 1 : 0;
  };
  bool unpriced_seen = false;
  bool eol_seen = false;
  for (size_t i = 0; i < recs.size(); ++i) {
    const double usd = recs[i].figures.usd_per_mtok;
    const int t = tier(recs[i].request.gpu);
    if (i > 0 && t != tier(recs[i - 1].request.gpu)) {
      EXPECT_GT(t, tier(recs[i - 1].request.gpu)) << recs[i].request.gpu.id;
      unpriced_seen = false;
    }
    eol_seen = eol_seen || t == 1;
    if (usd < 0) {
      unpriced_seen = true;
      continue;
    }
    EXPECT_FALSE(unpriced_seen) << recs[i].request.gpu.id << " priced after an unpriced row";
    if (i > 0 && recs[i - 1].figures.usd_per_mtok >= 0 && t == tier(recs[i - 1].request.gpu)) {
      EXPECT_LE(recs[i - 1].figures.usd_per_mtok, usd) << recs[i].request.gpu.id;
    }
  }
  EXPECT_TRUE(eol_seen);  // the catalog's V100s: the tiers are exercised
}

TEST(PlanApi, ContractShape) {
  const Json env = Json::parse(testing::ShippedEngine().Plan(
      R"({"model": {"preset": "llama-3.1-8b"}, "workload": {"kind": "qlora"},
          "constraints": {"max_gpus": 4, "gpus": ["rtx-4090-24gb", "h100-sxm-80gb"]}})"));
  ASSERT_TRUE(env["ok"].get<bool>()) << env.dump().substr(0, 300);
  const Json& r = env["result"];
  ASSERT_EQ(r["recommendations"].size(), 2u);
  for (const auto& rec : r["recommendations"]) {
    for (const char* k : {"gpu", "count", "parallel", "memory_techniques", "micro_batch",
                          "estimate", "rank_reason"}) {
      EXPECT_TRUE(rec.contains(k)) << k;
    }
    EXPECT_TRUE(rec["estimate"]["memory"]["fits"].get<bool>());
  }
  EXPECT_TRUE(r["rejected"].is_array());
  EXPECT_TRUE(r["advice"].is_array());
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

TEST(Plan, QuantizedServingOnlyWhenAllowed) {
  // Llama 3.1 70B serving on L40S cards: in bf16 (141 GB) a replica needs 4 cards; allowed to
  // quantise, AWQ int4 (about 37 GB) serves from fewer cards per replica and more tokens/s per
  // card, so it wins the default objective.
  testing::Json req = {{"model", {{"preset", "llama-3.1-70b"}}},
                       {"workload",
                        {{"kind", "inference"},
                         {"prompt_tokens", 1024},
                         {"output_tokens", 256},
                         {"concurrency", 16}}},
                       {"constraints", {{"max_gpus", 16}}}};
  const std::vector<GpuSpec> cards = {*Catalog().FindGpu("l40s-48gb")};
  const PlanResult plain = Plan(ParseQuestion(req), cards);
  ASSERT_EQ(plain.recommendations.size(), 1u);
  EXPECT_EQ(plain.recommendations[0].request.precision.weights, WeightFormat::kBf16);
  req["constraints"]["quantize"] = true;
  const PlanResult quantised = Plan(ParseQuestion(req), cards);
  ASSERT_EQ(quantised.recommendations.size(), 1u);
  EXPECT_EQ(quantised.recommendations[0].request.precision.weights, WeightFormat::kAwqInt4);
  EXPECT_LT(quantised.recommendations[0].request.parallel.tp,
            plain.recommendations[0].request.parallel.tp);
}

TEST(Serving, OfflineIgnoresLatencyTargets) {
  testing::Json req = {{"model", {{"preset", "llama-3.1-8b"}}},
                       {"workload",
                        {{"kind", "inference"},
                         {"prompt_tokens", 2048},
                         {"output_tokens", 512},
                         {"mode", "offline"}}},
                       {"constraints", {{"tpot_ms", 1}}},
                       {"gpu", "h100-sxm-80gb"}};
  const testing::Json r = testing::Result(req);
  // A 1 ms TPOT is out of reach, but an offline batch has no latency target: memory decides.
  EXPECT_GT(r["performance"]["inference"]["max_concurrency"].get<int64_t>(), 100);
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

// The lean plan carries each row's figures; the complete estimate of a row is one
// `estimate` away, from the row's setup (what the page's Details asks for).
TEST(PlanApi, LeanAnswerIsTheFullOnesFiguresAndEstimateGivesTheRest) {
  const Json request = {{"model", {{"preset", "llama-3.1-8b"}}},
                        {"workload", {{"kind", "lora"}, {"seq_len", 2048}}},
                        {"constraints", {{"max_gpus", 8}}}};
  const gpuplan::Engine& engine = testing::ShippedEngine();
  const std::string lean_text = engine.Plan(request.dump());
  const std::string full_text = engine.Plan(request.dump(), gpuplan::Engine::PlanAnswer::kFull);
  const Json lean = Json::parse(lean_text)["result"];
  const Json full = Json::parse(full_text)["result"];
  EXPECT_EQ(lean["answer"], "lean");
  EXPECT_EQ(full["answer"], "full");
  ASSERT_EQ(lean["recommendations"].size(), full["recommendations"].size());
  ASSERT_GE(lean["recommendations"].size(), 5u);
  // The explain, levers and diagnosis of every row are most of the full answer.
  EXPECT_LT(lean_text.size() * 4, full_text.size());
  for (size_t i = 0; i < lean["recommendations"].size(); ++i) {
    const Json& a = lean["recommendations"][i];
    const Json& b = full["recommendations"][i];
    EXPECT_EQ(a["gpu"], b["gpu"]);
    EXPECT_EQ(a["count"], b["count"]);
    EXPECT_EQ(a["parallel"], b["parallel"]);
    const Json& ea = a["estimate"];
    const Json& eb = b["estimate"];
    EXPECT_FALSE(ea.contains("explain"));
    EXPECT_FALSE(ea.contains("levers"));
    EXPECT_EQ(ea["memory"]["total_bytes"], eb["memory"]["total_bytes"]);
    EXPECT_EQ(ea["memory"]["per_gpu_bytes"], eb["memory"]["per_gpu_bytes"]);
    EXPECT_EQ(ea["memory"]["fits"], eb["memory"]["fits"]);
    // Six significant digits.
    const double t = eb["performance"]["training"]["time_s"].get<double>();
    EXPECT_NEAR(ea["performance"]["training"]["time_s"].get<double>(), t, 5e-6 * t);
    for (const auto& [ptr, band] : ea["bands"].items()) {
      EXPECT_TRUE(lean["band_basis"].contains(ptr)) << ptr;
      EXPECT_NEAR(band["low"].get<double>(), eb["bands"][ptr]["low"].get<double>(),
                  5e-6 * eb["bands"][ptr]["low"].get<double>());
    }
    // The row's setup, as an estimate request, gives the row's figures and the working.
    Json setup = request;
    setup.erase("constraints");
    setup["gpu"] = a["gpu"];
    setup["parallel"] = a["parallel"];
    setup["memory_techniques"] = a["memory_techniques"];
    setup["workload"]["micro_batch"] = a["micro_batch"];
    setup["workload"]["grad_accum"] = a["grad_accum"];
    const Json e = Json::parse(engine.Estimate(setup.dump()))["result"];
    EXPECT_EQ(e["memory"]["total_bytes"], ea["memory"]["total_bytes"]) << setup.dump();
    EXPECT_TRUE(e.contains("explain"));
  }
}

}  // namespace
}  // namespace gpuplan
