// SPDX-License-Identifier: MIT
// Published training and decode measurements (tests/reference/perf_cases.json, generated from
// ../shared/dev-cases/cases.json by make_perf_cases.py; each case names its source). Issue #4's
// aims: median error within 15% for training throughput and 20% for single-stream decode,
// scored as the dev-cases README suggests: the median |log(pred/meas)| of each group, averaged
// over the groups of a kind.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "../unit/test_util.h"

namespace gpuplan {
namespace {

using testing::Json;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

TEST(PerfReference, GroupMediansWithinTheAims) {
  std::ifstream in(std::string(GPUPLAN_SOURCE_DIR) + "/tests/reference/perf_cases.json");
  std::stringstream s;
  s << in.rdbuf();
  const Json doc = Json::parse(s.str());
  std::map<std::string, std::map<std::string, std::vector<double>>> by_kind;
  for (const auto& c : doc["cases"]) {
    const Json r = testing::Result(c["request"]);  // every case must be answered
    if (!c.value("scored", true) || c.value("confidence", "high") == "low") continue;
    const std::string compare = c["compare"];
    const Json::json_pointer at(compare);
    ASSERT_TRUE(r.contains(at)) << c["id"] << " has no " << compare;
    const double pred = r[at].get<double>();
    const double meas = c["measured_value"].get<double>();
    ASSERT_GT(pred, 0) << c["id"];
    const std::string kind = compare.find("training") != std::string::npos ? "training" : "decode";
    by_kind[kind][c["group"]].push_back(std::fabs(std::log(pred / meas)));
  }
  const std::map<std::string, double> aims = {{"training", 0.15}, {"decode", 0.20}};
  for (const auto& [kind, groups] : by_kind) {
    double sum = 0;
    for (const auto& [group, errors] : groups) {
      const double median = Median(errors);
      sum += median;
      std::printf("%-10s %-32s %3zu cases, median |log| %.1f%%\n", kind.c_str(), group.c_str(),
                  errors.size(), 100 * median);
    }
    const double mean = sum / static_cast<double>(groups.size());
    EXPECT_LE(mean, aims.at(kind)) << kind;
  }
  EXPECT_EQ(by_kind.size(), 2u);
}

}  // namespace
}  // namespace gpuplan
