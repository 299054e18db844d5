// SPDX-License-Identifier: MIT
// Launch-ready output: every option a command uses is one its project
// documents, and the values are the setup's. The option lists below are copied from each
// project's reference (the source is named above each list), not from the generator.
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

namespace gpuplan::testing {
namespace {

using Options = std::set<std::string>;

// vLLM engine arguments (docs.vllm.ai/en/stable/cli/serve/, vllm/engine/arg_utils.py).
const Options kVllm = {"--tensor-parallel-size",   "--pipeline-parallel-size",
                       "--data-parallel-size",     "--max-model-len",
                       "--gpu-memory-utilization", "--max-num-seqs",
                       "--max-num-batched-tokens", "--kv-cache-dtype",
                       "--quantization",           "--enable-prefix-caching",
                       "--enable-chunked-prefill", "--dtype",
                       "--enable-expert-parallel", "--block-size",
                       "--enforce-eager"};
// SGLang server arguments (docs.sglang.io server_arguments; python/sglang/srt/server_args.py,
// whose flags are the ServerArgs field names: tp_size -> --tp-size, pp_size, dtype).
const Options kSglang = {"--model-path",
                         "--tp-size",
                         "--pp-size",
                         "--dp-size",
                         "--ep-size",
                         "--context-length",
                         "--kv-cache-dtype",
                         "--quantization",
                         "--dtype",
                         "--mem-fraction-static",
                         "--chunked-prefill-size",
                         "--cuda-graph-max-bs",
                         "--max-running-requests",
                         "--enable-dp-attention"};
// trtllm-serve (tensorrt_llm/commands/serve.py).
const Options kTrtllm = {
    "--tp_size",        "--pp_size",     "--ep_size",        "--max_batch_size",
    "--max_num_tokens", "--max_seq_len", "--max_beam_width", "--kv_cache_free_gpu_memory_fraction",
    "--gpus_per_node",  "--backend"};
// llama-server (ggml-org/llama.cpp tools/server/README.md).
const Options kLlamaServer = {"-m",  "-c",   "-np",  "-b",     "-ub",    "-ngl",       "-sm",
                              "-fa", "-ctk", "-ctv", "--host", "--port", "--n-cpu-moe"};
// torchrun (torch.distributed.run --help) and Hugging Face TrainingArguments (transformers
// docs, Trainer), plus the example scripts' --model_name_or_path (run_clm.py ModelArguments).
const Options kTorchrun = {"--nnodes",        "--nproc-per-node", "--node-rank",  "--rdzv-backend",
                           "--rdzv-endpoint", "--master-addr",    "--master-port"};
const Options kTrainer = {"--model_name_or_path",
                          "--per_device_train_batch_size",
                          "--gradient_accumulation_steps",
                          "--bf16",
                          "--fp16",
                          "--optim",
                          "--output_dir",
                          "--fsdp",
                          "--fsdp_config",
                          "--deepspeed",
                          "--gradient_checkpointing",
                          "--max_steps"};
// Megatron-LM (megatron/training/arguments.py).
const Options kMegatron = {"--num-layers-per-virtual-pipeline-stage",
                           "--tp-comm-overlap",
                           "--overlap-grad-reduce",
                           "--overlap-param-gather",
                           "--tensor-model-parallel-size",
                           "--pipeline-model-parallel-size",
                           "--micro-batch-size",
                           "--global-batch-size",
                           "--seq-length",
                           "--max-position-embeddings",
                           "--num-layers",
                           "--hidden-size",
                           "--ffn-hidden-size",
                           "--num-attention-heads",
                           "--group-query-attention",
                           "--num-query-groups",
                           "--swiglu",
                           "--normalization",
                           "--untie-embeddings-and-output-weights",
                           "--bf16",
                           "--fp16",
                           "--sequence-parallel",
                           "--use-distributed-optimizer",
                           "--recompute-granularity",
                           "--recompute-method",
                           "--recompute-num-layers",
                           "--context-parallel-size",
                           "--expert-model-parallel-size",
                           "--num-experts",
                           "--moe-router-topk",
                           "--moe-ffn-hidden-size"};
// DeepSpeed configuration JSON (deepspeed/runtime/zero/config.py and the config docs).
const Options kDeepSpeedTop = {"train_micro_batch_size_per_gpu",
                               "gradient_accumulation_steps",
                               "train_batch_size",
                               "bf16",
                               "fp16",
                               "gradient_clipping",
                               "zero_optimization"};
const Options kDeepSpeedZero = {"stage",
                                "contiguous_gradients",
                                "overlap_comm",
                                "reduce_bucket_size",
                                "allgather_bucket_size",
                                "offload_optimizer",
                                "offload_param",
                                "reduce_scatter"};

Json Launch(const Json& request) { return ResultOf(ShippedEngine().Launch(request.dump())); }

// The options of a command (tokens starting with '-'), and the value after each.
std::vector<std::pair<std::string, std::string>> OptionsOf(const std::string& command) {
  std::istringstream in(command);
  std::vector<std::string> tokens;
  for (std::string t; in >> t;) {
    if (t != "\\") tokens.push_back(t);
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i].size() > 1 && tokens[i][0] == '-') {
      out.emplace_back(tokens[i], i + 1 < tokens.size() ? tokens[i + 1] : "");
    }
  }
  return out;
}

