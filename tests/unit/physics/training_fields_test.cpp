// SPDX-License-Identifier: MIT
// The contract's second-round training fields (docs/contract.md): recompute op_selective
// and every_n_layers, parallel.pp_schedule / virtual_stages, parallel.overlap,
// memory_techniques.compile, each read, reported in request_normalized, and acting on the
// figures as the cited mechanism says.
#include <gtest/gtest.h>

#include "physics/perf_model.h"
#include "test_util.h"

namespace gpuplan::testing {
namespace {

Json Pretrain8B() {
  return {{"model", {{"preset", "llama-3.1-8b"}}},
          {"workload", {{"kind", "pretrain"}, {"micro_batch", 1}, {"seq_len", 2048}}},
          {"gpu", "h100-sxm-80gb"}};
}

double Layers(const Json& r) { return r["memory"]["detail"]["activations.layers"]; }
double ExtraFlops(const Json& r) {
  const Json& t = r["performance"]["training"];
  return t["hardware_flops_per_token"].get<double>() - t["flops_per_token"].get<double>();
}

TEST(RecomputeModes, OpSelectiveKeepsAttentionAndEveryOtherMatmul) {
  // torchtitan's op-level policy on Llama 3.1 8B (h 4,096, q 4,096, k and v 1,024, MLP 14,336,
  // 32 heads), bf16, tp 1: per token and layer it keeps the block input (4,096), the outputs of
  // q, v, gate and down (4,096 + 1,024 + 14,336 + 4,096), attention's output (4,096) and its fp32
  // logsumexp (32 x 4 bytes = 64 bf16 elements): 2 x 31,808 = 63,616 bytes; x 32 layers x 2,048
  // tokens = 4,169,138,176 bytes.
  Json req = Pretrain8B();
  req["memory_techniques"] = {{"recompute", "op_selective"}};
  const Json r = Result(req);
  EXPECT_DOUBLE_EQ(Layers(r), 4169138176.0);
  // Backward repeats the unsaved matmuls, k, o and up: 2 x 32 x (4,096 x 1,024 + 4,096 x 4,096
  // + 4,096 x 14,336) = 5,100,273,664 FLOPs per token.
  EXPECT_DOUBLE_EQ(ExtraFlops(r), 5100273664.0);
  EXPECT_EQ(r["request_normalized"]["memory_techniques"]["recompute"], "op_selective");
}

TEST(RecomputeModes, EveryNLayersSpansNoneToFull) {
  // Every n-th of 32 blocks recomputed: n = 1 is full recomputation, n = 64 recomputes none, and
  // n = 2 repeats the forward of 16 blocks: half the extra FLOPs of full recomputation.
  Json req = Pretrain8B();
  const auto with = [&](const Json& techniques) {
    req["memory_techniques"] = techniques;
    return Result(req);
  };
  const Json full = with({{"recompute", "full"}});
  const Json none = with({{"recompute", "none"}});
  const Json every1 = with({{"recompute", "every_n_layers"}, {"recompute_every", 1}});
  const Json every64 = with({{"recompute", "every_n_layers"}, {"recompute_every", 64}});
  const Json every2 = with({{"recompute", "every_n_layers"}, {"recompute_every", 2}});
  EXPECT_DOUBLE_EQ(Layers(every1), Layers(full));
  EXPECT_DOUBLE_EQ(Layers(every64), Layers(none));
  EXPECT_DOUBLE_EQ(ExtraFlops(every1), ExtraFlops(full));
  EXPECT_DOUBLE_EQ(ExtraFlops(every64), 0);
  EXPECT_DOUBLE_EQ(ExtraFlops(every2), ExtraFlops(full) / 2);
  // Half the blocks keep everything, half their input only.
  EXPECT_DOUBLE_EQ(Layers(every2), (Layers(none) + Layers(full)) / 2);
  EXPECT_EQ(every2["request_normalized"]["memory_techniques"]["recompute_every"], 2);
}

TEST(RecomputeModes, EveryNLayersNeedsItsN) {
  Json req = Pretrain8B();
  req["memory_techniques"] = {{"recompute", "every_n_layers"}};
  const Json env = Envelope(req);
  ASSERT_FALSE(env["ok"].get<bool>());
  EXPECT_EQ(env["errors"][0]["path"], "/memory_techniques/recompute_every");
}

TEST(PipelineSchedule, InterleavingDividesTheFillByTheVirtualStages) {
  // Narayanan et al. 2021, section 2.2.2: the interleaved schedule's bubble is (p - 1) / (v m)
  // of 1F1B's slots. The busiest stage's excess over a balanced split is the same for every
  // schedule, so with F the 1F1B fill, bubble(1F1B) - bubble(v) = F (1 - 1/v): v = 4 removes
  // 3F/4, v = 2 removes F/2, a ratio of exactly 1.5. GPipe fills and drains as 1F1B does.
  Json req = Pretrain8B();
  req["workload"]["grad_accum"] = 8;
  req["parallel"] = {{"gpus", 4}, {"pp", 4}};
  const auto bubble = [&](const Json& extra) {
    Json q = req;
    for (const auto& [k, v] : extra.items()) q["parallel"][k] = v;
    const gpuplan::Setup r = Parse(q);
    return EstimateTraining(r, CountParams(r.model)).bubble_s;
  };
  const double one_f_one_b = bubble(Json::object());
  const double v2 = bubble({{"pp_schedule", "interleaved"}, {"virtual_stages", 2}});
  const double v4 = bubble({{"pp_schedule", "interleaved"}, {"virtual_stages", 4}});
  EXPECT_NEAR((one_f_one_b - v4) / (one_f_one_b - v2), 1.5, 1e-9);
  EXPECT_DOUBLE_EQ(bubble({{"pp_schedule", "gpipe"}}), one_f_one_b);
  // pp x v chunks cannot outnumber the 32 layers.
  req["parallel"]["pp_schedule"] = "interleaved";
  req["parallel"]["virtual_stages"] = 16;
  EXPECT_EQ(Envelope(req)["errors"][0]["path"], "/parallel/virtual_stages");
}

TEST(Overlap, TheRequestSetsWhatRunsBehindCompute) {
  // Tensor parallel 8 on one H100 node. Without tp_comm overlap every all-reduce is paid; with
  // it (Megatron-Core's --tp-comm-overlap) only what outlasts the compute is.
  Json req = Pretrain8B();
  req["parallel"] = {{"gpus", 8}, {"tp", 8}, {"sequence_parallel", true}};
  const auto perf = [&](const Json& overlap) {
    Json q = req;
    q["parallel"]["overlap"] = overlap;
    const gpuplan::Setup r = Parse(q);
    return EstimateTraining(r, CountParams(r.model));
  };
  const TrainingPerf off = perf({{"tp_comm", false}});
  const TrainingPerf on = perf({{"tp_comm", true}});
  ASSERT_GT(off.tp_comm_s, 0);
  EXPECT_DOUBLE_EQ(off.tp_exposed_s, off.tp_comm_s);
  EXPECT_DOUBLE_EQ(on.tp_exposed_s, std::max(0.0, on.tp_comm_s - on.compute_s));
  EXPECT_LT(on.step_s, off.step_s);
  // Data parallel over 8 ranks: with grad_reduce off nothing of the reduction hides.
  req["parallel"] = {{"gpus", 8}};
  const TrainingPerf hidden = perf({{"grad_reduce", true}});
  const TrainingPerf paid = perf({{"grad_reduce", false}});
  EXPECT_GE(paid.dp_exposed_s, paid.dp_comm_s);
  EXPECT_LT(hidden.dp_exposed_s, paid.dp_exposed_s);
  // Each flag given is reported; the others keep the stack's value.
  Json q = req;
  q["parallel"]["overlap"] = {{"grad_reduce", false}};
  const Json n = Result(q)["request_normalized"]["parallel"]["overlap"];
  EXPECT_EQ(n["grad_reduce"], false);
  EXPECT_EQ(n["param_gather"], true);
  EXPECT_EQ(n["tp_comm"], false);
}

TEST(TrainingFields, CompileDropsTheEagerExtrasAStackDeclares) {
  // A stack that keeps eager PyTorch's extras (fp32 norm and RoPE copies, expanded K/V): under
  // torch.compile Inductor's min-cut partitioner recomputes those pointwise results, so the
  // policy the physics reads keeps none of them; the rest of the stack's policy stands.
  StackProfile eager = PlainPytorch();
  eager.training.saved.norm_fp32_copy = true;
  eager.training.saved.rope_fp32_copy = true;
  eager.training.saved.kv_expanded = true;
  eager.training.overlap.tp_comm = true;
  Json req = Pretrain8B();
  req["memory_techniques"] = {{"compile", true}};
  Question r = ParseQuestion(req);
  const TrainingPolicy compiled = WithSettings(eager.training, r.training);
  EXPECT_FALSE(compiled.saved.norm_fp32_copy);
  EXPECT_FALSE(compiled.saved.rope_fp32_copy);
  EXPECT_FALSE(compiled.saved.kv_expanded);
  EXPECT_TRUE(compiled.overlap.tp_comm);
  r.training.compile = false;
  EXPECT_TRUE(WithSettings(eager.training, r.training).saved.norm_fp32_copy);
  EXPECT_EQ(Result(req)["request_normalized"]["memory_techniques"]["compile"], true);
}

TEST(TrainingFields, ServingIsToldTheyAreUnused) {
  const Json r = Result({{"model", {{"preset", "llama-3.1-8b"}}},
                         {"workload", {{"kind", "inference"}}},
                         {"gpu", "h100-sxm-80gb"},
                         {"precision", {{"optimizer_states", "bf16"}}},
                         {"memory_techniques", {{"compile", true}}},
                         {"parallel", {{"pp_schedule", "gpipe"}}}});
  int unused = 0;
  for (const auto& w : r["warnings"]) unused += w["code"] == "field_unused" ? 1 : 0;
  EXPECT_EQ(unused, 3);
}

}  // namespace
}  // namespace gpuplan::testing
