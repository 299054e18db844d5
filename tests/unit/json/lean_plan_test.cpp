// SPDX-License-Identifier: MIT
// The lean plan is written straight to text (json/lean_plan.cpp with json/text_writer.cpp),
// not built as nlohmann objects: its text must be exactly what nlohmann writes of the same
// values (keys sorted, one comma each, the same forms of numbers and strings), and its figures
// the full answer's to six significant digits.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "json/text_writer.h"
#include "test_util.h"

namespace gpuplan {
namespace {

using json_io::TextWriter;
using testing::Json;

std::string Written(const std::function<void(TextWriter*)>& write) {
  std::string out;
  TextWriter w(&out);
  write(&w);
  return out;
}

TEST(TextWriter, NestsAndEscapesAsNlohmannDoes) {
  const std::string text = Written([](TextWriter* w) {
    w->BeginObject();
    w->Key("a");
    w->BeginArray();
    w->Int(1);
    w->Figure(2.5);
    w->BeginObject();
    w->Key("b");
    w->Bool(true);
    w->EndObject();
    w->BeginArray();
    w->EndArray();
    w->EndArray();
    w->Key("c");
    w->String("x\"y\\z\n\t");
    w->Key("d");
    w->String("T\xc3\xabst");  // UTF-8 passes as it is (nlohmann's dump without ensure_ascii)
    w->Key("e");
    w->String("\x01");
    w->Key("f");
    w->String("bad \xff byte");  // invalid UTF-8: replaced by U+FFFD
    w->Key("g");
    w->Raw(R"({"h":null})");
    w->EndObject();
  });
  EXPECT_EQ(text,
            "{\"a\":[1,2.5,{\"b\":true},[]],\"c\":\"x\\\"y\\\\z\\n\\t\",\"d\":\"T\xc3\xabst\","
            "\"e\":\"\\u0001\",\"f\":\"bad \xef\xbf\xbd byte\",\"g\":{\"h\":null}}");
}

TEST(TextWriter, TextBeyondItsBufferComesOutWhole) {
  // The writer gathers text in a 4 KB buffer: values that straddle it, a string longer than
  // it, and the array's end must come out as nlohmann dumps the same array.
  Json expected = Json::array();
  for (int i = 0; i < 3000; ++i) {
    expected.push_back(std::string(static_cast<size_t>(i % 37), static_cast<char>('a' + i % 26)));
    expected.push_back(i * 7919);
    if (i == 1500) expected.push_back(std::string(10000, 'x'));
  }
  std::string out;
  TextWriter w(&out);
  w.BeginArray();
  for (const Json& v : expected) {
    if (v.is_string()) {
      w.String(v.get<std::string>());
    } else {
      w.Int(v.get<int64_t>());
    }
  }
  const std::string text = expected.dump();
  // Inside the array the string holds what overflowed the buffer, a part of the text.
  EXPECT_LT(out.size(), text.size());
  EXPECT_EQ(text.compare(0, out.size(), out), 0);
  w.EndArray();
  EXPECT_EQ(out, text);  // complete at the top level: all of it in the string
}

TEST(TextWriter, FiguresHaveSixSignificantDigitsAndWholeOnesNoFraction) {
  const auto figure = [](double v) { return Written([v](TextWriter* w) { w->Figure(v); }); };
  const auto bytes = [](double v) { return Written([v](TextWriter* w) { w->Bytes(v); }); };
  // Worked by hand: 3.7029641 -> 3.70296; 441426.756 -> 441427 (whole: no ".0");
  // 0.0000123456789 -> 1.23457e-05 (nlohmann's exponent form below 1e-4); 2.5e15 is whole;
  // 1e300 is beyond 2^53, so it keeps the exponent form.
  EXPECT_EQ(figure(3.7029641), "3.70296");
  EXPECT_EQ(figure(441426.7563846918), "441427");
  EXPECT_EQ(figure(0.0000123456789), "1.23457e-05");
  EXPECT_EQ(figure(-2.0000049), "-2");
  EXPECT_EQ(figure(2.5e15), "2500000000000000");
  EXPECT_EQ(figure(1e300), "1e+300");
  EXPECT_EQ(figure(0.1), "0.1");
  // Bytes are whole and exact (not six digits): 85,899,345,920 is 80 GiB.
  EXPECT_EQ(bytes(85899345920.0), "85899345920");
  EXPECT_EQ(bytes(1.5), "2");
}

TEST(TextWriter, DoublesAreWrittenUnroundedAsNlohmannDoes) {
  // A rejection's params are written as the full answer's objects dump them: every digit of
  // the shortest text that reads back, and ".0" on a whole number (nlohmann's own dump of the
  // same doubles is the reference).
  for (const double v : {8.0, 898.6386612637218, 0.0, -0.0, 1e300, 2.5e-7, 85899345920.0}) {
    EXPECT_EQ(Written([v](TextWriter* w) { w->Double(v); }), Json(v).dump()) << v;
  }
  EXPECT_EQ(Written([](TextWriter* w) { w->Double(8); }), "8.0");
  std::string out;
  TextWriter w(&out);
  w.Double(std::numeric_limits<double>::infinity());
  EXPECT_EQ(out, "null");
  EXPECT_EQ(w.Finiteness(), 1);
}

TEST(TextWriter, RemembersFiguresThatAreNotFinite) {
  std::string out;
  TextWriter w(&out);
  w.BeginArray();
  w.Figure(1);
  EXPECT_EQ(w.Finiteness(), 0);
  w.Bytes(1e17);  // beyond 2^53 bytes: out of range
  EXPECT_EQ(w.Finiteness(), 1);
  w.Figure(std::numeric_limits<double>::quiet_NaN());  // a bug: the worse of the two
  EXPECT_EQ(w.Finiteness(), 2);
  w.Figure(std::numeric_limits<double>::infinity());
  EXPECT_EQ(w.Finiteness(), 2);
  w.EndArray();
}

// Every leaf of `j` with its JSON pointer (a band's key is a pointer itself: "/" is "~1").
void Leaves(const Json& j, const std::string& at, std::vector<std::pair<std::string, Json>>* out) {
  if (j.is_structured()) {
    for (const auto& [k, v] : j.items()) {
      std::string key;
      for (const char c : k) key += c == '/' ? "~1" : (c == '~' ? "~0" : std::string(1, c));
      Leaves(v, at + "/" + key, out);
    }
  } else {
    out->emplace_back(at, j);
  }
}

// 60 characters of `a` before and after where it first differs from `b`.
std::string Around(const std::string& a, const std::string& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  const size_t from = i < 60 ? 0 : i - 60;
  return a.substr(from, 120);
}

// The lean text is nlohmann's own dump of itself, and each of its leaves is the full answer's
// at the same place (figures to six significant digits).
void ExpectLeanIsFullAnswersFigures(const Engine& engine, const Json& request) {
  const std::string lean_text = engine.Plan(request.dump());
  const Json lean_env = Json::parse(lean_text);
  ASSERT_TRUE(lean_env["ok"].get<bool>()) << lean_text.substr(0, 300);
  const std::string again = lean_env.dump(-1, ' ', false, Json::error_handler_t::replace);
  EXPECT_TRUE(again == lean_text) << request.dump() << "\nfirst difference:\n"
                                  << Around(again, lean_text) << "\n"
                                  << Around(lean_text, again);
  const Json& lean = lean_env["result"];
  const Json full = Json::parse(engine.Plan(request.dump(), Engine::PlanAnswer::kFull))["result"];
  ASSERT_EQ(lean["recommendations"].size(), full["recommendations"].size());
  ASSERT_FALSE(lean["recommendations"].empty()) << request.dump();
  for (const char* k : {"advice", "rejected", "request_normalized", "defaults_applied",
                        "setups_evaluated", "warnings", "catalog_version", "engine_version"}) {
    EXPECT_EQ(lean[k], full[k]) << k;
  }
  EXPECT_EQ(lean.contains("wait_or_switch"), full.contains("wait_or_switch"));
  for (size_t i = 0; i < lean["recommendations"].size(); ++i) {
    const Json& row = lean["recommendations"][i];
    const Json& whole = full["recommendations"][i];
    std::vector<std::pair<std::string, Json>> leaves;
    Leaves(row, "", &leaves);
    for (const auto& [ptr, v] : leaves) {
      const Json::json_pointer p(ptr);
      ASSERT_TRUE(whole.contains(p)) << ptr;
      const Json& w = whole[p];
      if (v.is_number()) {
        const double a = v.get<double>();
        const double b = w.get<double>();
        EXPECT_NEAR(a, b, 5e-6 * std::fabs(b)) << ptr << " " << request.dump();
      } else {
        EXPECT_EQ(v, w) << ptr;
      }
    }
    for (const auto& [ptr, band] : row["estimate"]["bands"].items()) {
      const std::string basis = band.contains("basis") ? band["basis"].get<std::string>()
                                                       : lean["band_basis"][ptr].get<std::string>();
      EXPECT_EQ(basis, whole["estimate"]["bands"][ptr]["basis"]) << ptr;
    }
  }
}

TEST(LeanPlan, TextIsNlohmannsAndFiguresAreTheFullAnswers) {
  const Engine& engine = testing::ShippedEngine();
  const std::vector<Json> requests = {
      // Fine-tuning over the catalog: almost-fits with their levers.
      {{"model", {{"preset", "llama-3.1-8b"}}},
       {"workload", {{"kind", "lora"}, {"seq_len", 4096}, {"tokens", 1e8}}},
       {"constraints", {{"max_gpus", 4}}}},
      // Pretraining: the fewest-cards alternative, wait-or-switch.
      {{"model", {{"preset", "llama-3.1-70b"}}},
       {"workload", {{"kind", "pretrain"}, {"seq_len", 4096}, {"tokens", 1e10}}},
       {"constraints",
        {{"max_gpus", 64}, {"wait_s", {{"h100-sxm-80gb", 3600}, {"a100-sxm-80gb", 0}}}}}},
      // Serving under an engine: its pool's figures.
      {{"model", {{"preset", "llama-3.1-8b"}}},
       {"framework", "vllm"},
       {"workload",
        {{"kind", "inference"},
         {"prompt_tokens", 1000},
         {"output_tokens", 200},
         {"concurrency", 16}}},
       {"constraints", {{"max_gpus", 4}, {"ttft_ms", 2000}, {"tpot_ms", 50}}}},
      // A finite batch (makespan) and measured factors.
      {{"model", {{"preset", "qwen2.5-32b"}}},
       {"workload",
        {{"kind", "inference"},
         {"prompt_tokens", 500},
         {"output_tokens", 300},
         {"concurrency", 8},
         {"requests", {{"count", 1000}}}}},
       {"calibration",
        {{"compute", 0.8}, {"bandwidth", 1.1}, {"memory", 1.05}, {"interconnect", 1}}},
       {"constraints", {{"max_gpus", 8}}}},
  };
  for (const Json& r : requests) ExpectLeanIsFullAnswersFigures(engine, r);
}

TEST(LeanPlan, NamesWithQuotesAndNonAsciiAreEscapedAsNlohmannDoes) {
  // A custom catalog may name a card anything: its name reaches gpu.name and rank_reason.
  Json gpus = Json::parse(EmbeddedGpusJson());
  for (Json& card : gpus["gpus"]) {
    if (card["id"] == "h100-sxm-80gb") card["name"] = "H100 \"T\xc3\xabst\" \\ \xe5\x8d\xa1";
  }
  const Engine engine(gpus.dump(), EmbeddedModelsJson());
  ExpectLeanIsFullAnswersFigures(
      engine, {{"model", {{"preset", "llama-3.1-8b"}}},
               {"gpu", "h100-sxm-80gb"},
               {"workload", {{"kind", "full_finetune"}, {"seq_len", 2048}, {"tokens", 1e8}}},
               {"constraints", {{"max_gpus", 8}}}});
  const std::string text = engine.Plan(
      R"({"model": {"preset": "llama-3.1-8b"}, "gpu": "h100-sxm-80gb", "workload": {"kind": "lora"}})");
  EXPECT_NE(text.find("H100 \\\"T\xc3\xabst\\\" \\\\ \xe5\x8d\xa1"), std::string::npos);
}

}  // namespace
}  // namespace gpuplan