void ExpectDocumented(const std::string& command, const std::vector<const Options*>& lists) {
  for (const auto& [opt, value] : OptionsOf(command)) {
    bool known = false;
    for (const Options* l : lists) known = known || l->count(opt) > 0;
    EXPECT_TRUE(known) << opt << " is not a documented option in:\n" << command;
  }
}

std::string ValueOf(const std::string& command, const std::string& opt) {
  for (const auto& [o, v] : OptionsOf(command)) {
    if (o == opt) return v;
  }
  return "";
}

Json Serving(const char* framework, int tp) {
  Json q = {{"model", {{"preset", "llama-3.1-70b"}}},
            {"gpu", "h100-sxm-80gb"},
            {"workload",
             {{"kind", "inference"},
              {"prompt_tokens", 3000},
              {"output_tokens", 1000},
              {"concurrency", 8}}},
            {"parallel", {{"gpus", tp}, {"tp", tp}}}};
  if (framework != nullptr) q["framework"] = framework;
  return q;
}

TEST(Launch, VllmServesTheSetupItWasEstimatedFor) {
  const Json l = Launch(Serving("vllm", 4));
  const std::string cmd = l["command"];
  EXPECT_EQ(cmd.rfind("vllm serve meta-llama/Llama-3.1-70B", 0), 0U) << cmd;
  ExpectDocumented(cmd, {&kVllm});
  EXPECT_EQ(ValueOf(cmd, "--tensor-parallel-size"), "4");
  EXPECT_EQ(ValueOf(cmd, "--max-model-len"), "4000");  // 3000 + 1000
  EXPECT_EQ(ValueOf(cmd, "--gpu-memory-utilization"), "0.92");
  EXPECT_EQ(ValueOf(cmd, "--max-num-batched-tokens"), "8192");  // an H100's default
  const Json e = Result(Serving("vllm", 4));
  EXPECT_EQ(ValueOf(cmd, "--max-num-seqs"),
            std::to_string(e["performance"]["inference"]["max_concurrency"].get<int64_t>()));
  // AWQ weights and an fp8 KV cache are named.
  Json q = Serving("vllm", 2);
  q["precision"] = {{"weights", "awq_int4"}, {"kv_cache", "fp8"}};
  const std::string awq = Launch(q)["command"];
  EXPECT_EQ(ValueOf(awq, "--quantization"), "awq");
  EXPECT_EQ(ValueOf(awq, "--kv-cache-dtype"), "fp8");
}

