// SPDX-License-Identifier: MIT
// Properties every answer keeps, over a few hundred random but valid requests across the
// shipped catalog (fixed seed, so a failure reproduces): nothing rejected or non-finite, the
// total is the sum of its parts, fits agrees with the headroom rule and the reasons, levers
// always save memory, bands contain their figure, and request_normalized reproduces the
// answer.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "test_util.h"

namespace gpuplan {
namespace {

using testing::Json;

class RandomRequests {
 public:
  explicit RandomRequests(uint32_t seed) : rng_(seed) {
    const Json cat = Json::parse(testing::ShippedEngine().Catalog(CatalogPart::kAll))["result"];
    for (const auto& g : cat["gpus"]) gpus_.push_back(g["id"]);
    for (const auto& m : cat["models"]) models_.push_back(m["id"]);
  }

  Json Next() {
    static const std::vector<std::string> kKinds = {"pretrain", "full_finetune", "lora", "qlora",
                                                    "inference"};
    const std::string kind = Pick(kKinds);
    Json req = {{"model", {{"preset", Pick(models_)}}}, {"gpu", Pick(gpus_)}};
    const int tp = Pick<int>({1, 2, 4, 8});
    const int pp = Pick<int>({1, 1, 2, 4});
    const int dp = Pick<int>({1, 2, 4, 8});
    req["parallel"] = {{"gpus", tp * pp * dp},
                       {"tp", tp},
                       {"pp", pp},
                       {"zero", Pick<int>({0, 1, 2, 3})},
                       {"sequence_parallel", Pick<bool>({false, true}) && tp > 1}};
    req["headroom"] = Pick<double>({0.0, 0.1, 0.2, 0.5});
    if (kind == "inference") {
      req["workload"] = {{"kind", kind},
                         {"prompt_tokens", Pick<int>({16, 512, 4096, 32768})},
                         {"output_tokens", Pick<int>({1, 128, 2048})},
                         {"concurrency", Pick<int>({1, 8, 64, 256})}};
      req["precision"] = {{"weights", Pick<std::string>({"bf16", "fp8", "int8", "awq_int4", "nf4",
                                                         "gguf_q4_k_m", "gguf_q8_0"})},
                          {"kv_cache", Pick<std::string>({"bf16", "fp8"})}};
      // vLLM's decode band lies wholly on one side of 1: its figures test the band rule.
      if (Pick<bool>({false, true})) req["framework"] = "vllm";
    } else {
      req["workload"] = {{"kind", kind},
                         {"micro_batch", Pick<int>({1, 2, 8})},
                         {"seq_len", Pick<int>({512, 2048, 8192})},
                         {"grad_accum", Pick<int>({1, 4, 16})}};
      req["optimizer"] = Pick<std::string>({"adamw", "adamw_8bit", "sgd", "lion", "adafactor"});
      const std::string rc =
          Pick<std::string>({"none", "selective", "full", "op_selective", "every_n_layers"});
      req["memory_techniques"] = {
          {"recompute", rc},
          {"chunked_loss", Pick<bool>({false, true})},
          {"compile", Pick<bool>({false, true})},
          {"offload", Pick<std::string>({"none", "none", "optimizer", "optimizer_and_params"})}};
      if (rc == "every_n_layers")
        req["memory_techniques"]["recompute_every"] = Pick<int>({1, 2, 3});
      req["precision"] = {{"optimizer_states", Pick<std::string>({"fp32", "bf16", "param"})}};
      if (pp > 1) {
        req["parallel"]["pp_schedule"] = Pick<std::string>({"1f1b", "interleaved", "gpipe"});
        req["parallel"]["overlap"] = {{"tp_comm", Pick<bool>({false, true})},
                                      {"grad_reduce", Pick<bool>({false, true})}};
      }
      if (kind == "qlora") req["precision"]["weights"] = "nf4";
    }
    return req;
  }

 private:
  template <typename T>
  T Pick(const std::vector<T>& from) {
    return from[std::uniform_int_distribution<size_t>(0, from.size() - 1)(rng_)];
  }

