// SPDX-License-Identifier: MIT
// Expert parallelism in time (issue #9, M32): each MoE layer's dispatch and combine all-to-alls,
// worked by hand from the catalog's link figures.
#include <gtest/gtest.h>

#include <cmath>

#include "test_util.h"

namespace gpuplan::testing {
namespace {

// One all-to-all over 8 H100s on NVLink: latency 12.5 + 6.1 x log2(8) = 30.8 us (the
// all-reduce fit in perf_model.h), then 7/8 of the bytes at 450 GB/s x 0.8 (NCCL's share).
double AllToAll8(double bytes) { return 30.8e-6 + 7.0 / 8.0 * bytes / (450e9 * 0.8); }

TEST(ExpertParallel, TrainingPaysADispatchAndACombinePerMoeLayerEachWay) {
  // Mixtral 8x7B LoRA, 4096 tokens a micro-batch, ep 8 on one 8-GPU node: each all-to-all
  // moves 4096 tokens x 2 experts x 4096 wide x 2 B = 67,108,864 B; 32 MoE layers x 4 calls
  // (dispatch and combine, forward and backward).
  const Json r = Result({{"model", {{"preset", "mixtral-8x7b"}}},
                         {"gpu", "h100-sxm-80gb"},
                         {"workload", {{"kind", "lora"}, {"seq_len", 4096}}},
                         {"parallel", {{"gpus", 8}, {"ep", 8}}}});
  const Json& in = r["explain"]["/performance/training/tokens_per_s"]["inputs"];
  EXPECT_NEAR(in["ep_comm_s"].get<double>(), 32 * 4 * AllToAll8(67108864.0), 1e-12);
  // Full recomputation repeats the forward's pair.
  const Json full = Result({{"model", {{"preset", "mixtral-8x7b"}}},
                            {"gpu", "h100-sxm-80gb"},
                            {"workload", {{"kind", "lora"}, {"seq_len", 4096}}},
                            {"memory_techniques", {{"recompute", "full"}}},
                            {"parallel", {{"gpus", 8}, {"ep", 8}}}});
  EXPECT_NEAR(
      full["explain"]["/performance/training/tokens_per_s"]["inputs"]["ep_comm_s"].get<double>(),
      32 * 6 * AllToAll8(67108864.0), 1e-12);
  // No expert parallelism, no all-to-all.
  const Json none = Result({{"model", {{"preset", "mixtral-8x7b"}}},
                            {"gpu", "h100-sxm-80gb"},
                            {"workload", {{"kind", "lora"}, {"seq_len", 4096}}},
                            {"parallel", {{"gpus", 8}}}});
  EXPECT_EQ(none["explain"]["/performance/training/tokens_per_s"]["inputs"]["ep_comm_s"], 0.0);
}

TEST(ExpertParallel, DecodeAddsTheBatchsAllToAllsToEveryToken) {
  // Serving Mixtral 8x7B with ep 8: one sequence, 1 token x 2 experts x 4096 x 2 B = 16,384 B
  // per all-to-all, two per MoE layer, 32 layers.
  const Json r = Result({{"model", {{"preset", "mixtral-8x7b"}}},
                         {"gpu", "h100-sxm-80gb"},
                         {"workload", {{"kind", "inference"}, {"concurrency", 1}}},
                         {"parallel", {{"gpus", 8}, {"ep", 8}}}});
  EXPECT_NEAR(r["explain"]["/performance/inference/tpot_ms"]["inputs"]["ep_comm_s"].get<double>(),
              2 * 32 * AllToAll8(16384.0), 1e-12);
}

}  // namespace
}  // namespace gpuplan::testing