TEST(Launch, EveryServingEngineUsesItsOwnOptionNames) {
  const std::string sg = Launch(Serving("sglang", 4))["command"];
  const std::string program = "python3 -m sglang.launch_server";
  ASSERT_EQ(sg.rfind(program, 0), 0U);
  ExpectDocumented(sg.substr(program.size()), {&kSglang});
  EXPECT_EQ(ValueOf(sg, "--tp-size"), "4");
  EXPECT_EQ(ValueOf(sg, "--context-length"), "4000");
  const std::string trt = Launch(Serving("tensorrt_llm", 4))["command"];
  EXPECT_EQ(trt.rfind("trtllm-serve meta-llama/Llama-3.1-70B", 0), 0U);
  ExpectDocumented(trt, {&kTrtllm});
  EXPECT_EQ(ValueOf(trt, "--max_seq_len"), "4000");
  EXPECT_EQ(ValueOf(trt, "--kv_cache_free_gpu_memory_fraction"), "0.9");
  Json q = Serving("llama_cpp", 1);
  q["parallel"] = {{"gpus", 4}, {"pp", 4}};
  const std::string cpp = Launch(q)["command"];
  EXPECT_EQ(cpp.rfind("llama-server", 0), 0U);
  ExpectDocumented(cpp, {&kLlamaServer});
  // --ctx-size holds every slot's context: 8 x 4000.
  EXPECT_EQ(ValueOf(cpp, "-c"), "32000");
  EXPECT_EQ(ValueOf(cpp, "-np"), "8");
  EXPECT_EQ(ValueOf(cpp, "-sm"), "layer");
  EXPECT_EQ(ValueOf(cpp, "-ub"), "512");
}

Json Training(const char* framework, int gpus, int zero) {
  Json q = {{"model", {{"preset", "llama-3.1-8b"}}},
            {"gpu", "h100-sxm-80gb"},
            {"workload",
             {{"kind", "full_finetune"}, {"micro_batch", 2}, {"grad_accum", 4}, {"seq_len", 4096}}},
            {"parallel", {{"gpus", gpus}, {"zero", zero}}},
            {"memory_techniques", {{"recompute", "full"}}}};
  if (framework != nullptr) q["framework"] = framework;
  return q;
}

bool HasOption(const std::string& command, const std::string& opt) {
  for (const auto& [o, v] : OptionsOf(command)) {
    if (o == opt) return true;
  }
  return false;
}

TEST(Launch, ExpertParallelServingRunsAttentionDataParallel) {
  // DeepSeek-V3 over 8 H200s with its experts spread and attention data parallel: one server
  // of 8 GPUs in SGLang (--tp-size counts them all, --dp-size 8 with --enable-dp-attention,
  // --ep-size 8); vLLM runs 8 data-parallel ranks of tensor parallel 1 with its experts spread.
  Json q = {{"model", {{"preset", "deepseek-v3"}}},
            {"gpu", "h200-sxm-141gb"},
            {"workload", {{"kind", "inference"}, {"concurrency", 64}}},
            {"parallel", {{"gpus", 8}, {"ep", 8}}}};
  q["framework"] = "sglang";
  const std::string sg = Launch(q)["command"];
  ExpectDocumented(sg.substr(std::string("python3 -m sglang.launch_server").size()), {&kSglang});
  EXPECT_EQ(ValueOf(sg, "--tp-size"), "8");
  EXPECT_EQ(ValueOf(sg, "--dp-size"), "8");
  EXPECT_EQ(ValueOf(sg, "--ep-size"), "8");
  EXPECT_TRUE(HasOption(sg, "--enable-dp-attention"));
  q["framework"] = "vllm";
  const std::string vl = Launch(q)["command"];
  EXPECT_EQ(ValueOf(vl, "--tensor-parallel-size"), "1");
  EXPECT_EQ(ValueOf(vl, "--data-parallel-size"), "8");
  EXPECT_TRUE(HasOption(vl, "--enable-expert-parallel"));
  // A dense model's data parallel is copies of a server, no attention data parallel.
  Json dense = Serving("sglang", 2);
  dense["parallel"] = {{"gpus", 4}, {"tp", 2}};
  const std::string two = Launch(dense)["command"];
  EXPECT_EQ(ValueOf(two, "--tp-size"), "2");
  EXPECT_EQ(ValueOf(two, "--dp-size"), "2");
  EXPECT_FALSE(HasOption(two, "--enable-dp-attention"));
}