  std::mt19937 rng_;
  std::vector<std::string> gpus_;
  std::vector<std::string> models_;
};

TEST(Properties, HoldOnRandomRequests) {
  RandomRequests gen(20261130);
  int fitting = 0;
  for (int i = 0; i < 300; ++i) {
    const Json req = gen.Next();
    const Json env = testing::Envelope(req);
    ASSERT_TRUE(env["ok"].get<bool>()) << req.dump() << "\n" << env.dump().substr(0, 400);
    const Json& r = env["result"];
    const Json& mem = r["memory"];
    double sum = 0;
    for (const auto& [part, bytes] : mem["per_gpu_bytes"].items()) {
      ASSERT_TRUE(bytes.is_number_integer()) << part << " in " << req.dump();
      EXPECT_GE(bytes.get<int64_t>(), 0) << part << " in " << req.dump();
      sum += bytes.get<double>();
    }
    const double total = mem["total_bytes"];
    EXPECT_EQ(total, sum) << req.dump();
    EXPECT_EQ(mem["allocated_bytes"].get<double>(),
              total - mem["per_gpu_bytes"]["runtime"].get<double>());
    const double headroom = req["headroom"];
    EXPECT_NEAR(mem["total_with_headroom_bytes"].get<double>(), total * (1 + headroom), 1.0);
    const bool fits = mem["fits"];
    EXPECT_EQ(fits, r["infeasible"].empty()) << req.dump();
    if (fits) {
      ++fitting;
      EXPECT_LE(mem["total_with_headroom_bytes"].get<double>(),
                mem["capacity_bytes"].get<double>());
    }
    for (const auto& lever : r["levers"]) {
      EXPECT_GT(lever["saved_bytes"].get<double>(), 0) << lever.dump();
      EXPECT_LT(lever["total_bytes"].get<double>(), total) << lever.dump();
      EXPECT_GE(lever["time_factor"].get<double>(), 0) << lever.dump();
    }
    // The contract: every band contains its figure, low <= value <= high.
    for (const auto& [ptr, band] : r["bands"].items()) {
      const double v = r.at(Json::json_pointer(ptr)).get<double>();
      EXPECT_LE(band["low"].get<double>(), v * (1 + 1e-12)) << ptr << " in " << req.dump();
      EXPECT_GE(band["high"].get<double>(), v * (1 - 1e-12)) << ptr << " in " << req.dump();
    }
    if (i % 10 == 0) {
      const Json again = testing::Result(r["request_normalized"]);
      EXPECT_EQ(again["memory"], mem) << req.dump();
    }
  }
  // The mix is not degenerate: some setups fit, most of the random ones do not.
  EXPECT_GT(fitting, 10);
}

TEST(Properties, MoreOfALeverNeverCostsMemory) {
  // Larger micro-batches never shrink activations; higher ZeRO stages never grow the training
  // state; more KV-cache tokens never shrink the KV cache.
  RandomRequests gen(7);
  for (int i = 0; i < 60; ++i) {
    Json req = gen.Next();
    const Json base = testing::Result(req);
    if (req["workload"]["kind"] == "inference") {
      req["workload"]["output_tokens"] = req["workload"]["output_tokens"].get<int>() * 2;
      EXPECT_GE(testing::PerGpu(testing::Result(req), "kv_cache"),
                testing::PerGpu(base, "kv_cache"));
      continue;
    }
    Json bigger = req;
    bigger["workload"]["micro_batch"] = req["workload"]["micro_batch"].get<int>() * 2;
    EXPECT_GE(testing::PerGpu(testing::Result(bigger), "activations"),
              testing::PerGpu(base, "activations"))
        << req.dump();
    if (req["parallel"]["zero"].get<int>() < 3) {
      Json sharded = req;
      sharded["parallel"]["zero"] = req["parallel"]["zero"].get<int>() + 1;
      const Json s = testing::Result(sharded);
      EXPECT_LE(testing::PerGpu(s, "gradients") + testing::PerGpu(s, "optimizer_states"),
                testing::PerGpu(base, "gradients") + testing::PerGpu(base, "optimizer_states") + 1)
          << req.dump();
    }
  }
}

}  // namespace
}  // namespace gpuplan
