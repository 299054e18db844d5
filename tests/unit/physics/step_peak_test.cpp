// SPDX-License-Identifier: MIT
// A training step's peak is the largest of three moments, not the sum of everything it
// allocates (memory_model.cpp, TrainingStepPeak): the end of forward (every saved activation,
// the logits and loss, and the gradients alive then), the end of backward (every gradient, the
// first layer's saved tensors, backward's working set) and the optimizer step (every gradient
// and the step's own temporaries, the activations freed). Every expected number is worked by
// hand below on one small explicit model; its requests step with a fused kernel (no
// temporaries) unless a test says otherwise, so the first two moments can be seen alone.
#include <gtest/gtest.h>

#include <string>

#include "test_util.h"

namespace gpuplan {
namespace {

using testing::Detail;
using testing::Json;
using testing::PerGpu;
using testing::Result;

// Two layers, hidden 1024, 8 heads of 128 (no GQA), gated MLP 2048 wide, RMSNorm, untied,
// vocab 1000, no biases. Parameters:
//   attention q, k, v, o: 4 x 1024 x 1024 = 4,194,304; MLP: 3 x 1024 x 2048 = 6,291,456;
//   norms 2 x 1024 = 2,048; one layer 10,487,808; two 20,975,616;
//   embedding 1,024,000 + lm_head 1,024,000 + final norm 1,024: N = 23,024,640.
// bf16 weights with an fp32 master copy and AdamW: weights 2N = 46,049,280; gradients 2N =
// 46,049,280; states 12N = 276,295,680.
//
// Saved per token per layer (bf16, flash attention, no recomputation, plain PyTorch saves):
//   the two norms' inputs 2 x 2 x 1024 = 4,096, QKV input 2,048, MLP input 2,048;
//   q, k, v 2 x 3,072 = 6,144, attention output 2,048; gate, up, act(gate), product
//   4 x 2 x 2,048 = 16,384; flash attention's fp32 logsumexp 4 x 8 = 32: 32,800 bytes.
// Logits and loss per token: 1000 x (2 bf16 + 4 fp32 upcast + 4 fp32 log-probs) = 10,000,
// plus the final norm's and lm_head's inputs 2 x 2 x 1024 = 4,096: 14,096.
// Backward's working set per token: the residual stream's incoming and outgoing gradients
// 2 x 2 x 1024 = 4,096 and the gated MLP's gate and up gradients 2 x 2 x 2048 = 8,192:
// 12,288. The first gradients backward makes, with everything still saved: lm_head's,
// 1,024,000 x 2 = 2,048,000.
Json Small(int64_t seq_len, int64_t grad_accum) {
  return {{"model",
           {{"layers", 2},
            {"hidden", 1024},
            {"heads", 8},
            {"vocab", 1000},
            {"intermediate", 2048},
            {"mlp", "gated"},
            {"norm", "rms"}}},
          {"workload",
           {{"kind", "pretrain"},
            {"micro_batch", 1},
            {"seq_len", seq_len},
            {"grad_accum", grad_accum}}},
          {"memory_techniques", {{"recompute", "none"}, {"flash_attention", true}}},
          {"optimizer_kernel", "fused"},
          {"parallel", {{"gpus", 1}}},
          {"gpu", "h100-sxm-80gb"}};
}

double Total(const Json& r) { return r["memory"]["total_bytes"].get<double>(); }

TEST(StepPeak, EndOfBackwardBindsWhenGradientsOutweighTheActivations) {
  // seq_len 1024 = 1024 tokens. Saved: one layer 1024 x 32,800 = 33,587,200, both 67,174,400;
  // logits and loss 1024 x 14,096 = 14,434,304; backward's working set 1024 x 12,288 =
  // 12,582,912.
  // End of forward, beyond weights and states: lm_head's gradient 2,048,000 + 67,174,400 +
  // 14,434,304 = 83,656,704.
  // End of backward: all gradients 46,049,280 + the first layer's 33,587,200 + 12,582,912 =
  // 92,219,392: it binds.
  const Json r = Result(Small(1024, 1));
  EXPECT_EQ(PerGpu(r, "weights"), 46049280);
  EXPECT_EQ(PerGpu(r, "optimizer_states"), 276295680);
  EXPECT_EQ(PerGpu(r, "gradients"), 46049280);
  EXPECT_EQ(PerGpu(r, "activations"), 33587200 + 12582912);
  EXPECT_EQ(Detail(r, "activations.layers"), 67174400);
  EXPECT_EQ(Detail(r, "activations.first_layer"), 33587200);
  EXPECT_EQ(Detail(r, "activations.backward_working_set"), 12582912);
  EXPECT_EQ(Detail(r, "activations.logits_and_loss"), 14434304);
  EXPECT_EQ(Detail(r, "gradients.all"), 46049280);
  // The reported total is the end of backward's; the end of forward's is smaller, and the
  // difference is the slack-scaled 92,219,392 - 83,656,704 = 8,562,688 of live bytes.
  EXPECT_NEAR(Detail(r, "peak.end_of_backward"), Total(r), 1);
  EXPECT_LT(Detail(r, "peak.end_of_forward"), Total(r));
  // The old sum would have held the gradients and every activation at once: the peak is
  // below weights + states + gradients + every saved activation + logits.
  EXPECT_LT(PerGpu(r, "gradients") + PerGpu(r, "activations"), 46049280.0 + 67174400 + 14434304);
  const Json& x = r["explain"]["/memory/total_bytes"];
  EXPECT_NE(x["formula"].get<std::string>().find("end of backward"), std::string::npos);
  // (memory.detail is written in whole bytes)
  EXPECT_NEAR(x["inputs"]["end_of_forward_bytes"].get<double>(), Detail(r, "peak.end_of_forward"),
              1);
}

TEST(StepPeak, EndOfForwardBindsWhenActivationsOutweighTheGradients) {
  // seq_len 2048 = 2048 tokens. Saved: one layer 2048 x 32,800 = 67,174,400, both
  // 134,348,800; logits and loss 2048 x 14,096 = 28,868,608; working set 2048 x 12,288 =
  // 25,165,824.
  // End of forward: 2,048,000 + 134,348,800 + 28,868,608 = 165,265,408: it binds.
  // End of backward: 46,049,280 + 67,174,400 + 25,165,824 = 138,389,504.
  // With set_to_none (PyTorch's default) only lm_head's gradient exists at that moment.
  const Json r = Result(Small(2048, 1));
  EXPECT_EQ(PerGpu(r, "gradients"), 2048000);
  EXPECT_EQ(PerGpu(r, "activations"), 134348800 + 28868608);
  EXPECT_EQ(Detail(r, "gradients.all"), 46049280);
  EXPECT_NEAR(Detail(r, "peak.end_of_forward"), Total(r), 1);
  EXPECT_LT(Detail(r, "peak.end_of_backward"), Total(r));
}

TEST(StepPeak, GradientAccumulationKeepsEveryGradientThroughLaterForwards) {
  // grad_accum 2 at seq_len 1024: the first micro-batch's gradients are alive while the second
  // runs forward. End of forward: 46,049,280 + 67,174,400 + 14,434,304 = 127,657,984, now
  // above the end of backward's 92,219,392 (as in the first test): it binds.
  const Json r = Result(Small(1024, 2));
  EXPECT_EQ(PerGpu(r, "gradients"), 46049280);
  EXPECT_EQ(PerGpu(r, "activations"), 67174400 + 14434304);
  EXPECT_NEAR(Detail(r, "peak.end_of_forward"), Total(r), 1);
  EXPECT_GT(Total(r), Total(Result(Small(1024, 1))));
}

TEST(StepPeak, MegatronsGradientBufferIsAliveThroughForward) {
  // Megatron keeps its fp32 main_grad buffer between steps (zero_grad_buffer zeroes it in
  // place): 4N = 92,098,560 bytes of gradients at both moments. End of forward: 92,098,560 +
  // 67,174,400 + 14,434,304 = 173,707,264; end of backward: 92,098,560 + 33,587,200 +
  // 12,582,912 = 138,268,672. The end of forward binds, with every gradient.
  Json req = Small(1024, 1);
  req["framework"] = "megatron";
  const Json r = Result(req);
  EXPECT_EQ(PerGpu(r, "gradients"), 92098560);
  EXPECT_EQ(PerGpu(r, "activations"), 67174400 + 14434304);
  EXPECT_NEAR(Detail(r, "peak.end_of_forward"), Total(r), 1);
}

TEST(StepPeak, BucketsAllocatedInBackwardAreAbsentFromForward) {
  // DeepSpeed ZeRO-2 on 2 GPUs allocates its IPG bucket, 5e8 bf16 elements = 1e9 bytes, in
  // backward() and frees it at the step. Gradients shard over 2: 23,024,640 bytes. End of
  // backward: 23,024,640 + 1e9 + 33,587,200 + 12,582,912 = 1,069,194,752 beyond weights and
  // states; end of forward: 2,048,000 + 67,174,400 + 14,434,304 = 83,656,704. The end of
  // backward binds, holding the bucket.
  Json req = Small(1024, 1);
  req["framework"] = "deepspeed";
  req["parallel"] = {{"gpus", 2}, {"zero", 2}};
  const Json r = Result(req);
  EXPECT_EQ(PerGpu(r, "gradients"), 23024640);
  EXPECT_EQ(PerGpu(r, "buffers"), 1e9);
  EXPECT_NEAR(Detail(r, "peak.end_of_backward"), Total(r), 1);
  // Plain PyTorch's DDP builds its buckets once, at construction: the flat copy of every
  // gradient (2N = 46,049,280 with ZeRO-0) counts at the end of forward too. End of forward:
  // 2,048,000 + 67,174,400 + 14,434,304 + 46,049,280 = 129,705,984; end of backward:
  // 46,049,280 x 2 + 33,587,200 + 12,582,912 = 138,268,672 binds, both with the copy.
  Json ddp = Small(1024, 1);
  ddp["parallel"] = {{"gpus", 2}, {"zero", 0}};
  const Json d = Result(ddp);
  EXPECT_EQ(PerGpu(d, "buffers"), 46049280);
  EXPECT_EQ(PerGpu(d, "gradients"), 46049280);
  EXPECT_NEAR(Detail(d, "peak.end_of_backward"), Total(d), 1);
}

TEST(StepPeak, AForeachOptimizerStepBindsWithItsSquareRoots) {
  // torch.optim's default on CUDA (foreach) takes the square root of every second moment at
  // once (torch/optim/adam.py, _multi_tensor_adam: exp_avg_sq_sqrt = torch._foreach_sqrt): a
  // temporary the size of the fp32 second moments, 4N = 92,098,560 bytes, while every gradient
  // is alive. Beyond weights and states: 46,049,280 + 92,098,560 = 138,147,840, above the end
  // of backward's 92,219,392 (first test): the step binds, with no activation alive.
  Json req = Small(1024, 1);
  req.erase("optimizer_kernel");
  const Json r = Result(req);
  EXPECT_EQ(r["request_normalized"]["optimizer_kernel"], "foreach");
  EXPECT_EQ(Detail(r, "optimizer_states.step_temporaries"), 92098560);
  EXPECT_EQ(PerGpu(r, "optimizer_states"), 276295680 + 92098560);
  EXPECT_EQ(PerGpu(r, "gradients"), 46049280);
  EXPECT_EQ(PerGpu(r, "activations"), 0);
  EXPECT_NEAR(Detail(r, "peak.optimizer_step"), Total(r), 1);
  EXPECT_LT(Detail(r, "peak.end_of_backward"), Total(r));
  const Json& x = r["explain"]["/memory/total_bytes"];
  EXPECT_NE(x["formula"].get<std::string>().find("optimizer step"), std::string::npos);
}

TEST(StepPeak, AForLoopOptimizerStepHoldsTheLargestParametersTemporaries) {
  // One parameter at a time: the square root and the quotient of the largest parameter's
  // fp32 second moment, the MLP's 1024 x 2048 = 2,097,152 elements (the embedding and head
  // are 1,024,000): 2 x 2,097,152 x 4 = 16,777,216 bytes. The step's 46,049,280 + 16,777,216 =
  // 62,826,496 stays under the end of backward's 92,219,392, which binds.
  Json req = Small(1024, 1);
  req["optimizer_kernel"] = "for_loop";
  const Json r = Result(req);
  EXPECT_EQ(Detail(r, "optimizer_states.step_temporaries"), 16777216);
  EXPECT_EQ(PerGpu(r, "optimizer_states"), 276295680);
  EXPECT_NEAR(Detail(r, "peak.end_of_backward"), Total(r), 1);
}

TEST(StepPeak, EachStackStepsWithItsOwnOptimizerKernel) {
  // The Hugging Face Trainer defaults to adamw_torch_fused from torch 2.8 and DeepSpeed and
  // Megatron to their FusedAdam: no temporaries; plain PyTorch (and FSDP) to foreach.
  for (const char* fw : {"hf_transformers", "deepspeed", "megatron"}) {
    Json req = Small(1024, 1);
    req.erase("optimizer_kernel");
    req["framework"] = fw;
    const Json r = Result(req);
    EXPECT_EQ(r["request_normalized"]["optimizer_kernel"], "fused") << fw;
    EXPECT_EQ(Detail(r, "optimizer_states.step_temporaries"), 0) << fw;
  }
  Json req = Small(1024, 1);
  req.erase("optimizer_kernel");
  req["framework"] = "pytorch_fsdp";
  EXPECT_EQ(Result(req)["request_normalized"]["optimizer_kernel"], "foreach");
}

TEST(StepPeak, TheStepsTemporariesAreWhatAnH200Measured) {
  // tests/reference/h200-2026-12/results/probes.json, adamw_step: Llama 3.2 1B's shape
  // (1,235,814,400 parameters, tied 128,256 x 2048 embedding), torch 2.11 AdamW, the second
  // step's peak over the memory after it: bf16 parameters foreach 2,472,677,376 B, for-loop
  // 1,052,770,304 B, fused 0; fp32 parameters (under bf16 autocast) foreach 4,943,257,600 B.
  // By hand: foreach, half the moments, 2 x 1,235,814,400 x 2 / 2 = 2,471,628,800 (bf16) and
  // 2 x 1,235,814,400 x 4 / 2 = 4,943,257,600 (fp32); for-loop, the embedding's square root
  // and quotient, 2 x 262,668,288 x 2 = 1,050,673,152. Each is within 0.2% of its measurement.
  const auto step = [](const char* kernel, const char* master) {
    const Json r = Result({{"model", {{"preset", "llama-3.2-1b"}}},
                           {"workload", {{"kind", "full_finetune"}, {"seq_len", 1024}}},
                           {"precision", {{"master_weights", master}}},
                           {"optimizer_kernel", kernel},
                           {"gpu", "h200-sxm-141gb"}});
    return Detail(r, "optimizer_states.step_temporaries");
  };
  EXPECT_EQ(step("foreach", "none"), 2471628800);
  EXPECT_NEAR(step("foreach", "none") / 2472677376.0, 1, 0.002);
  EXPECT_EQ(step("for_loop", "none"), 1050673152);
  EXPECT_NEAR(step("for_loop", "none") / 1052770304.0, 1, 0.002);
  EXPECT_EQ(step("fused", "none"), 0);
  EXPECT_EQ(step("foreach", "fp32"), 4943257600);
}

}  // namespace
}  // namespace gpuplan