TEST(Launch, LlamaCppPassesWhatStaysOnTheCpu) {
  Json q = {{"model", {{"preset", "qwen3-30b-a3b"}}},
            {"gpu", "rtx-4090-24gb"},
            {"framework", "llama_cpp"},
            {"workload", {{"kind", "inference"}}},
            {"serving", {{"n_cpu_moe", 34}}}};
  const std::string cmd = Launch(q)["command"];
  ExpectDocumented(cmd, {&kLlamaServer});
  EXPECT_EQ(ValueOf(cmd, "--n-cpu-moe"), "34");
  EXPECT_EQ(ValueOf(cmd, "-ngl"), "999");
  q["serving"] = {{"n_gpu_layers", 20}};
  EXPECT_EQ(ValueOf(Launch(q)["command"], "-ngl"), "20");
}

TEST(Launch, TorchtuneRunsItsRecipeWithConfigOverrides) {
  // `tune run` takes torchrun's options, the recipe and key=value overrides of its config
  // (torchtune/_cli/run.py; recipes/configs/llama3_1/8B_full.yaml).
  const Json l = Launch(Training("torchtune", 8, 3));
  const std::string cmd = l["command"];
  EXPECT_EQ(cmd.rfind("tune run --nnodes 1 --nproc_per_node 8", 0), 0u) << cmd;
  for (const char* part :
       {"full_finetune_distributed", "--config CONFIG", "batch_size=2",
        "gradient_accumulation_steps=4", "tokenizer.max_seq_len=4096", "dtype=bf16",
        "enable_activation_checkpointing=True", "compile=False", "optimizer_in_bwd=False"}) {
    EXPECT_NE(cmd.find(part), std::string::npos) << part << " missing from\n" << cmd;
  }
  EXPECT_EQ(l["framework"], "torchtune");
  const std::string one = Launch(Training("torchtune", 1, 0))["command"];
  EXPECT_NE(one.find("tune run \\\n  full_finetune_single_device"), std::string::npos) << one;
}

TEST(Launch, FsdpRunsUnderTorchrunWithItsConfigFile) {
  const Json l = Launch(Training(nullptr, 16, 3));
  const std::string cmd = l["command"];
  ExpectDocumented(cmd, {&kTorchrun, &kTrainer});
  // 16 H100s are two 8-GPU nodes.
  EXPECT_EQ(ValueOf(cmd, "--nnodes"), "2");
  EXPECT_EQ(ValueOf(cmd, "--nproc-per-node"), "8");
  EXPECT_EQ(ValueOf(cmd, "--per_device_train_batch_size"), "2");
  EXPECT_EQ(ValueOf(cmd, "--gradient_accumulation_steps"), "4");
  EXPECT_EQ(ValueOf(cmd, "--fsdp"), "\"full_shard");
  ASSERT_EQ(l["files"].size(), 1U);
  const Json cfg = Json::parse(l["files"][0]["text"].get<std::string>());
  EXPECT_EQ(cfg["transformer_layer_cls_to_wrap"][0], "LlamaDecoderLayer");
  EXPECT_EQ(cfg["activation_checkpointing"], true);
  EXPECT_EQ(ValueOf(Launch(Training("pytorch_fsdp", 8, 2))["command"], "--fsdp"),
            "\"shard_grad_op");
}

