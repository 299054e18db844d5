// SPDX-License-Identifier: MIT
// The policies the physics takes from a stack (stacks/policy.h), each moved away from plain
// PyTorch's default on its own, and the profiles' per-card rules. Expected differences are
// worked by hand from Llama 3.2 1B's config.json: hidden 2048, 16 layers, 32 heads of 64,
// 8 KV heads, intermediate 8192, vocab 128256, tied embeddings; 1,235,814,400 parameters.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "json/stacks_io.h"
#include "physics/estimate.h"
#include "test_util.h"

namespace gpuplan {
namespace {

using json_io::FindStack;
using json_io::Stacks;
using testing::Json;
using testing::Parse;

constexpr double kParams = 1235814400;
constexpr double kMiB = 1024.0 * 1024.0;

Json OneB(const Json& workload, const Json& parallel) {
  return {{"model", {{"preset", "llama-3.2-1b"}}},
          {"gpu", "h100-sxm-80gb"},
          {"workload", workload},
          {"parallel", parallel},
          {"memory_techniques", {{"recompute", "none"}}}};
}

Json FullFinetune(int micro_batch, int seq_len, int grad_accum = 1) {
  return {{"kind", "full_finetune"},
          {"micro_batch", micro_batch},
          {"seq_len", seq_len},
          {"grad_accum", grad_accum},
          {"tokens", 1e9}};
}

// The estimate of `base` under plain PyTorch's policies changed by `change`.
Estimate With(const gpuplan::Setup& base, const std::function<void(StackProfile*)>& change) {
  StackProfile profile = PlainPytorch();
  change(&profile);
  gpuplan::Setup r = base;
  UseStack(&r, profile);
  return EstimateSetup(r, /*with_levers=*/false);
}

double Detail(const Estimate& e, const char* key) {
  const auto it = e.memory.detail.find(key);
  return it == e.memory.detail.end() ? 0.0 : it->second;
}

TEST(Policy, OptimizerStatesInBf16HalveAdamsMoments) {
  const gpuplan::Setup r = Parse(OneB(FullFinetune(1, 512), {{"gpus", 1}}));
  // AdamW's two moments: 8 bytes per parameter in fp32, 4 in bf16.
  EXPECT_DOUBLE_EQ(Detail(EstimateSetup(r, false), "optimizer_states.moments"), 8 * kParams);
  const auto bf16 = [](StackProfile* p) { p->training.optimizer_states = StateDtype::kBf16; };
  const auto param = [](StackProfile* p) { p->training.optimizer_states = StateDtype::kParam; };
  EXPECT_DOUBLE_EQ(Detail(With(r, bf16), "optimizer_states.moments"), 4 * kParams);
  // In the parameter's dtype: bf16 weights give bf16 moments, fp32 weights fp32 ones.
  EXPECT_DOUBLE_EQ(Detail(With(r, param), "optimizer_states.moments"), 4 * kParams);
  Json fp32 = OneB(FullFinetune(1, 512), {{"gpus", 1}});
  fp32["precision"] = {{"weights", "fp32"}};
  EXPECT_DOUBLE_EQ(Detail(With(Parse(fp32), param), "optimizer_states.moments"), 8 * kParams);
  // 8-bit Adam quantises its own states whatever the dtype policy says.
  Json eight = OneB(FullFinetune(1, 512), {{"gpus", 1}});
  eight["optimizer"] = "adamw_8bit";
  const gpuplan::Setup q = Parse(eight);
  EXPECT_DOUBLE_EQ(Detail(With(q, bf16), "optimizer_states.moments"),
                   Detail(EstimateSetup(q, false), "optimizer_states.moments"));
}

TEST(Policy, SavedActivationsAddWhatEachOpKeeps) {
  // 512 tokens x 16 layers, tp 1, no recomputation; each op's extra bytes per token and layer.
  const gpuplan::Setup r = Parse(OneB(FullFinetune(1, 512), {{"gpus", 1}}));
  const double base = Detail(EstimateSetup(r, false), "activations.layers");
  const auto extra = [&](const std::function<void(SavedActivations*)>& change) {
    return Detail(With(r, [&](StackProfile* p) { change(&p->training.saved); }),
                  "activations.layers") -
           base;
  };
  // fp32 copies of both norms' inputs: 4 x 2048 x 2 = 16,384 bytes; x 512 x 16 = 134,217,728.
  EXPECT_DOUBLE_EQ(extra([](SavedActivations* s) { s->norm_fp32_copy = true; }), 134217728);
  // fp32 q (2048 wide) and k (512): 4 x 2560 = 10,240 bytes; x 8192 = 83,886,080.
  EXPECT_DOUBLE_EQ(extra([](SavedActivations* s) { s->rope_fp32_copy = true; }), 83886080);
  // K and V repeated from 8 to 32 heads: 2 bytes x 2 x (2048 - 512) = 6,144; x 8192 = 50,331,648.
  EXPECT_DOUBLE_EQ(extra([](SavedActivations* s) { s->kv_expanded = true; }), 50331648);
  // Two gated-MLP tensors instead of four: -2 bytes x 2 x 8192 = -32,768; x 8192.
  EXPECT_DOUBLE_EQ(extra([](SavedActivations* s) { s->gated_mlp_tensors = 2; }), -268435456);
}

TEST(Policy, AnFp32NormWithAFrozenScaleKeepsOnlyItsUpcast) {
  // LoRA: the norms' scales are frozen, so each fp32 norm keeps its fp32 input in place of
  // the bf16 one, (4 - 2) x 2048 bytes, and no normalised value: 2 norms x 4096 = 8,192 bytes
  // per token and layer; x 512 tokens x 16 layers = 67,108,864.
  Json lora = OneB({{"kind", "lora"}, {"micro_batch", 1}, {"seq_len", 512}, {"lora_rank", 16}},
                   {{"gpus", 1}});
  const gpuplan::Setup r = Parse(lora);
  const double base = Detail(EstimateSetup(r, false), "activations.layers");
  EXPECT_DOUBLE_EQ(Detail(With(r, [](StackProfile* p) { p->training.saved.norm_fp32_copy = true; }),
                          "activations.layers") -
                       base,
                   67108864);
}

TEST(Policy, ContextParallelRingHoldsEveryChunkUntilTheLayersForwardEnds) {
  // cp 2 over 4096 tokens: 2048 a rank. K and V 512 wide each: 2048 x 2 bytes x 1024 =
  // 4,194,304; the output 2048 wide: 8,388,608. Two chunks of both, plus the output's fp32
  // sum (x 2): 2 x 12,582,912 + 16,777,216 = 41,943,040 bytes.
  const gpuplan::Setup r = Parse(OneB(FullFinetune(1, 4096), {{"gpus", 2}, {"cp", 2}}));
  EXPECT_DOUBLE_EQ(Detail(EstimateSetup(r, false), "activations.context_parallel_ring"), 41943040);
}

TEST(Policy, AnUnshardedPipelineStageGathersOnceAndHoldsFp32Gradients) {
  // ZeRO-3 over 4 data-parallel ranks, pp 2, 4 micro-batches. Stage 0: 8 layers of
  // 60,821,504 parameters and the 262,668,288-entry token table: 749,240,320 parameters,
  // whose unsharded fp32 gradients add 2,996,961,280 bytes; its 8 layers stay gathered:
  // 6 more than the 2 FSDP holds, at 121,643,008 bf16 bytes each.
  Json j = OneB(FullFinetune(1, 512, 4), {{"gpus", 8}, {"pp", 2}, {"zero", 3}});
  j["memory_techniques"]["chunked_loss"] = true;
  const gpuplan::Setup r = Parse(j);
  const Estimate plain = EstimateSetup(r, false);
  const Estimate kept =
      With(r, [](StackProfile* p) { p->training.gather.unsharded_under_pp = true; });
  ASSERT_EQ(kept.memory.stage, 0);
  ASSERT_EQ(plain.memory.stage, 0);
  EXPECT_DOUBLE_EQ(Detail(kept, "gradients.all") - Detail(plain, "gradients.all"), 2996961280.0);
  EXPECT_DOUBLE_EQ(Detail(kept, "buffers.gathered_units") - Detail(plain, "buffers.gathered_units"),
                   6 * 121643008.0);
  // One gather a step instead of two per micro-batch: 1/8 of the gathers' time.
  EXPECT_NEAR(kept.training.dp_gather_s / plain.training.dp_gather_s, 1.0 / 8, 1e-12);
}

TEST(Policy, GradientsSteppedInBackwardAreOneTensor) {
  // The largest tensor is the (tied) embedding: 128256 x 2048 = 262,668,288 bf16 gradients.
  const gpuplan::Setup r = Parse(OneB(FullFinetune(1, 512), {{"gpus", 1}}));
  const Estimate e = With(
      r, [](StackProfile* p) { p->training.gradients = GradientLifetime::kSteppedInBackward; });
  EXPECT_DOUBLE_EQ(e.memory.per_gpu.gradients, 2 * 262668288.0);
  EXPECT_DOUBLE_EQ(EstimateSetup(r, false).memory.per_gpu.gradients, 2 * kParams);
}

TEST(Policy, GradientBucketsFollowTheReduction) {
  // Two data-parallel ranks, ZeRO 0: DDP's flat copy is every bf16 gradient, 2 x 1.236e9
  // bytes; reducing in the gradients' own buffer needs none.
  const gpuplan::Setup dp = Parse(OneB(FullFinetune(1, 512), {{"gpus", 2}, {"zero", 0}}));
  EXPECT_DOUBLE_EQ(Detail(EstimateSetup(dp, false), "buffers.gradient_buckets"), 2 * kParams);
  EXPECT_DOUBLE_EQ(
      Detail(With(dp, [](StackProfile* p) { p->training.buckets.copy_for_allreduce = false; }),
             "buffers.gradient_buckets"),
      0);
  // ZeRO-1: two 25 MiB buckets, or one whole bucket of 1e8 bf16 elements = 2e8 bytes.
  const gpuplan::Setup z1 = Parse(OneB(FullFinetune(1, 512), {{"gpus", 2}, {"zero", 1}}));
  EXPECT_DOUBLE_EQ(Detail(EstimateSetup(z1, false), "buffers.gradient_buckets"), 50 * kMiB);
  EXPECT_DOUBLE_EQ(
      Detail(With(z1, [](StackProfile* p) { p->training.buckets.bucket_elements = 1e8; }),
             "buffers.gradient_buckets"),
      2e8);
}

TEST(Policy, KeepingGatheredParametersHoldsTheStageAndGathersOnce) {
  // ZeRO-3 over 8 GPUs. One layer: q 2048x2048 + k, v 2048x512 + o 2048x2048 = 10,485,760;
  // MLP 3 x 2048 x 8192 = 50,331,648; two norms 4,096: 60,821,504 bf16 parameters =
  // 121,643,008 bytes. FSDP holds 2 layers gathered; kept from forward to backward, all 16:
  // 14 more.
  const gpuplan::Setup r = Parse(OneB(FullFinetune(1, 512), {{"gpus", 8}, {"zero", 3}}));
  const Estimate plain = EstimateSetup(r, false);
  const Estimate kept =
      With(r, [](StackProfile* p) { p->training.gather.reshard_after_forward = false; });
  EXPECT_DOUBLE_EQ(Detail(kept, "buffers.gathered_units") - Detail(plain, "buffers.gathered_units"),
                   14 * 121643008.0);
  // Per micro-batch: two gathers of bf16 weights and one reduce-scatter of bf16 gradients of
  // the same size (6 bytes a parameter), or one gather (4 bytes): 2/3 of the traffic.
  EXPECT_NEAR(kept.training.dp_comm_s / plain.training.dp_comm_s, 2.0 / 3, 1e-12);
}

TEST(Policy, PipelineSchedulesHoldAndDrainAsTheirPapersSay) {
  // pp 2, 8 micro-batches: 1F1B's first stage holds 2 in flight, GPipe all 8 (4x), the
  // interleaved schedule with 2 chunks per GPU pp + (pp - 1)/v = 2.5 (1.25x).
  // A chunked loss keeps the last stage's logits below what the first stage's extra
  // micro-batches hold, so the first stage is the one reported.
  Json j = OneB(FullFinetune(1, 4096, 8), {{"gpus", 2}, {"pp", 2}});
  j["memory_techniques"]["chunked_loss"] = true;
  const gpuplan::Setup r = Parse(j);
  const Estimate f1b = EstimateSetup(r, false);
  const auto schedule = [&](PipelineSchedule s, int64_t v) {
    return With(r, [&](StackProfile* p) { p->training.pipeline = {s, v}; });
  };
  const Estimate gpipe = schedule(PipelineSchedule::kGpipe, 1);
  const Estimate inter2 = schedule(PipelineSchedule::kInterleaved, 2);
  ASSERT_EQ(f1b.memory.stage, 0);
  ASSERT_EQ(inter2.memory.stage, 0);
  EXPECT_NEAR(Detail(gpipe, "activations.layers") / Detail(f1b, "activations.layers"), 4, 1e-12);
  EXPECT_NEAR(Detail(inter2, "activations.layers") / Detail(f1b, "activations.layers"), 1.25,
              1e-12);
  // GPipe drains like 1F1B; interleaving shortens the p - 1 fill slots to 1/v of theirs, so
  // what v = 4 saves is (1 - 1/4) / (1 - 1/2) = 1.5 times what v = 2 saves.
  EXPECT_DOUBLE_EQ(gpipe.training.bubble_s, f1b.training.bubble_s);
  const Estimate inter4 = schedule(PipelineSchedule::kInterleaved, 4);
  EXPECT_NEAR((f1b.training.bubble_s - inter4.training.bubble_s) /
                  (f1b.training.bubble_s - inter2.training.bubble_s),
              1.5, 1e-9);
}

TEST(Policy, OverlapHidesOnlyWhatTheStackOverlaps) {
  // Tensor parallel over 2: overlapped with the GEMMs, the all-reduces (far shorter than the
  // compute here) leave the step.
  const gpuplan::Setup tp = Parse(OneB(FullFinetune(4, 4096), {{"gpus", 2}, {"tp", 2}}));
  const Estimate plain = EstimateSetup(tp, false);
  const Estimate tp_overlap = With(tp, [](StackProfile* p) { p->training.overlap.tp_comm = true; });
  ASSERT_GT(plain.training.tp_comm_s, 0);
  ASSERT_LT(plain.training.tp_comm_s, plain.training.compute_s);
  EXPECT_NEAR(plain.training.step_s - tp_overlap.training.step_s, plain.training.tp_comm_s, 1e-12);
  // DDP over 8 without bucket overlap: all of the all-reduce is exposed.
  const gpuplan::Setup dp = Parse(OneB(FullFinetune(4, 4096), {{"gpus", 8}}));
  const Estimate serial =
      With(dp, [](StackProfile* p) { p->training.overlap.grad_reduce = false; });
  ASSERT_GT(serial.training.dp_comm_s, 0);
  EXPECT_DOUBLE_EQ(serial.training.dp_exposed_s, serial.training.dp_comm_s);
  // ZeRO-3 without prefetch: the two gathers (4 of 6 bytes a parameter) are exposed, the
  // reduce-scatters still hide behind the backward but for the last one, the root unit's.
  const gpuplan::Setup z3 = Parse(OneB(FullFinetune(4, 4096), {{"gpus", 8}, {"zero", 3}}));
  const Estimate no_prefetch =
      With(z3, [](StackProfile* p) { p->training.overlap.param_gather = false; });
  const TrainingPerf& np = no_prefetch.training;
  EXPECT_NEAR(np.dp_exposed_s, np.dp_gather_s + np.dp_last_bucket_s, 1e-12);
  EXPECT_GT(np.dp_gather_s / np.dp_comm_s, 0.6);  // 2/3 of the bytes, with their latencies
}

TEST(StackProfiles, TorchtuneTrainsPureBf16WithItsEagerExtras) {
  // torchtune's full fine-tune: no master copy by default, so AdamW's moments are bf16,
  // 4 bytes a parameter. Its eager blocks keep, per token and layer, the fp32 norm inputs and
  // normalised values, 2 norms x 4 x 2048 = 16,384 bytes, and K and V expanded from 8 to 32
  // heads, 2 x 2 x 1536 = 6,144: 22,528 x 512 x 16 = 184,549,376 bytes more than plain
  // PyTorch's fused count.
  Json j = OneB(FullFinetune(1, 512), {{"gpus", 1}});
  const Estimate plain = EstimateSetup(Parse(j), false);
  j["framework"] = "torchtune";
  const Estimate tune = EstimateSetup(Parse(j), false);
  EXPECT_DOUBLE_EQ(Detail(tune, "optimizer_states.master_weights"), 0);
  EXPECT_DOUBLE_EQ(Detail(tune, "optimizer_states.moments"), 4 * kParams);
  EXPECT_DOUBLE_EQ(Detail(tune, "activations.layers") - Detail(plain, "activations.layers"),
                   184549376);
}

TEST(StackProfiles, HuggingFaceTrainerKeepsAThirdFp32LogitCopyAndUpcastsAKbitBase) {
  // LoRA (r 16 on q and v) over 512 tokens, no recomputation. The Trainer's loss copies the
  // shifted fp32 logits once more: 512 x 128,256 x 4 = 262,668,288 bytes. Its fp32 norms
  // keep their fp32 input (frozen scales): 2 norms x (4 - 2) x 2048 x 512 x 16 =
  // 67,108,864. PEFT's input copies: plain PyTorch (no autocast) keeps an fp32 copy for q and
  // for v, 2 x 2048 x 4 = 16,384 B a token and layer, in place of the bf16 norm output they
  // shared (2 x 2048 = 4,096), and lora_A's fp32 outputs 2 x 16 x 4 = 128: 12,416. Under the
  // Trainer's autocast the copies are bf16: 8,192 - 4,096 + 2 x 16 x 2 = 4,160; 8,256 less,
  // x 512 x 16 = 67,633,152. Together 67,108,864 - 67,633,152 = -524,288.
  const Json lora = {{"kind", "lora"},
                     {"micro_batch", 1},
                     {"seq_len", 512},
                     {"lora_rank", 16},
                     {"lora_targets", "qv"}};
  Json j = OneB(lora, {{"gpus", 1}});
  const Estimate plain = EstimateSetup(Parse(j), false);
  j["framework"] = "hf_transformers";
  const Estimate hf = EstimateSetup(Parse(j), false);
  EXPECT_DOUBLE_EQ(
      Detail(hf, "activations.logits_and_loss") - Detail(plain, "activations.logits_and_loss"),
      262668288);
  EXPECT_DOUBLE_EQ(Detail(hf, "activations.layers") - Detail(plain, "activations.layers"), -524288);
  EXPECT_DOUBLE_EQ(Detail(plain, "activations.lora_adapters"), 12416.0 * 512 * 16);
  EXPECT_DOUBLE_EQ(Detail(hf, "activations.lora_adapters"), 4160.0 * 512 * 16);
  // QLoRA on an nf4 base: PEFT's preparation casts the tied embedding (262,668,288 values)
  // and the 33 norms (67,584 values) from 2 to 4 bytes: 525,471,744 bytes more. Activations
  // become fp32: per token and layer, norm inputs, attention and MLP inputs 4 x 4 x 2048 =
  // 32,768 (the fp32 norm copy is then no extra), q, k, v 4 x 3072, attention output
  // 4 x 2048 and MLP 4 x 4 x 8192 = 151,552, logsumexp 128: 184,448 against 100,480 in bf16
  // (24,576 + 75,776 + 128), 83,968 more; x 512 x 16 = 687,865,856; the adapters' x @ A
  // (16 wide, q and v) 2 x 16 x 2 bytes more, x 512 x 16 = 524,288: 688,390,144. (The
  // bitsandbytes LoRA layer casts nothing under the Trainer's autocast: no input copies.)
  j["workload"]["kind"] = "qlora";
  j["precision"] = {{"weights", "nf4"}};
  const Estimate upcast = EstimateSetup(Parse(j), false);
  j["precision"]["kbit_fp32_upcast"] = false;
  const Estimate kept = EstimateSetup(Parse(j), false);
  EXPECT_DOUBLE_EQ(upcast.memory.per_gpu.weights - kept.memory.per_gpu.weights, 525471744);
  EXPECT_DOUBLE_EQ(Detail(upcast, "activations.layers") - Detail(kept, "activations.layers"),
                   688390144);
  // TRL skips the preparation when FSDP shards the base: two ranks at ZeRO-3 keep bf16.
  j["parallel"] = {{"gpus", 2}, {"zero", 3}};
  const Estimate sharded = EstimateSetup(Parse(j), false);
  j["precision"].erase("kbit_fp32_upcast");
  EXPECT_DOUBLE_EQ(EstimateSetup(Parse(j), false).memory.per_gpu.weights,
                   sharded.memory.per_gpu.weights);
}

TEST(StackProfiles, GradientReductionOverlapsAsEachProjectDefaults) {
  // DeepSpeed's overlap_comm is on at ZeRO-3 only; Megatron-LM's --overlap-grad-reduce is
  // off unless given: the whole reduction is exposed.
  const auto exposed = [](const char* fw, int zero) {
    Json j = OneB(FullFinetune(4, 4096), {{"gpus", 8}, {"zero", zero}});
    j["framework"] = fw;
    const TrainingPerf t = EstimateSetup(Parse(j), false).training;
    return t.dp_exposed_s / t.dp_comm_s;
  };
  EXPECT_DOUBLE_EQ(exposed("deepspeed", 2), 1);
  EXPECT_DOUBLE_EQ(exposed("megatron", 1), 1);
  EXPECT_LT(exposed("deepspeed", 3), 0.5);
}

const GpuSpec& Card(const char* id) { return *testing::ShippedCatalog().FindGpu(id); }

TEST(StackProfiles, ServingCapsAndReserveFollowTheCard) {
  Parallel one;
  Parallel four;
  four.gpus = four.tp = 4;
  const ServingPolicy& vllm = FindStack("vllm")->engine;
  // vLLM: 8192 tokens and 1024 sequences on 70 GiB or more but Ampere, else 2048 and 256.
  EXPECT_EQ(DefaultsOn(vllm, Card("h100-sxm-80gb"), one).max_batched_tokens, 8192);
  EXPECT_EQ(DefaultsOn(vllm, Card("h100-sxm-80gb"), one).max_seqs, 1024);
  EXPECT_EQ(DefaultsOn(vllm, Card("a100-sxm-80gb"), one).max_seqs, 256);
  EXPECT_EQ(DefaultsOn(vllm, Card("l40s-48gb"), one).max_batched_tokens, 2048);
  // SGLang on an 80 GB card: chunk 8192, graphs to batch 256 (512 at tp 4); reserve 512 MiB +
  // 1.5 MiB x 8192 + 2 MiB x 256 + 1/8 GiB = 13,440 MiB (14,336 MiB at tp 4: 1024 + 512),
  // above its 10 GiB floor.
  const ServingPolicy& sglang = FindStack("sglang")->engine;
  EXPECT_DOUBLE_EQ(DefaultsOn(sglang, Card("h100-sxm-80gb"), one).reserve_bytes, 13440 * kMiB);
  EXPECT_DOUBLE_EQ(DefaultsOn(sglang, Card("h100-sxm-80gb"), four).reserve_bytes, 14336 * kMiB);
  // A 24 GB card: chunk 2048, graphs to 24: 512 + 3072 + 48 + 128 = 3,760 MiB, no floor.
  EXPECT_EQ(DefaultsOn(sglang, Card("rtx-4090-24gb"), one).max_batched_tokens, 2048);
  EXPECT_DOUBLE_EQ(DefaultsOn(sglang, Card("rtx-4090-24gb"), one).reserve_bytes, 3760 * kMiB);
  // Engines without a reserve rule keep none.
  EXPECT_EQ(DefaultsOn(FindStack("llama_cpp")->engine, Card("rtx-4090-24gb"), one).reserve_bytes,
            0);
}

TEST(StackProfiles, VersionsCompareByNumberedParts) {
  // 0.10 is after 0.9 (not before it, as text would have it); a missing part is 0; a suffix
  // after the digits ("rc1") does not count.
  EXPECT_TRUE(VersionBelow("0.9.2", "0.10.0"));
  EXPECT_FALSE(VersionBelow("0.10.0", "0.9.2"));
  EXPECT_FALSE(VersionBelow("0.8", "0.8.0"));
  EXPECT_FALSE(VersionBelow("0.8.0", "0.8"));
  EXPECT_TRUE(VersionBelow("0.8.5rc1", "0.8.6"));
  EXPECT_FALSE(VersionBelow("0.20.1rc1.dev16", "0.20.0"));
  EXPECT_TRUE(VersionBelow("0.20.1rc1.dev16", "0.21.0"));
}

TEST(StackProfiles, LayoutsEachStackOffers) {
  Parallel tp2;
  tp2.gpus = tp2.tp = 2;
  Parallel zero2;
  zero2.gpus = 2;
  zero2.zero = 2;
  EXPECT_EQ(LayoutProblem(*FindStack("deepspeed"), tp2),
            "DeepSpeed ZeRO runs data parallel only here: tp, pp and cp must be 1");
  EXPECT_EQ(LayoutProblem(*FindStack("megatron"), zero2), "Megatron-LM offers ZeRO stages up to 1");
  EXPECT_EQ(LayoutProblem(*FindStack("llama_cpp"), tp2),
            "llama.cpp splits a model over GPUs by layers: use pp, not tp");
  EXPECT_EQ(LayoutProblem(PlainPytorch(), tp2), "");
  EXPECT_EQ(LayoutProblem(*FindStack("vllm"), tp2), "");
}

TEST(StackProfiles, EveryProfileIsFoundByItsIdAndCitesItsSources) {
  ASSERT_EQ(Stacks().size(), 9u);
  for (const StackProfile& s : Stacks()) {
    EXPECT_EQ(FindStack(s.id), &s) << s.id;
    EXPECT_FALSE(s.Sources().empty()) << s.id;
  }
  EXPECT_EQ(FindStack("plain"), nullptr);
}

TEST(StackProfiles, EveryProfileCanBeNamedByARequest) {
  // The request reader lists the ids it takes (json/request_io.cpp): each profile's is there.
  for (const StackProfile& s : Stacks()) {
    Json j = OneB(s.serving ? Json{{"kind", "inference"}} : FullFinetune(1, 512), {{"gpus", 1}});
    j["framework"] = s.id;
    EXPECT_EQ(Parse(j).stack, &s) << s.id;
  }
}

}  // namespace
TEST(StackProfiles, TransformersExpertKernelsRunAtTheirShareOfTheDenseRate) {
  // Two MoE layers of width 1024, 8 heads, 8 experts of 1408 (2 a token), vocab 1000, untied,
  // full fine-tune. Matmul parameters a token: attention 4 x 1024 x 1024 = 4,194,304, router
  // 8 x 1024 = 8,192, two experts 2 x 3 x 1024 x 1408 = 8,650,752 a layer; x 2 = 25,706,496,
  // + the head 1,024,000 and the norms the engine's N also counts (2 x 2 x 1024 + 1024 =
  // 5,120) = 26,735,616; 6N = 160,413,696, + attention 3 x 2 x 2 x 1024 x 2048 = 25,165,824:
  // 185,579,520 FLOPs a token, of which the experts' 6 x 2 x 8,650,752 = 103,809,024.
  // Timed kernel by kernel (1024 tokens, H100, 0.74 x 989.4e12 for GEMMs plus 9 us each, x3
  // with backward): per layer qkv 2 x 1024 x 3072 x 1024, o 2 x 1024^3, router 2 x 1024 x 8 x
  // 1024, and the 8 experts' grouped GEMMs on 1024 x 2 / 8 = 256 rows each, up 2 x 256 x 2816
  // x 1024 x 8 and down 2 x 256 x 1024 x 1408 x 8; attention 3.5 x 2 x 1024 x 512 x 2048 at
  // 989.4e12 x 0.58 x 1024 / 1624; eager pointwise (2 x 18 x 1024 + 6 x 1024 + 10 x 2048 +
  // 5 x 2816 + 2 x 1024 units x 2 bytes x 3 x 1024 at 2.68e12); the head 3 x (2 x 1024 x 1024
  // x 1000 FLOPs + 9 us) and the eager loss and final norm 2 x 1024 x (18 x 1000 + 54 x 1024)
  // bytes; x1.2 for the step: 1.180697 ms. The Trainer's experts run at 0.43 of the dense
  // rate (stacks.json) and its loss copies the logits once more in fp32 (4 more units a
  // logit): 1.415316 ms, 1.198712 x the plain stack's.
  const Json moe = {
      {"layers", 2},
      {"hidden", 1024},
      {"heads", 8},
      {"vocab", 1000},
      {"moe", {{"experts", 8}, {"experts_per_token", 2}, {"expert_intermediate", 1408}}}};
  Json j = {{"model", moe},
            {"workload", {{"kind", "full_finetune"}, {"micro_batch", 1}, {"seq_len", 1024}}},
            {"gpu", "h100-sxm-80gb"}};
  const Estimate plain = EstimateSetup(Parse(j), false);
  EXPECT_DOUBLE_EQ(plain.training.flops.hardware_per_token, 185579520);
  EXPECT_DOUBLE_EQ(plain.training.flops.expert_per_token, 103809024);
  j["framework"] = "hf_transformers";
  const Estimate hf = EstimateSetup(Parse(j), false);
  EXPECT_NEAR(plain.training.compute_s, 1.180697e-3, 1e-9);
  EXPECT_NEAR(hf.training.compute_s / plain.training.compute_s, 1.198712, 1e-6);
  // A dense model differs only by the loss's extra fp32 copy: 2 x 1024 x 4 x 1000 bytes at
  // 2.68e12, x1.2 = 3.668 us.
  Json dense = j;
  dense["model"].erase("moe");
  dense["model"]["intermediate"] = 2816;
  const Estimate hf_dense = EstimateSetup(Parse(dense), false);
  dense.erase("framework");
  EXPECT_NEAR(hf_dense.training.compute_s - EstimateSetup(Parse(dense), false).training.compute_s,
              3.668e-6, 1e-9);
}

}  // namespace gpuplan
