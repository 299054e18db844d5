// SPDX-License-Identifier: MIT
// Wait for the best card, or start now on another. The checks are behavioural:
// the verdict follows the queue's length, and at the reported break-even job length the two
// choices finish together when the plan is run again at that length.
#include <gtest/gtest.h>

#include <string>

#include "test_util.h"

namespace gpuplan {
namespace {

using testing::Json;

Json Plan(const Json& request) {
  const Json env = Json::parse(testing::ShippedEngine().Plan(request.dump()));
  EXPECT_TRUE(env["ok"].get<bool>()) << env.dump(1);
  return env["result"];
}

Json Job(double tokens, double wait_s) {
  return {{"model", {{"preset", "llama-3.1-8b"}}},
          {"workload", {{"kind", "full_finetune"}, {"tokens", tokens}}},
          {"constraints",
           {{"gpus", {"h100-sxm-80gb", "a100-sxm-80gb"}},
            {"max_gpus", 8},
            {"wait_s", {{"h100-sxm-80gb", wait_s}}}}}};
}

TEST(WaitOrSwitch, TheQueueDecides) {
  // The H100 runs the job faster than the A100 (it leads the plan); an hour's queue is worth
  // waiting for on a multi-hour job, two weeks are not.
  const Json short_wait = Plan(Job(2e9, 3600))["wait_or_switch"];
  ASSERT_EQ(short_wait["options"][0]["gpu"], "h100-sxm-80gb");
  EXPECT_EQ(short_wait["verdict"]["code"], "wait_for_best");
  EXPECT_EQ(short_wait["first_to_finish"], "h100-sxm-80gb");
  const Json long_wait = Plan(Job(2e9, 14 * 86400))["wait_or_switch"];
  EXPECT_EQ(long_wait["verdict"]["code"], "switch_now");
  EXPECT_EQ(long_wait["first_to_finish"], "a100-sxm-80gb");
  // Finish is the queue plus the run: 14 days = 1,209,600 s ahead of the H100's run.
  const Json& h100 = long_wait["options"][0];
  EXPECT_DOUBLE_EQ(h100["finish_s"].get<double>() - h100["run_s"].get<double>(), 1209600.0);
  const Json none = Plan(Job(2e9, 0))["wait_or_switch"];
  EXPECT_EQ(none["verdict"]["code"], "no_queue");
}

TEST(WaitOrSwitch, AtTheBreakEvenLengthBothFinishTogether) {
  const Json first = Plan(Job(2e9, 14 * 86400))["wait_or_switch"];
  const double tokens = first["options"][1]["break_even_tokens"].get<double>();
  ASSERT_GT(tokens, 2e9);
  const Json at = Plan(Job(tokens, 14 * 86400))["wait_or_switch"];
  const double wait_finish = at["options"][0]["finish_s"].get<double>();
  const double switch_finish = at["options"][1]["finish_s"].get<double>();
  EXPECT_NEAR(wait_finish / switch_finish, 1.0, 1e-6);
  // Twice as long a job: waiting wins.
  EXPECT_EQ(Plan(Job(2 * tokens, 14 * 86400))["wait_or_switch"]["first_to_finish"],
            "h100-sxm-80gb");
}

TEST(WaitOrSwitch, WhenThePlansFirstCardIsSlowerShortJobsFavourIt) {
  // The plan ranks fewest cards first: one B200 before four H100s, which are faster per token.
  // With a short queue for the B200 and a long one for the H100s, the H100s win this job; the
  // crossing then favours the B200 for shorter jobs, and the verdict must say so. (A fused
  // optimizer step, with no temporaries, keeps the job on one B200.)
  auto job = [](double tokens) -> Json {
    return {{"model", {{"preset", "llama-3.1-8b"}}},
            {"workload", {{"kind", "full_finetune"}, {"tokens", tokens}}},
            {"optimizer_kernel", "fused"},
            {"constraints",
             {{"gpus", {"b200-sxm-180gb", "h100-sxm-80gb"}},
              {"max_gpus", 8},
              {"wait_s", {{"b200-sxm-180gb", 3600}, {"h100-sxm-80gb", 39600}}}}}};
  };
  const Json w = Plan(job(2e9))["wait_or_switch"];
  ASSERT_EQ(w["options"][0]["gpu"], "b200-sxm-180gb");
  ASSERT_EQ(w["first_to_finish"], "h100-sxm-80gb");
  const std::string message = w["verdict"]["message"];
  EXPECT_NE(message.find("take h100-sxm-80gb after its"), std::string::npos) << message;
  EXPECT_NE(message.find("for jobs shorter than"), std::string::npos) << message;
  const double tokens = w["options"][1]["break_even_tokens"].get<double>();
  ASSERT_GT(tokens, 0);
  EXPECT_EQ(Plan(job(tokens / 2))["wait_or_switch"]["first_to_finish"], "b200-sxm-180gb");
}

TEST(WaitOrSwitch, InputErrorsNameTheCard) {
  Json bad = Job(2e9, -1);
  Json env = Json::parse(testing::ShippedEngine().Plan(bad.dump()));
  ASSERT_FALSE(env["ok"].get<bool>());
  EXPECT_EQ(env["errors"][0]["path"], "/constraints/wait_s/h100-sxm-80gb");
  bad["constraints"]["wait_s"] = {{"no-such-card", 10}};
  env = Json::parse(testing::ShippedEngine().Plan(bad.dump()));
  EXPECT_EQ(env["errors"][0]["path"], "/constraints/wait_s/no-such-card");
}

}  // namespace
}  // namespace gpuplan
