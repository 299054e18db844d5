// SPDX-License-Identifier: MIT
// catalog/stacks.json read into the policy structs: the shipped file's values as its sources
// state them, and a value without its source or outside the policy types refused by path.
#include "json/stacks_io.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace gpuplan {
namespace {

using json_io::FindStack;
using json_io::ReadStacks;

// One profile with one policy value, as stacks.json words it.
std::string OneValue(const std::string& key, const std::string& entry) {
  return R"({"schema_version": 1, "stacks": [{"id": "x", "name": "X", "serving": true,
             "notes": ["a note of ten or more"], "policy": {")" +
         key + "\": " + entry + "}}]}";
}

TEST(StacksJson, TheShippedProfilesAreTheirSourcesValues) {
  ASSERT_EQ(json_io::Stacks().size(), 9u);
  const StackProfile& vllm = *FindStack("vllm");
  EXPECT_STREQ(vllm.name, "vLLM");
  EXPECT_DOUBLE_EQ(vllm.engine.memory_fraction, 0.92);   // --gpu-memory-utilization 0.92
  EXPECT_DOUBLE_EQ(vllm.engine.graph_bytes, 536870912);  // 0.5 GiB = 2^29 bytes
  EXPECT_EQ(vllm.engine.caps[0].max_seqs, 256);
  EXPECT_TRUE(std::isinf(vllm.engine.caps[1].below_gib));  // null: every larger card
  EXPECT_STREQ(vllm.engine.older[0].before, "0.8.0");
  EXPECT_DOUBLE_EQ(vllm.engine.older[0].non_torch_bytes, 0.33 * 1073741824.0);
  const StackProfile& sglang = *FindStack("sglang");
  EXPECT_EQ(sglang.engine.kv_budget, KvBudget::kCardMinusReserve);
  EXPECT_DOUBLE_EQ(sglang.engine.reserve.per_model_rank_bytes, 134217728);  // 1/8 GiB
  EXPECT_DOUBLE_EQ(sglang.engine.reserve.floor_above_bytes, 60e9);
  EXPECT_EQ(sglang.support.backends, kCuda | kRocm | kAscend | kXpu);
  const StackProfile& megatron = *FindStack("megatron");
  EXPECT_EQ(megatron.layouts.max_zero, 1);
  EXPECT_FALSE(megatron.training.overlap.grad_reduce);
  EXPECT_STREQ(megatron.support.rocm_note_code, "megatron_rocm_fork");
  EXPECT_EQ(FindStack("plain"), nullptr);
  // Each value's own source comes back with it.
  bool found = false;
  for (const auto& [key, source] : json_io::StackValueSources("vllm")) {
    if (key == "engine.memory_fraction") {
      found = source.find("--gpu-memory-utilization 0.92") != std::string::npos;
    }
  }
  EXPECT_TRUE(found);
}

TEST(StacksJson, AValueWithoutItsSourceOrOutsideThePoliciesIsRefusedByPath) {
  std::vector<StackProfile> out;
  Diagnostics errors;
  EXPECT_TRUE(ReadStacks(OneValue("engine.memory_fraction", R"({"value": 0.8, "source": "a"})"),
                         &out, &errors));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_DOUBLE_EQ(out[0].engine.memory_fraction, 0.8);
  const struct {
    std::string key, entry, path;
  } bad[] = {
      {"engine.memory_fraction", R"({"value": 0.8})", "/stacks/0/policy/engine.memory_fraction"},
      {"engine.memory_fraction", R"({"value": 1.8, "source": "a"})",
       "/stacks/0/policy/engine.memory_fraction/value"},
      {"engine.speed_factor", R"({"value": 1.2, "source": "a"})",
       "/stacks/0/policy/engine.speed_factor"},
      {"engine.graph_bytes", R"({"value": 1, "unit": "TB", "source": "a"})",
       "/stacks/0/policy/engine.graph_bytes/value"},
      {"engine.kv_budget", R"({"value": "all", "source": "a"})",
       "/stacks/0/policy/engine.kv_budget/value"},
  };
  for (const auto& b : bad) {
    errors.clear();
    EXPECT_FALSE(ReadStacks(OneValue(b.key, b.entry), &out, &errors)) << b.key << b.entry;
    ASSERT_FALSE(errors.empty());
    EXPECT_EQ(errors[0].path, b.path) << errors[0].message;
  }
}

}  // namespace
}  // namespace gpuplan
