// SPDX-License-Identifier: MIT
// The figure table (physics/figures.h) and its one writer (json/figure_writer.h): the full
// answer and the lean plan's rows walk the same rows, so a section's lean text is the full
// answer's object less its full-only rows and nulls, to six significant digits.
#include "json/figure_writer.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "json/result_io.h"
#include "physics/error_bands.h"
#include "test_util.h"

namespace gpuplan {
namespace {

using json_io::Answer;
using json_io::TextSink;
using json_io::TextWriter;
using testing::Json;
using testing::Parse;

std::string Lean(const Estimate& e, const char* prefix) {
  std::string out;
  TextWriter w(&out);
  TextSink sink(&w);
  if (!WriteFigures(&sink, e, prefix, Answer::kLean)) return "";
  return out;
}

TEST(FigureTable, PointersAreUniqueSortedAndBandedByKnownKinds) {
  std::set<std::string> seen;
  const FigureRow* previous = nullptr;
  for (const FigureRow& r : FigureTable()) {
    EXPECT_TRUE(seen.insert(r.pointer).second) << r.pointer;
    if (previous != nullptr) {
      // Key by key: "/cost/offer/source" before "/cost/usd_per_gpu_hour".
      EXPECT_LT(std::string(previous->pointer), std::string(r.pointer)) << r.pointer;
    }
    previous = &r;
    if (r.band != nullptr) {
      EXPECT_NE(BandFor(r.band, ""), nullptr) << r.pointer << " names band " << r.band;
    }
  }
  EXPECT_NE(FindFigure("/performance/inference/decode_tokens_per_s_total"), nullptr);
  EXPECT_TRUE(FindFigure("/performance/training/time_s")->headline);
  EXPECT_EQ(FindFigure("/not/a/figure"), nullptr);
}

TEST(FigureWriter, LeanRoundsToSixDigitsWhereTheFullAnswerKeepsTheValue) {
  Estimate e;
  e.has_serving = true;
  e.serving.at_request.tpot_s = 0.0123456789;  // 12.3456789 ms
  e.serving.at_request.ttft_s = 0.25;          // 250 ms
  e.serving.max_concurrency = 7;
  e.serving.meets_targets = false;
  const std::string lean = Lean(e, "/performance/");
  // By hand: 12.3456789 to six significant digits is 12.3457; 250 is whole.
  EXPECT_NE(lean.find("\"tpot_ms\":12.3457,"), std::string::npos) << lean;
  EXPECT_NE(lean.find("\"ttft_ms\":250}"), std::string::npos) << lean;
  EXPECT_NE(lean.find("\"max_concurrency\":7,"), std::string::npos) << lean;
  EXPECT_NE(lean.find("\"meets_targets\":false,"), std::string::npos) << lean;
  EXPECT_EQ(lean.find("training"), std::string::npos) << lean;
  const Json full = json_io::FiguresJson(e, "/performance/");
  EXPECT_DOUBLE_EQ(full["inference"]["tpot_ms"].get<double>(), 12.3456789);
  // makespan_s is 0: offline only, left out of both.
  EXPECT_FALSE(full["inference"].contains("makespan_s"));
}

TEST(FigureWriter, UnpricedCostIsNullInTheFullAnswerAndAbsentFromTheLean) {
  Estimate e;
  e.cost.market = "global";
  EXPECT_EQ(Lean(e, "/cost/"), "{\"market\":\"global\"}");
  const Json full = json_io::FiguresJson(e, "/cost/");
  EXPECT_TRUE(full["usd_per_hour"].is_null());
  EXPECT_TRUE(full["usd_total"].is_null());
  EXPECT_FALSE(full.contains("offer"));
  // A request's own price: the offer names only where it came from.
  e.cost.priced = true;
  e.cost.usd_per_gpu_hour = 2;
  e.cost.usd_per_hour = 16;
  e.cost.usd_per_million_tokens = -1;
  EXPECT_EQ(Lean(e, "/cost/"),
            "{\"market\":\"global\",\"offer\":{\"provider_class\":\"request\"},"
            "\"usd_per_gpu_hour\":2,\"usd_per_hour\":16}");
}

// Every section of real estimates: the lean text is the full object rounded, less what only
// the full answer carries.
TEST(FigureWriter, LeanIsTheFullAnswerLessItsFullOnlyRows) {
  const Json requests[] = {
      {{"model", {{"preset", "llama-3.1-8b"}}},
       {"workload", {{"kind", "pretrain"}, {"seq_len", 4096}, {"tokens", 1e10}}},
       {"gpu", "h100-sxm-80gb"},
       {"parallel", {{"gpus", 8}}},
       {"framework", "megatron"}},
      {{"model", {{"preset", "llama-3.1-8b"}}},
       {"workload",
        {{"kind", "inference"},
         {"prompt_tokens", 1024},
         {"output_tokens", 256},
         {"concurrency", 16}}},
       {"gpu", "h100-sxm-80gb"},
       {"framework", "vllm"}}};
  for (const Json& request : requests) {
    const Estimate e = EstimateSetup(Parse(request), /*with_levers=*/false);
    for (const char* prefix : {"/cost/", "/framework/", "/performance/", "/power/"}) {
      Json full = json_io::FiguresJson(e, prefix);
      for (const FigureRow* row : FiguresUnder(prefix)) {
        if (row->form != Form::kFullOnly) continue;
        const Json::json_pointer at(
            std::string(row->pointer).substr(std::string(prefix).size() - 1));
        if (full.contains(at)) full[at.parent_pointer()].erase(at.back());
      }
      json_io::RoundFigures(&full);  // also drops the nulls, which the lean answer leaves out
      const std::string lean = Lean(e, prefix);
      EXPECT_EQ(lean.empty() ? "{}" : lean, full.dump()) << prefix << " " << request.dump();
    }
  }
}

}  // namespace
}  // namespace gpuplan
