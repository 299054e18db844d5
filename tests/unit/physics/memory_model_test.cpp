// SPDX-License-Identifier: MIT
// Memory per GPU through the public API; every expected number is worked by hand in the
// comment or quoted from the cited source.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "physics/estimate_parts.h"
#include "test_util.h"

namespace gpuplan {
namespace {

using testing::Detail;
using testing::Json;
using testing::kGiB;
using testing::PerGpu;
using testing::Result;

// Weights, gradients and the optimizer's persistent state (master copy and moments), as the
// per-parameter rules count them; what the optimizer step allocates besides is tested apart
// (StepPeak.*Optimizer*).
double TrainingState(const Json& r) {
  return PerGpu(r, "weights") + PerGpu(r, "gradients") + Detail(r, "optimizer_states.moments") +
         Detail(r, "optimizer_states.master_weights");
}

Json FullFinetune(const char* preset, int gpus, int zero) {
  return {{"model", {{"preset", preset}}},
          {"workload", {{"kind", "full_finetune"}, {"micro_batch", 1}, {"seq_len", 512}}},
          {"parallel", {{"gpus", gpus}, {"zero", zero}}},
          {"gpu", "h100-sxm-80gb"}};
}

TEST(TrainingState, ThirteenBWithoutMasterCopy) {
  // A common rule of thumb: a 13B model in fp16 with Adam = 26 GB weights + 26 GB gradients
  // + 104 GB Adam = 156 GB, which leaves out the fp32 master copy. Llama 2 13B has
  // 13,015,864,320 parameters: 12 bytes each = 156.19e9 bytes.
  // The rule's 104 GB of Adam are fp32 moments: optimizer_states fp32.
  Json req = FullFinetune("llama-2-13b", 1, 0);
  req["precision"] = {{"master_weights", "none"}, {"optimizer_states", "fp32"}};
  EXPECT_NEAR(TrainingState(Result(req)) / 1e9, 156.0, 0.25);
}

TEST(TrainingState, PureSixteenBitKeepsMomentsInTheParametersDtype) {
  // The contract's default without a master copy: torch.optim creates AdamW's moments with
  // zeros_like(param) (torch/optim/adamw.py, _init_group), so pure-bf16 training keeps 2 x 2
  // bytes of moments: 2 + 2 + 4 = 8 bytes per parameter, 104.13e9 bytes for Llama 2 13B's
  // 13,015,864,320. bf16 moments named explicitly give the same.
  Json req = FullFinetune("llama-2-13b", 1, 0);
  req["precision"] = {{"master_weights", "none"}};
  const Json r = Result(req);
  EXPECT_NEAR(TrainingState(r), 8 * 13015864320.0, 1e3);
  EXPECT_EQ(r["request_normalized"]["precision"]["optimizer_states"], "param");
  req["precision"] = {{"master_weights", "none"}, {"optimizer_states", "bf16"}};
  EXPECT_NEAR(TrainingState(Result(req)), 8 * 13015864320.0, 1e3);
  // With the fp32 master copy the default stays fp32 moments (16 bytes per parameter).
  EXPECT_EQ(Result(FullFinetune("llama-2-13b", 1,
                                0))["request_normalized"]["precision"]["optimizer_states"],
            "fp32");
}

TEST(TrainingState, MixedPrecisionAdamIsSixteenBytesPerParameter) {
  // ZeRO paper (Rajbhandari et al. 2020), section 3.1: bf16 weights and gradients (2 + 2) plus
  // K = 12 bytes of fp32 master copy and Adam moments = 16 bytes per parameter: the correct
  // default. 16 x 13,015,864,320 = 208,253,829,120 bytes.
  EXPECT_NEAR(TrainingState(Result(FullFinetune("llama-2-13b", 1, 0))), 208253829120.0, 1e3);
}

TEST(TrainingState, ZeroStagesShardOverDataParallelRanks) {
  // ZeRO paper, Figure 1, with Nd = 64: stage 1 (2 + 2 + 12/64), stage 2 (2 + 14/64),
  // stage 3 16/64 bytes per parameter. Llama 2 7B: 6,738,415,616 parameters.
  const double p = 6738415616.0;
  EXPECT_NEAR(TrainingState(Result(FullFinetune("llama-2-7b", 64, 0))) / p, 16.0, 1e-6);
  EXPECT_NEAR(TrainingState(Result(FullFinetune("llama-2-7b", 64, 1))) / p, 4.1875, 1e-6);
  EXPECT_NEAR(TrainingState(Result(FullFinetune("llama-2-7b", 64, 2))) / p, 2.21875, 1e-6);
  EXPECT_NEAR(TrainingState(Result(FullFinetune("llama-2-7b", 64, 3))) / p, 0.25, 1e-6);
}

TEST(TrainingState, LighterOptimizers) {
  // Per parameter beyond bf16 weights + gradients + fp32 master (8 bytes): SGD 0, SGD with
  // momentum 4, Lion 4 (one fp32 buffer), 8-bit Adam 2 + 8/2048 (uint8 moments, fp32 absmax
  // per 2048-block, bitsandbytes).
  const double p = 6738415616.0;
  const auto per_param = [&](const char* opt) {
    Json req = FullFinetune("llama-2-7b", 1, 0);
    req["optimizer"] = opt;
    return TrainingState(Result(req)) / p;
  };
  EXPECT_NEAR(per_param("sgd"), 8.0, 1e-6);
  EXPECT_NEAR(per_param("sgd_momentum"), 12.0, 1e-6);
  EXPECT_NEAR(per_param("lion"), 12.0, 1e-6);
  EXPECT_NEAR(per_param("adamw_8bit"), 10.00390625, 1e-6);
  // Adafactor: factored moments, (rows + cols) x 4 bytes per matrix: 8/4096 here.
  EXPECT_NEAR(per_param("adafactor"), 8.001953125, 1e-6);
}

TEST(KvCache, VllmPaperOpt13BPerToken) {
  // vLLM paper (Kwon et al. 2023, section 3): OPT-13B needs 2 x 5120 x 40 x 2 bytes = 800 KiB
  // of KV cache per token, and up to 1.6 GB for a 2048-token request (819,200 x 2048 =
  // 1,677,721,600 bytes).
  const Json r = Result({{"model",
                          {{"hf_config",
                            {{"model_type", "opt"},
                             {"hidden_size", 5120},
                             {"num_hidden_layers", 40},
                             {"num_attention_heads", 40},
                             {"ffn_dim", 20480},
                             {"vocab_size", 50272}}}}},
                         {"workload",
                          {{"kind", "inference"},
                           {"prompt_tokens", 1024},
                           {"output_tokens", 1024},
                           {"concurrency", 1}}},
                         {"precision", {{"weights", "fp16"}}},
                         {"gpu", "a100-sxm-80gb"}});
  EXPECT_EQ(Detail(r, "kv_cache.bytes_per_token"), 819200);
  EXPECT_EQ(PerGpu(r, "kv_cache"), 1677721600);
}

Json Serve(const char* preset, int tp, const char* kv) {
  return {{"model", {{"preset", preset}}},
          {"workload",
           {{"kind", "inference"},
            {"prompt_tokens", 4096},
            {"output_tokens", 4096},
            {"concurrency", 2}}},
          {"precision", {{"kv_cache", kv}}},
          {"parallel", {{"gpus", tp}, {"tp", tp}}},
          {"gpu", "h100-sxm-80gb"}};
}

TEST(KvCache, GroupedQueryAttentionCountsKvHeadsOnly) {
  // Llama 3.1 8B: 2 x 32 layers x 8 KV heads x 128 x 2 bytes = 131,072 bytes per token (a
  // full-attention count would be 4x that). 2 sequences x 8192 tokens = exactly 2 GiB.
  const Json r = Result(Serve("llama-3.1-8b", 1, "bf16"));
  EXPECT_EQ(Detail(r, "kv_cache.bytes_per_token"), 131072);
  // The same figure without the detail, as the serving search's decode reads take it.
  const gpuplan::Setup q = testing::Parse(Serve("llama-3.1-8b", 1, "bf16"));
  EXPECT_EQ(MemoryOf(q, CountParams(q.model), /*with_detail=*/false).kv_bytes_per_token, 131072);
  EXPECT_EQ(PerGpu(r, "kv_cache"), 2 * kGiB);
  EXPECT_EQ(PerGpu(Result(Serve("llama-3.1-8b", 1, "fp8")), "kv_cache"), 1 * kGiB);
  // tp = 2 splits the 8 KV heads 4 per GPU: 1 GiB each.
  EXPECT_EQ(PerGpu(Result(Serve("llama-3.1-8b", 2, "bf16")), "kv_cache"), 1 * kGiB);
}

TEST(KvCache, TensorParallelBeyondKvHeadsReplicates) {
  // tp = 16 > 8 KV heads: each GPU keeps one KV head: 2 x 32 x 1 x 128 x 2 = 16,384 B/token.
  const Json r = Result(Serve("llama-3.1-8b", 16, "bf16"));
  EXPECT_EQ(Detail(r, "kv_cache.bytes_per_token"), 16384);
  bool warned = false;
  for (const auto& w : r["warnings"]) warned |= w["code"] == "kv_heads_replicated";
  EXPECT_TRUE(warned);
}

TEST(KvCache, MlaKeepsTheCompressedLatent) {
  // DeepSeek-V3: 61 layers x (kv_lora_rank 512 + rope 64) x 2 bytes = 70,272 bytes per token,
  // against 2 x 61 x 128 heads x 192 x 2 = 5,996,544 for the uncompressed keys and values.
  const Json r = Result(Serve("deepseek-v3", 1, "bf16"));
  EXPECT_EQ(Detail(r, "kv_cache.bytes_per_token"), 70272);
}

// A GPT layer as Korthikanti et al. 2022 count it: LayerNorm, plain 4h MLP, dropout.
Json GptTraining(int tp, bool sp, const char* recompute, int pp = 1) {
  return {
      {"model",
       {{"layers", 4},
        {"hidden", 1024},
        {"heads", 16},
        {"vocab", 1000},
        {"intermediate", 4096},
        {"mlp", "plain"},
        {"norm", "layer"},
        {"dropout", true}}},
      {"workload", {{"kind", "pretrain"}, {"micro_batch", 2}, {"seq_len", 512}, {"grad_accum", 8}}},
      {"memory_techniques", {{"recompute", recompute}, {"flash_attention", false}}},
      {"parallel", {{"gpus", tp * pp}, {"tp", tp}, {"pp", pp}, {"sequence_parallel", sp}}},
      {"gpu", "h100-sxm-80gb"}};
}

TEST(Activations, KorthikantiGptLayer) {
  // Korthikanti et al. 2022, eq. 1: s*b*h*(34 + 5*a*s/h) bytes per layer with no parallelism
  // or recomputation. s=512, b=2, h=1024, a=16: 1,048,576 x (34 + 40) = 77,594,624; x4 layers
  // = 310,378,496.
  EXPECT_EQ(Detail(Result(GptTraining(1, false, "none")), "activations.layers"), 310378496);
}

TEST(Activations, KorthikantiTensorAndSequenceParallel) {
  // Eq. 2, tensor parallel t=2 without SP: sbh(10 + 24/t + 5as/(ht)) = 1,048,576 x (10 + 12 +
  // 20) = 44,040,192 per layer, x4 = 176,160,768. Eq. 3, with SP: sbh(34 + 5as/h)/t =
  // 38,797,312 per layer, x4 = 155,189,248.
  EXPECT_EQ(Detail(Result(GptTraining(2, false, "none")), "activations.layers"), 176160768);
  EXPECT_EQ(Detail(Result(GptTraining(2, true, "none")), "activations.layers"), 155189248);
}

TEST(Activations, SelectiveAndFullRecomputation) {
  // Selective recomputation drops the 5as/h term: 1,048,576 x 34 x 4 = 142,606,336, and the
  // layer being recomputed holds its softmax output once: a*s*s*b*2 = 16,777,216.
  const Json sel = Result(GptTraining(1, false, "selective"));
  EXPECT_EQ(Detail(sel, "activations.layers"), 142606336);
  EXPECT_EQ(Detail(sel, "activations.recompute_working_set"), 16777216);
  // Full recomputation keeps 2sbh per layer (Korthikanti Table 2): 2,097,152 x 4 = 8,388,608,
  // plus one layer's full set during its recomputation: 77,594,624.
  const Json full = Result(GptTraining(1, false, "full"));
  EXPECT_EQ(Detail(full, "activations.layers"), 8388608);
  EXPECT_EQ(Detail(full, "activations.recompute_working_set"), 77594624);
}

TEST(Activations, PipelineFirstStageHoldsAllLayersWorth) {
  // Korthikanti section 4.2.3: with 1F1B the first of p stages keeps p micro-batches of its
  // L/p layers, i.e. L layers' worth: the same 310,378,496 as without pipelining.
  const Json r = Result(GptTraining(1, false, "none", 2));
  EXPECT_EQ(Detail(r, "activations.layers"), 310378496);
  EXPECT_EQ(r["memory"]["pipeline_stage"], 0);
}

TEST(Activations, LogitsAndLossBuffer) {
  // Last stage: b*s = 1024 tokens x vocab 1000 x (2 bf16 logits + 4 fp32 upcast + 4 fp32
  // log-probs) = 10,240,000, plus the final norm's and lm_head's inputs 1024 x 2 x 2 x 1024 =
  // 4,194,304: 14,434,304. A chunked loss (8 chunks) upcasts one chunk at a time:
  // 1024 x 1000 x (2 + 8/8) + 4,194,304 = 7,266,304.
  Json req = GptTraining(1, false, "full");
  EXPECT_EQ(Detail(Result(req), "activations.logits_and_loss"), 14434304);
  req["memory_techniques"]["chunked_loss"] = true;
  EXPECT_EQ(Detail(Result(req), "activations.logits_and_loss"), 7266304);
}

TEST(Lora, AllLinearRank16OnLlama3_8B) {
  // PEFT's print_trainable_parameters for Llama 3 8B, r = 16, all linear layers:
  // "trainable params: 41,943,040". By hand per layer: q 16*(4096+4096) + k, v 16*(4096+1024)
  // x2 + o 16*8192 + gate, up, down 3 x 16*(4096+14336) = 1,310,720; x32.
  const Json r = Result({{"model", {{"preset", "llama-3.1-8b"}}},
                         {"workload", {{"kind", "lora"}, {"lora_rank", 16}}},
                         {"gpu", "h100-sxm-80gb"}});
  EXPECT_EQ(Detail(r, "lora_adapter_params_per_gpu"), 41943040);
  // fp32 adapters: 4 bytes weights + 4 gradients + 8 AdamW moments, no separate master copy.
  EXPECT_EQ(Detail(r, "gradients.all"), 4.0 * 41943040);
  EXPECT_EQ(PerGpu(r, "optimizer_states"), 8.0 * 41943040);
  // The step's peak is the end of forward (every layer's saved activations outweigh 168 MB of
  // adapter gradients), when only the first gradients backward makes exist: the last layer's
  // adapters, 4 x 1,310,720 = 5,242,880 bytes.
  EXPECT_EQ(PerGpu(r, "gradients"), 4.0 * 1310720);
}

TEST(Quantised, Nf4BaseKeepsEmbeddingsIn16Bits) {
  // Llama 3.1 8B in NF4 (double quantised): the 6,979,321,856 linear weights at 4.126953125
  // bits = 3,600,416,768 bytes, embeddings + lm_head 2 x 525,336,576 x 2 bytes =
  // 2,101,346,304, norms 266,240 x 2 = 532,480: 5,702,295,552 bytes.
  const Json r = Result({{"model", {{"preset", "llama-3.1-8b"}}},
                         {"workload", {{"kind", "inference"}}},
                         {"precision", {{"weights", "nf4"}}},
                         {"gpu", "rtx-4090-24gb"}});
  EXPECT_EQ(PerGpu(r, "weights"), 5702295552);
}

TEST(Quantised, QloraNeedsLessThanLora) {
  // The mistake calculators make: QLoRA must come out below LoRA for the same job.
  Json req = {{"model", {{"preset", "llama-3.1-8b"}}},
              {"workload", {{"kind", "lora"}, {"micro_batch", 2}, {"seq_len", 2048}}},
              {"memory_techniques", {{"recompute", "full"}}},
              {"gpu", "rtx-4090-24gb"}};
  const double lora = Result(req)["memory"]["total_bytes"].get<double>();
  req["workload"]["kind"] = "qlora";
  const double qlora = Result(req)["memory"]["total_bytes"].get<double>();
  EXPECT_LT(qlora, lora - 8e9);  // the base shrinks from 16.1 GB to 5.7 GB
}

TEST(Offload, OptimizerAndParamsLeaveTheGpu) {
  Json req = FullFinetune("llama-2-7b", 8, 3);
  req["memory_techniques"] = {{"offload", "optimizer_and_params"}};
  const Json r = Result(req);
  EXPECT_EQ(PerGpu(r, "weights"), 0);
  EXPECT_EQ(PerGpu(r, "optimizer_states"), 0);
  // ZeRO-3 shards: 16 bytes x 6,738,415,616 / 8 = 13,476,831,232 bytes per GPU go to host.
  EXPECT_NEAR(r["memory"]["offloaded_bytes_per_gpu"].get<double>(), 13476831232.0, 1e3);
  EXPECT_GT(PerGpu(r, "buffers"), 0);  // the gathered layers still pass through the GPU
}

TEST(Headroom, FitsUsesTotalTimesOnePlusHeadroom) {
  Json req = Serve("llama-3.1-8b", 1, "bf16");
  req["headroom"] = 0.5;
  const Json r = Result(req);
  const double total = r["memory"]["total_bytes"].get<double>();
  EXPECT_NEAR(r["memory"]["total_with_headroom_bytes"].get<double>(), 1.5 * total, 1.0);
  EXPECT_EQ(r["memory"]["fits"].get<bool>(), 1.5 * total <= 80 * kGiB);
}

TEST(Sanity, BytesPerParameter) {
  // Full training lands in the teens of bytes per parameter with a fused optimizer step (16
  // bytes of weights, gradients and mixed-precision Adam state, plus recomputed activations);
  // torch.optim's default foreach step adds its fp32 square roots of the second moments, 4
  // bytes more while every gradient is alive (20 and up). Parameter-efficient fine-tuning
  // stays in single digits.
  Json full = FullFinetune("llama-3.1-8b", 1, 0);
  full["memory_techniques"] = {{"recompute", "full"}};
  const double b_foreach = Result(full)["memory"]["bytes_per_parameter"].get<double>();
  EXPECT_GE(b_foreach, 20);
  EXPECT_LT(b_foreach, 24);
  full["optimizer_kernel"] = "fused";
  const double b_full = Result(full)["memory"]["bytes_per_parameter"].get<double>();
  EXPECT_GE(b_full, 12);
  EXPECT_LT(b_full, 20);
  Json lora = full;
  lora["workload"]["kind"] = "lora";
  const double b_lora = Result(lora)["memory"]["bytes_per_parameter"].get<double>();
  EXPECT_GE(b_lora, 2);
  EXPECT_LT(b_lora, 10);
}

TEST(Layout, TensorParallelThatDoesNotDivideHeadsIsInfeasible) {
  const Json r = Result({{"model", {{"preset", "llama-3.1-8b"}}},
                         {"workload", {{"kind", "inference"}}},
                         {"parallel", {{"gpus", 3}, {"tp", 3}}},
                         {"gpu", "h100-sxm-80gb"}});
  EXPECT_FALSE(r["memory"]["fits"].get<bool>());
  ASSERT_FALSE(r["infeasible"].empty());
  EXPECT_EQ(r["infeasible"][0]["code"], "tp_does_not_divide_heads");
  EXPECT_EQ(r["infeasible"][0]["params"]["heads"], 32);
}

TEST(Layout, ExpertParallelChecks) {
  Json req = {{"model", {{"preset", "mixtral-8x7b"}}},
              {"workload", {{"kind", "inference"}}},
              {"parallel", {{"gpus", 6}, {"ep", 3}}},
              {"gpu", "h100-sxm-80gb"}};
  EXPECT_EQ(Result(req)["infeasible"][0]["code"], "ep_does_not_divide_experts");
  req["parallel"] = {{"gpus", 8}, {"ep", 8}};
  const Json r = Result(req);
  EXPECT_TRUE(r["infeasible"].empty());
  // One expert per GPU, in bf16: experts 32 layers x 3 x 4096 x 14336 x 2 = 11,274,289,152;
  // attention 32 x (2 x 4096^2 + 2 x 4096 x 1024) x 2 = 2,684,354,560; embedding + head
  // 2 x 32000 x 4096 x 2 = 524,288,000; routers 32 x 4096 x 8 x 2 = 2,097,152; norms
  // (32 x 8192 + 4096) x 2 = 532,480. Sum 14,485,561,344 (all 8 experts would be 92.7e9).
  EXPECT_EQ(PerGpu(r, "weights"), 14485561344);
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

using testing::Detail;
using testing::Json;
using testing::PerGpu;
using testing::Result;

TEST(Activations, MixtureOfExpertsRoutesKCopies) {
  // One MoE layer, h = 64, 4 heads (MHA, head_dim 16), 4 experts of width 128, top-2, bf16,
  // flash attention, no recomputation. Per token: norm inputs 2x2x64 = 256, QKV and MLP inputs
  // 2x64 each = 256, fp32 router probabilities 4x4 = 16; q, k, v 3x2x64 = 384; attention
  // output 2x64 = 128; logsumexp 4x4 = 16; two experts each keep their permuted input 2x64 and
  // gate, up, act, product 4x2x128: 2 x 1152 = 2304. Sum 3360 x 8 tokens = 26,880 bytes.
  const Json r =
      Result({{"model",
               {{"layers", 1},
                {"hidden", 64},
                {"heads", 4},
                {"vocab", 100},
                {"intermediate", 256},
                {"moe", {{"experts", 4}, {"experts_per_token", 2}, {"expert_intermediate", 128}}}}},
              {"workload", {{"kind", "pretrain"}, {"micro_batch", 1}, {"seq_len", 8}}},
              {"memory_techniques", {{"recompute", "none"}}},
              {"gpu", "h100-sxm-80gb"}});
  EXPECT_EQ(Detail(r, "activations.layers"), 26880);
}

TEST(Activations, ContextParallelSplitsTheSequence) {
  // cp = 2 halves the tokens each GPU holds: the Korthikanti layer of 77,594,624 bytes keeps
  // 1,048,576 x 34 / 2 of linear terms, and its softmax output covers its 256 queries against
  // all 512 keys: 16 x 256 x 512 x 2 x 2 (b = 2) + dropout mask and output x 1.5 => the s^2 term
  // halves too: 77,594,624 / 2 = 38,797,312 per layer, x4 = 155,189,248.
  const Json r = Result({{"model",
                          {{"layers", 4},
                           {"hidden", 1024},
                           {"heads", 16},
                           {"vocab", 1000},
                           {"intermediate", 4096},
                           {"mlp", "plain"},
                           {"norm", "layer"},
                           {"dropout", true}}},
                         {"workload", {{"kind", "pretrain"}, {"micro_batch", 2}, {"seq_len", 512}}},
                         {"memory_techniques", {{"recompute", "none"}, {"flash_attention", false}}},
                         {"parallel", {{"gpus", 2}, {"cp", 2}}},
                         {"gpu", "h100-sxm-80gb"}});
  EXPECT_EQ(Detail(r, "activations.layers"), 155189248);
}

TEST(Buffers, FsdpGathersTwoLayersAndTheRootUnit) {
  // Llama 2 7B under ZeRO-3 on 64 GPUs: a layer is 4 x 4096^2 + 3 x 4096 x 11008 + 2 x 4096 =
  // 202,383,360 parameters; two gathered in bf16 = 809,533,440 bytes, plus the root unit
  // (embedding and lm_head, 2 x 32000 x 4096 x 2 = 524,288,000): 1,333,821,440 bytes.
  EXPECT_EQ(Detail(Result(FullFinetune("llama-2-7b", 64, 3)), "buffers.gathered_units"),
            1333821440);
}

TEST(TrainingState, OptimizerInBackwardKeepsOneGradient) {
  // torchtune's optimizer_in_bwd steps each tensor as its gradient lands: the largest tensor
  // of Llama 3.1 8B is the 128256 x 4096 embedding: 525,336,576 x 2 bytes of bf16 gradient.
  // Paged 8-bit Adam keeps its (2 + 8/2048) bytes per parameter in unified memory instead.
  const Json r = Result({{"model", {{"preset", "llama-3.1-8b"}}},
                         {"workload", {{"kind", "full_finetune"}, {"seq_len", 512}}},
                         {"optimizer", "paged_adamw_8bit"},
                         {"precision", {{"master_weights", "none"}}},
                         {"memory_techniques", {{"optimizer_in_backward", true}}},
                         {"gpu", "rtx-4090-24gb"}});
  EXPECT_EQ(PerGpu(r, "gradients"), 1050673152);
  EXPECT_EQ(PerGpu(r, "optimizer_states"), 0);
  EXPECT_NEAR(r["memory"]["offloaded_bytes_per_gpu"].get<double>(), 8030261248.0 * 2.00390625, 1.0);
}

TEST(Inference, PrefillWorkingSetAndLogits) {
  // Llama 3.1 8B, one 1024-token prompt in bf16 with flash attention. Per prefilled token: the
  // residual stream and norm output 2 x 2 x 4096 = 16,384, plus the wider of the MLP's gate,
  // up and act (3 x 2 x 14336 = 86,016) and attention's q, k, v, o (2 x (4096 + 1024 + 1024 +
  // 4096) = 20,480): 102,400 x 1024 = 104,857,600 bytes. Sampling keeps one fp32 row of logits:
  // 128,256 x 4 = 513,024.
  const Json r = Result({{"model", {{"preset", "llama-3.1-8b"}}},
                         {"workload", {{"kind", "inference"}, {"prompt_tokens", 1024}}},
                         {"gpu", "h100-sxm-80gb"}});
  EXPECT_EQ(Detail(r, "activations.prefill_working_set"), 104857600);
  EXPECT_EQ(Detail(r, "activations.logits"), 513024);
}

TEST(Runtime, ReserveCommunicatorsAndSlack) {
  // runtime = card reserve (1 GiB in the catalog) + 0.5 GiB of NCCL buffers when gpus > 1 +
  // 5% of the six tensor parts.
  const Json one = Result({{"model", {{"preset", "llama-3.1-8b"}}},
                           {"workload", {{"kind", "inference"}}},
                           {"gpu", "h100-sxm-80gb"}});
  const double allocated = one["memory"]["allocated_bytes"].get<double>();
  EXPECT_NEAR(PerGpu(one, "runtime"), 1073741824.0 + 0.05 * allocated, 1.0);
  Json two = {{"model", {{"preset", "llama-3.1-8b"}}},
              {"workload", {{"kind", "inference"}}},
              {"parallel", {{"gpus", 2}, {"tp", 2}}},
              {"runtime", {{"reserve_bytes", 0}, {"allocator_slack", 0}}},
              {"gpu", "h100-sxm-80gb"}};
  EXPECT_EQ(PerGpu(Result(two), "runtime"), 536870912);
}

TEST(HostRam, RulesOfThumb) {
  // Rules of thumb: host RAM = 1.5 x VRAM for single-card training, 0.8 x the node's total VRAM for
  // multi-card training, 0.5 x VRAM per card for serving. H100 80 GiB: 120 GiB, 8 x 64 = 512
  // GiB, and 4 x 40 = 160 GiB for a 4-card server.
  using testing::kGiB;
  Json req = {{"model", {{"preset", "llama-3.1-8b"}}},
              {"workload", {{"kind", "lora"}, {"seq_len", 512}}},
              {"gpu", "h100-sxm-80gb"}};
  EXPECT_EQ(Result(req)["memory"]["host_ram_bytes"], 120 * kGiB);
  req["parallel"] = {{"gpus", 16}};
  EXPECT_EQ(Result(req)["memory"]["host_ram_bytes"], 512 * kGiB);
  req["workload"] = {{"kind", "inference"}};
  req["parallel"] = {{"gpus", 4}, {"tp", 4}};
  EXPECT_EQ(Result(req)["memory"]["host_ram_bytes"], 160 * kGiB);
  // Eight cards with 128 GB of host RAM starve (a classic under-provisioned box): a warning
  // says so.
  req["parallel"] = {{"gpus", 8}};
  req["workload"] = {{"kind", "lora"}, {"seq_len", 512}};
  req["host"] = {{"ram_bytes_per_node", 128e9}};
  const Json starved = Result(req);
  bool warned = false;
  for (const auto& w : starved["warnings"]) warned |= w["code"] == "host_ram_short";
  EXPECT_TRUE(warned);
}

TEST(Power, BoardPowerPerCardNodeAndJob) {
  // H100 SXM: 700 W board power; a server draws 0.8x that again (DGX H100: 10.2 kW for 5.6 kW
  // of GPUs): 8 x 700 x 1.8 = 10,080 W per node; 16 cards = two nodes, 20,160 W.
  Json req = {{"model", {{"preset", "llama-3.1-8b"}}},
              {"workload", {{"kind", "inference"}}},
              {"parallel", {{"gpus", 16}}},
              {"gpu", "h100-sxm-80gb"}};
  const Json r = Result(req);
  EXPECT_EQ(r["power"]["gpu_watts"], 700);
  EXPECT_EQ(r["power"]["node_watts"], 10080);
  EXPECT_EQ(r["power"]["total_watts"], 20160);
  EXPECT_EQ(r["power"]["nodes"], 2);
  // The contract example's site: 10.2 kW a node (fits), 40 kW a rack: 3 nodes per rack. A
  // 6 kW node limit is exceeded, and a liquid-cooled card on an air-cooled site is flagged.
  req["constraints"] = {{"node_power_w", 10200}, {"rack_power_w", 40000}};
  EXPECT_EQ(Result(req)["power"]["nodes_per_rack"], 3);
  req["constraints"] = {{"node_power_w", 6000}, {"cooling", "air"}};
  req["gpu"] = "gb200-nvl72-186gb";
  const Json limited = Result(req);
  std::vector<std::string> codes;
  for (const auto& w : limited["warnings"]) codes.push_back(w["code"]);
  EXPECT_NE(std::find(codes.begin(), codes.end(), "node_power_over_limit"), codes.end());
  EXPECT_NE(std::find(codes.begin(), codes.end(), "cooling_mismatch"), codes.end());
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

using testing::Detail;
using testing::FromHf;
using testing::Json;
using testing::Result;

TEST(Buffers, PlainDataParallelKeepsAFlatGradientCopy) {
  // PyTorch DDP (gradient_as_bucket_view=False, the default) copies every gradient into its
  // all-reduce buckets; the docs put the saving of views at "the total gradients size":
  // Llama 2 7B in bf16, 6,738,415,616 x 2 = 13,476,831,232 bytes. ZeRO-1/2 reduce-scatter
  // through two 25 MiB buckets instead: 52,428,800.
  EXPECT_EQ(Detail(Result(FullFinetune("llama-2-7b", 2, 0)), "buffers.gradient_buckets"),
            13476831232);
  EXPECT_EQ(Detail(Result(FullFinetune("llama-2-7b", 2, 2)), "buffers.gradient_buckets"), 52428800);
}

TEST(Moe, LayerPlacementFollowsEachFamily) {
  // Qwen2-MoE: layer i is sparse when (i + 1) % decoder_sparse_step == 0 and i is not in
  // mlp_only_layers: with step 2 over 8 layers, layers 1, 3, 5, 7; minus layer 5: three.
  const ModelSpec qwen = FromHf(R"({"model_type": "qwen2_moe", "hidden_size": 64,
      "intermediate_size": 128, "num_hidden_layers": 8, "num_attention_heads": 4,
      "vocab_size": 100, "num_experts": 4, "num_experts_per_tok": 2,
      "moe_intermediate_size": 32, "decoder_sparse_step": 2, "mlp_only_layers": [5]})");
  EXPECT_EQ(CountParams(qwen).moe_layers, 3);
  EXPECT_FALSE(qwen.IsMoeLayer(0));
  EXPECT_TRUE(qwen.IsMoeLayer(1));
  // DeepSeek: i >= first_k_dense_replace and i % moe_layer_freq == 0: with 2 dense layers and
  // freq 2 over 8 layers, layers 2, 4, 6.
  const ModelSpec ds = FromHf(R"({"model_type": "deepseek_v3", "hidden_size": 64,
      "intermediate_size": 128, "moe_intermediate_size": 32, "num_hidden_layers": 8,
      "num_attention_heads": 4, "n_routed_experts": 4, "n_shared_experts": 1,
      "num_experts_per_tok": 2, "first_k_dense_replace": 2, "moe_layer_freq": 2,
      "q_lora_rank": 16, "kv_lora_rank": 16, "qk_nope_head_dim": 8, "qk_rope_head_dim": 8,
      "v_head_dim": 8, "vocab_size": 100})");
  EXPECT_EQ(CountParams(ds).moe_layers, 3);
  EXPECT_TRUE(ds.IsMoeLayer(2));
  EXPECT_FALSE(ds.IsMoeLayer(3));
}

TEST(Gguf, TiedEmbeddingTakesTheOutputType) {
  // Llama 3.2 1B ties lm_head to the embedding; llama.cpp then quantises token_embd with the
  // output's type (Q6_K for Q4_K_M): 128256 x 2048 x 6.5625 / 8 = 215,470,080 bytes.
  const Json r = Result({{"model", {{"preset", "llama-3.2-1b"}}},
                         {"workload", {{"kind", "inference"}}},
                         {"precision", {{"weights", "gguf_q4_k_m"}}},
                         {"gpu", "rtx-4090-24gb"}});
  EXPECT_EQ(Detail(r, "weights.embedding_and_head"), 215470080);
}

}  // namespace
}  // namespace gpuplan