TEST(Launch, TheHuggingFaceTrainerKeepsItsNameUnlessDeepSpeedRunsIt) {
  // The Trainer script is the same command; FSDP through its --fsdp options stays the
  // Trainer's, ZeRO-1 goes to DeepSpeed as for a request without a framework.
  const Json fsdp = Launch(Training("hf_transformers", 16, 3));
  ExpectDocumented(fsdp["command"], {&kTorchrun, &kTrainer});
  EXPECT_EQ(fsdp["framework"], "hf_transformers");
  EXPECT_EQ(ValueOf(fsdp["command"], "--fsdp"), "\"full_shard");
  EXPECT_EQ(Launch(Training("hf_transformers", 8, 1))["framework"], "deepspeed");
}

TEST(Launch, DeepSpeedWritesItsZeroConfiguration) {
  const Json l = Launch(Training("deepspeed", 8, 2));
  ExpectDocumented(l["command"], {&kTorchrun, &kTrainer});
  ASSERT_EQ(l["files"].size(), 1U);
  EXPECT_EQ(l["files"][0]["name"], "ds_config.json");
  const Json cfg = Json::parse(l["files"][0]["text"].get<std::string>());
  for (const auto& [key, value] : cfg.items()) EXPECT_TRUE(kDeepSpeedTop.count(key)) << key;
  for (const auto& [key, value] : cfg["zero_optimization"].items()) {
    EXPECT_TRUE(kDeepSpeedZero.count(key)) << key;
  }
  EXPECT_EQ(cfg["zero_optimization"]["stage"], 2);
  EXPECT_EQ(cfg["train_micro_batch_size_per_gpu"], 2);
  EXPECT_EQ(cfg["gradient_accumulation_steps"], 4);
  EXPECT_EQ(cfg["bf16"]["enabled"], true);
  // ZeRO-1 without a framework is DeepSpeed's too.
  EXPECT_EQ(Launch(Training(nullptr, 8, 1))["framework"], "deepspeed");
}

TEST(Launch, MegatronGetsTheModelAndLayout) {
  Json q = Training("megatron", 16, 1);
  q["parallel"]["tp"] = 4;
  q["parallel"]["sequence_parallel"] = true;
  const std::string cmd = Launch(q)["command"];
  ExpectDocumented(cmd, {&kTorchrun, &kMegatron});
  EXPECT_EQ(ValueOf(cmd, "--tensor-model-parallel-size"), "4");
  // Llama 3.1 8B: 32 layers, 4096 wide, 14336 MLP, 32 heads over 8 KV groups.
  EXPECT_EQ(ValueOf(cmd, "--num-layers"), "32");
  EXPECT_EQ(ValueOf(cmd, "--hidden-size"), "4096");
  EXPECT_EQ(ValueOf(cmd, "--ffn-hidden-size"), "14336");
  EXPECT_EQ(ValueOf(cmd, "--num-query-groups"), "8");
  // Global batch = 2 x 4 x (16 / 4) data-parallel ranks = 32.
  EXPECT_EQ(ValueOf(cmd, "--global-batch-size"), "32");
  EXPECT_NE(cmd.find("--use-distributed-optimizer"), std::string::npos);
  EXPECT_NE(cmd.find("--sequence-parallel"), std::string::npos);
}

