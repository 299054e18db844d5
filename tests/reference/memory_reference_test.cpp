// SPDX-License-Identifier: MIT
// Published memory measurements (tests/reference/memory_cases.json: each case names its source
// and the counter it read).
// Scored cases must come within their stated tolerance; upper-bound readings must not be
// exceeded; every case must be answered.
#include <gtest/gtest.h>

#include <fstream>
#include <ostream>
#include <sstream>
#include <string>

#include "../unit/test_util.h"

namespace gpuplan {
namespace {

using testing::Json;

Json LoadCases() {
  std::ifstream in(std::string(GPUPLAN_SOURCE_DIR) + "/tests/reference/memory_cases.json");
  std::stringstream s;
  s << in.rdbuf();
  return Json::parse(s.str(), nullptr, false);
}

// One case; printed by its id so test names and failures stay readable.
struct Case {
  Json json;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.json.value("id", "?"); }

std::vector<Case> Cases() {
  std::vector<Case> out;
  const Json doc = LoadCases();
  if (!doc.is_object() || !doc.contains("cases")) return out;
  for (const auto& c : doc["cases"]) out.push_back({c});
  return out;
}

class MemoryReference : public ::testing::TestWithParam<Case> {};

TEST_P(MemoryReference, WithinTolerance) {
  const Json& c = GetParam().json;
  SCOPED_TRACE(c["id"].get<std::string>() + " (" + c["source"].get<std::string>() + ")");
  const Json r = testing::Result(c["request"]);
  const Json& mem = r["memory"];
  const std::string compare = c["compare"];
  const double measured = c["measured_bytes"];
  double predicted = mem["allocated_bytes"];
  if (compare == "weights") predicted = mem["per_gpu_bytes"]["weights"];
  if (compare == "kv_cache_per_token") predicted = mem["detail"]["kv_cache.bytes_per_token"];
  if (compare == "upper_bound") {
    EXPECT_LE(predicted, measured);
    return;
  }
  if (!c.value("scored", true)) return;
  const double tolerance = c["tolerance"];
  EXPECT_NEAR(predicted / measured, 1.0, tolerance + 1e-12)
      << "predicted " << predicted / testing::kGiB << " GiB, measured " << c["measured_text"];
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  std::string name = info.param.json["id"];
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(DevCases, MemoryReference, ::testing::ValuesIn(Cases()), CaseName);

}  // namespace
}  // namespace gpuplan