TEST(Launch, MegatronCarriesTheRequestsScheduleAndOverlap) {
  // Interleaved 1F1B with 2 chunks per GPU over pp 2: 32 layers / (2 x 2) = 8 per virtual
  // stage; the overlap flags the request set become Megatron-LM's own (the distributed
  // optimizer's need ZeRO-1, i.e. --use-distributed-optimizer).
  Json q = Training("megatron", 16, 1);
  q["parallel"]["tp"] = 2;
  q["parallel"]["pp"] = 2;
  q["parallel"]["pp_schedule"] = "interleaved";
  q["parallel"]["virtual_stages"] = 2;
  q["parallel"]["overlap"] = {{"tp_comm", true}, {"grad_reduce", true}, {"param_gather", true}};
  const std::string cmd = Launch(q)["command"];
  ExpectDocumented(cmd, {&kTorchrun, &kMegatron});
  EXPECT_EQ(ValueOf(cmd, "--num-layers-per-virtual-pipeline-stage"), "8");
  for (const char* flag :
       {"--tp-comm-overlap", "--overlap-grad-reduce", "--overlap-param-gather"}) {
    EXPECT_NE(cmd.find(flag), std::string::npos) << flag;
  }
  // Not set by the request: not on the command line.
  const std::string plain = Launch(Training("megatron", 16, 1))["command"];
  EXPECT_EQ(plain.find("--overlap-grad-reduce"), std::string::npos);
}

TEST(Launch, MegatronCarriesContextAndExpertParallelism) {
  // Mixtral 8x7B over 16 GPUs: tp 2, cp 2, ep 4; 8 experts, top-2, 14336 wide each.
  Json q = {{"model", {{"preset", "mixtral-8x7b"}}},
            {"gpu", "h100-sxm-80gb"},
            {"framework", "megatron"},
            {"workload",
             {{"kind", "pretrain"}, {"micro_batch", 1}, {"grad_accum", 2}, {"seq_len", 8192}}},
            {"parallel", {{"gpus", 16}, {"tp", 2}, {"cp", 2}, {"ep", 4}, {"zero", 1}}}};
  const std::string cmd = Launch(q)["command"];
  ExpectDocumented(cmd, {&kTorchrun, &kMegatron});
  EXPECT_EQ(ValueOf(cmd, "--context-parallel-size"), "2");
  EXPECT_EQ(ValueOf(cmd, "--expert-model-parallel-size"), "4");
  EXPECT_EQ(ValueOf(cmd, "--num-experts"), "8");
  EXPECT_EQ(ValueOf(cmd, "--moe-router-topk"), "2");
  EXPECT_EQ(ValueOf(cmd, "--moe-ffn-hidden-size"), "14336");
  // Data parallel = 16 / (tp 2 x cp 2) = 4: global batch 1 x 2 x 4 = 8.
  EXPECT_EQ(ValueOf(cmd, "--global-batch-size"), "8");
}

TEST(Launch, LlamaCppAllocatesOnlyTheSlotsThatFit) {
  // 64 requests of 9000 tokens do not fit one 24 GB card: the slots are what one replica holds.
  Json q = {{"model", {{"preset", "llama-3.1-8b"}}},
            {"gpu", "rtx-4090-24gb"},
            {"framework", "llama_cpp"},
            {"workload",
             {{"kind", "inference"},
              {"prompt_tokens", 8000},
              {"output_tokens", 1000},
              {"concurrency", 64}}}};
  const std::string cmd = Launch(q)["command"];
  const int64_t fits = Result(q)["performance"]["inference"]["max_concurrency"];
  ASSERT_GT(fits, 0);
  ASSERT_LT(fits, 64);
  EXPECT_EQ(ValueOf(cmd, "-np"), std::to_string(fits));
  EXPECT_EQ(ValueOf(cmd, "-c"), std::to_string(fits * 9000));
}

TEST(Launch, AModelWithoutARepositoryNamesAPlaceholder) {
  Json q = Serving("vllm", 1);
  q["model"] = {{"layers", 4}, {"hidden", 512}, {"intermediate", 1024},
                {"heads", 8},  {"kv_heads", 8}, {"vocab", 1000}};
  const Json l = Launch(q);
  EXPECT_EQ(l["command"].get<std::string>().rfind("vllm serve MODEL", 0), 0U);
  EXPECT_FALSE(l["notes"].empty());
}

}  // namespace
}  // namespace gpuplan::testing
