// SPDX-License-Identifier: MIT
// Every option written here is one its project documents (tests/unit/after/launch_test.cpp lists
// each project's option names with their source and checks every command against them).
#include "after/launch.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <utility>

namespace gpuplan {
namespace {

using Args = std::vector<std::pair<std::string, std::string>>;  // option, value ("" = a flag)

std::string Join(const std::string& program, const Args& args) {
  std::string out = program;
  for (const auto& [opt, value] : args) {
    out += " \\\n  " + opt;
    if (!value.empty()) out += " " + value;
  }
  return out;
}

std::string N(int64_t v) { return std::to_string(v); }

std::string Repo(const Question& q, std::vector<std::string>* notes) {
  if (!q.model_repo.empty()) return q.model_repo;
  notes->push_back(
      "MODEL stands for the model's Hugging Face repository or local path (the "
      "request gave an architecture, not a catalog preset)");
  return "MODEL";
}

// The Hugging Face transformers decoder-layer class of a model_type, for FSDP's auto-wrap.
std::string LayerClass(const std::string& family) {
  static const std::map<std::string, std::string> kClasses = {
      {"llama", "LlamaDecoderLayer"},
      {"mistral", "MistralDecoderLayer"},
      {"mixtral", "MixtralDecoderLayer"},
      {"qwen2", "Qwen2DecoderLayer"},
      {"qwen2_moe", "Qwen2MoeDecoderLayer"},
      {"qwen3", "Qwen3DecoderLayer"},
      {"qwen3_moe", "Qwen3MoeDecoderLayer"},
      {"gemma", "GemmaDecoderLayer"},
      {"gemma2", "Gemma2DecoderLayer"},
      {"gemma3_text", "Gemma3DecoderLayer"},
      {"llama4_text", "Llama4TextDecoderLayer"},
      {"gpt_oss", "GptOssDecoderLayer"},
      {"glm4_moe", "Glm4MoeDecoderLayer"},
      {"cohere", "CohereDecoderLayer"},
      {"cohere2", "Cohere2DecoderLayer"},
      {"smollm3", "SmolLM3DecoderLayer"},
      {"olmo2", "Olmo2DecoderLayer"},
      {"phi3", "Phi3DecoderLayer"},
      {"deepseek_v2", "DeepseekV2DecoderLayer"},
      {"deepseek_v3", "DeepseekV3DecoderLayer"},
      {"falcon", "FalconDecoderLayer"},
      {"opt", "OPTDecoderLayer"},
      {"gpt2", "GPT2Block"},
      {"bloom", "BloomBlock"},
      {"gpt_bigcode", "GPTBigCodeBlock"}};
  const auto it = kClasses.find(family);
  return it == kClasses.end() ? "DECODER_LAYER_CLASS" : it->second;
}

const char* TorchDtype(WeightFormat w) {
  if (w == WeightFormat::kFp16) return "float16";
  if (w == WeightFormat::kFp32 || w == WeightFormat::kTf32) return "float32";
  return "bfloat16";
}

// vLLM's and SGLang's --quantization for a weight format; "" when none is needed.
std::string Quantization(WeightFormat w, std::vector<std::string>* notes) {
  switch (w) {
    case WeightFormat::kAwqInt4:
      return "awq";
    case WeightFormat::kGptqInt4:
      return "gptq";
    case WeightFormat::kFp8:
      return "fp8";
    case WeightFormat::kNf4:
      return "bitsandbytes";
    case WeightFormat::kInt8:
    case WeightFormat::kInt4:
      notes->push_back(
          "int8/int4 weights: serve a checkpoint quantised in that format (its "
          "config names the method; no --quantization needed)");
      return "";
    default:
      return "";
  }
}

Launch Serving(const Question& q, const Estimate& e, const std::string& fw) {
  const Setup& r = q.setup;
  Launch l;
  l.framework = fw;
  const Workload& w = r.workload;
  const Parallel& p = r.parallel;
  const int64_t context = w.prompt_tokens + w.output_tokens;
  const int64_t seqs = std::max<int64_t>(1, e.serving.max_concurrency);
  // The engine's chunk on this card (the reader leaves it to the estimate) or the request's.
  const int64_t chunk =
      std::max<int64_t>(1, e.framework.max_batched_tokens > 0 ? e.framework.max_batched_tokens
                                                              : w.prefill_chunk_limit);
  const std::string repo = Repo(q, &l.notes);
  const bool fp8_kv = r.precision.kv_cache == KvFormat::kFp8;
  // Data-parallel ranks split the sequences: each engine rank runs its share.
  const int64_t dp = std::max<int64_t>(1, p.Dp());
  const int64_t rank_seqs = (seqs + dp - 1) / dp;
  if (fw == "vllm") {
    Args a = {{"--tensor-parallel-size", N(p.tp)}};
    if (p.pp > 1) a.emplace_back("--pipeline-parallel-size", N(p.pp));
    if (dp > 1) a.emplace_back("--data-parallel-size", N(dp));
    if (p.ep > 1) a.emplace_back("--enable-expert-parallel", "");
    a.insert(a.end(), {{"--max-model-len", N(context)},
                       {"--max-num-seqs", N(rank_seqs)},
                       {"--max-num-batched-tokens", N(chunk)},
                       {"--gpu-memory-utilization", "0.92"},
                       {"--dtype", TorchDtype(r.precision.weights)}});
    const std::string quant = Quantization(r.precision.weights, &l.notes);
    if (!quant.empty()) a.emplace_back("--quantization", quant);
    if (fp8_kv) a.emplace_back("--kv-cache-dtype", "fp8");
    l.command = Join("vllm serve " + repo, a);
  } else if (fw == "sglang") {
    // With experts spread (ep > 1) attention runs data parallel inside one server: SGLang's
    // --tp-size then counts every GPU and --dp-size with --enable-dp-attention splits it. A
    // dense model's data parallel is --dp-size copies of a --tp-size server behind its router.
    const bool dp_attention = dp > 1 && p.ep > 1;
    Args a = {{"--model-path", repo}, {"--tp-size", N(dp_attention ? p.tp * dp : p.tp)}};
    if (p.pp > 1) a.emplace_back("--pp-size", N(p.pp));
    if (dp > 1) a.emplace_back("--dp-size", N(dp));
    if (dp_attention) a.emplace_back("--enable-dp-attention", "");
    if (p.ep > 1) a.emplace_back("--ep-size", N(p.ep));
    a.insert(a.end(), {{"--context-length", N(context)},
                       {"--max-running-requests", N(seqs)},
                       {"--chunked-prefill-size", N(chunk)},
                       {"--dtype", TorchDtype(r.precision.weights)}});
    const std::string quant = Quantization(r.precision.weights, &l.notes);
    if (!quant.empty()) a.emplace_back("--quantization", quant);
    if (fp8_kv) a.emplace_back("--kv-cache-dtype", "fp8_e4m3");
    l.command = Join("python3 -m sglang.launch_server", a);
    l.notes.push_back(
        "--mem-fraction-static is left to SGLang, which derives it from the card "
        "(the estimate's KV pool uses the same rule)");
  } else if (fw == "tensorrt_llm") {
    const bool dp_attention = dp > 1 && p.ep > 1;
    Args a = {{"--tp_size", N(dp_attention ? p.tp * dp : p.tp)},
              {"--pp_size", N(p.pp)},
              {"--max_batch_size", N(rank_seqs)},
              {"--max_num_tokens", N(chunk)},
              {"--max_seq_len", N(context)},
              {"--kv_cache_free_gpu_memory_fraction", "0.9"}};
    if (p.ep > 1) a.emplace_back("--ep_size", N(p.ep));
    l.command = Join("trtllm-serve " + repo, a);
    if (dp_attention) {
      l.notes.push_back("attention data parallel over the " + N(dp) +
                        " ranks: enable_attention_dp: true in the --extra_llm_api_options file");
    } else if (dp > 1) {
      l.notes.push_back("run " + N(dp) + " copies of this server behind a load balancer");
    }
  } else {  // llama_cpp
    // llama.cpp allocates -c for all slots at start: only as many as one replica holds.
    const int64_t slots = std::max<int64_t>(1, std::min(w.concurrency, seqs));
    // -ngl: every layer on the GPUs unless the setup keeps some on the CPU.
    const int64_t ngl = r.serving.gpu_layers;
    Args a = {{"-m", "model.gguf"}, {"-c", N(slots * context)},
              {"-np", N(slots)},    {"-ngl", ngl >= 0 ? N(ngl) : std::string("999")},
              {"-ub", N(chunk)},    {"-fa", "on"}};
    if (r.serving.cpu_moe_layers > 0) a.emplace_back("--n-cpu-moe", N(r.serving.cpu_moe_layers));
    if (p.gpus > 1) a.emplace_back("-sm", "layer");
    if (r.precision.kv_cache == KvFormat::kInt8 || fp8_kv) {
      a.emplace_back("-ctk", "q8_0");
      a.emplace_back("-ctv", "q8_0");
    }
    l.command = Join("llama-server", a);
    l.notes.push_back("model.gguf: the GGUF file of " + repo + " in " +
                      std::string(Name(r.precision.weights)));
  }
  if (e.serving.max_concurrency > 0 && w.concurrency > e.serving.max_concurrency) {
    l.notes.push_back(
        "one replica serves " + N(e.serving.max_concurrency) + " of the " + N(w.concurrency) +
        " concurrent requests: run " +
        N((w.concurrency + e.serving.max_concurrency - 1) / e.serving.max_concurrency) +
        " replicas behind a load balancer");
  }
  return l;
}

// Nodes and processes per node for a launcher: the GPUs the estimate put on each node.
std::pair<int64_t, int64_t> NodesAndPerNode(const Estimate& e, const Parallel& p) {
  const int64_t per_node = std::max<int64_t>(1, e.gpus_per_node_used);
  return {(p.gpus + per_node - 1) / per_node, per_node};
}

std::string Torchrun(const Estimate& e, const Parallel& p, const std::string& script) {
  const auto [nodes, per_node] = NodesAndPerNode(e, p);
  std::string cmd = "torchrun --nnodes " + N(nodes) + " --nproc-per-node " + N(per_node);
  if (nodes > 1) {
    cmd += " \\\n  --node-rank $NODE_RANK --rdzv-backend c10d --rdzv-endpoint $MASTER_ADDR:29400";
  }
  return cmd + " \\\n  " + script;
}

std::string Optim(Optimizer o) {
  switch (o) {
    case Optimizer::kAdamW8bit:
      return "adamw_bnb_8bit";
    case Optimizer::kPagedAdamW8bit:
      return "paged_adamw_8bit";
    case Optimizer::kAdafactor:
      return "adafactor";
    case Optimizer::kSgd:
    case Optimizer::kSgdMomentum:
      return "sgd";
    default:
      return "adamw_torch";
  }
}

// Megatron-LM's pretrain_gpt.py options: the parallel layout, the batch, the model's shape, the
// precision and the memory techniques.
Args MegatronArgs(const Question& q) {
  const Setup& r = q.setup;
  const Workload& w = r.workload;
  const Parallel& p = r.parallel;
  const ModelSpec& m = r.model;
  const bool fp16 = r.precision.weights == WeightFormat::kFp16;
  const bool full_recompute = r.techniques.recompute == Recompute::kFull;
  Args a = {{"--tensor-model-parallel-size", N(p.tp)}, {"--pipeline-model-parallel-size", N(p.pp)}};
  if (p.cp > 1) a.emplace_back("--context-parallel-size", N(p.cp));
  if (p.ep > 1) a.emplace_back("--expert-model-parallel-size", N(p.ep));
  a.insert(a.end(), {{"--micro-batch-size", N(w.micro_batch)},
                     {"--global-batch-size", N(w.micro_batch * w.grad_accum * p.Dp())},
                     {"--seq-length", N(w.seq_len)},
                     {"--max-position-embeddings", N(std::max(w.seq_len, m.max_context))},
                     {"--num-layers", N(m.layers)},
                     {"--hidden-size", N(m.hidden)},
                     {"--ffn-hidden-size", N(m.intermediate)},
                     {"--num-attention-heads", N(m.heads)}});
  if (m.IsMoe()) {
    a.emplace_back("--num-experts", N(m.moe.experts));
    a.emplace_back("--moe-router-topk", N(m.moe.experts_per_token));
    a.emplace_back("--moe-ffn-hidden-size", N(m.moe.expert_intermediate));
  }
  if (m.kv_heads > 0 && m.kv_heads < m.heads) {
    a.emplace_back("--group-query-attention", "");
    a.emplace_back("--num-query-groups", N(m.kv_heads));
  }
  if (m.mlp == MlpKind::kGated) a.emplace_back("--swiglu", "");
  if (m.norm == NormKind::kRms) a.emplace_back("--normalization", "RMSNorm");
  if (!m.tied_embeddings) a.emplace_back("--untie-embeddings-and-output-weights", "");
  a.emplace_back(fp16 ? "--fp16" : "--bf16", "");
  if (p.sequence_parallel) a.emplace_back("--sequence-parallel", "");
  if (p.zero >= 1) a.emplace_back("--use-distributed-optimizer", "");
  if (r.techniques.recompute != Recompute::kNone) {
    a.emplace_back("--recompute-granularity", full_recompute ? "full" : "selective");
    if (full_recompute) {
      a.emplace_back("--recompute-method", "uniform");
      a.emplace_back("--recompute-num-layers", "1");
    }
  }
  // What the request set of the schedule and the overlap, in Megatron-LM's flags
  // (docs/source/api-guide/dist_optimizer.md; arguments.py).
  const TrainingOverrides& o = q.training;
  if (o.pipeline && o.pipeline->schedule == PipelineSchedule::kInterleaved && p.pp > 1) {
    const int64_t v = std::max<int64_t>(1, o.pipeline->virtual_stages);
    a.emplace_back("--num-layers-per-virtual-pipeline-stage", N(m.layers / (p.pp * v)));
  }
  if (o.tp_comm_overlap.value_or(false)) a.emplace_back("--tp-comm-overlap", "");
  if (p.zero >= 1 && o.grad_reduce_overlap.value_or(false)) {
    a.emplace_back("--overlap-grad-reduce", "");
  }
  if (p.zero >= 1 && o.param_gather_overlap.value_or(false)) {
    a.emplace_back("--overlap-param-gather", "");
  }
  return a;
}

// DeepSpeed's ds_config.json for the request's ZeRO stage, batch, precision and offloads.
std::string DeepSpeedConfig(const Question& q) {
  const Setup& r = q.setup;
  const Workload& w = r.workload;
  const Parallel& p = r.parallel;
  const bool fp16 = r.precision.weights == WeightFormat::kFp16;
  char ds[1024];
  std::snprintf(ds, sizeof ds,
                "{\n"
                "  \"train_micro_batch_size_per_gpu\": %lld,\n"
                "  \"gradient_accumulation_steps\": %lld,\n"
                "  \"%s\": {\"enabled\": true},\n"
                "  \"gradient_clipping\": 1.0,\n"
                "  \"zero_optimization\": {\n"
                "    \"stage\": %d,\n"
                "    \"contiguous_gradients\": true,\n"
                "    \"overlap_comm\": %s,\n"
                "    \"reduce_bucket_size\": 500000000%s%s\n"
                "  }\n"
                "}\n",
                static_cast<long long>(w.micro_batch), static_cast<long long>(w.grad_accum),
                fp16 ? "fp16" : "bf16", p.zero, p.zero == 3 ? "true" : "false",
                r.techniques.offload_optimizer
                    ? ",\n    \"offload_optimizer\": {\"device\": \"cpu\", \"pin_memory\": true}"
                    : "",
                r.techniques.offload_params && p.zero == 3
                    ? ",\n    \"offload_param\": {\"device\": \"cpu\", \"pin_memory\": true}"
                    : "");
  return ds;
}

// The Trainer under DeepSpeed: its config file, and ZeRO-1 taken to DeepSpeed from FSDP.
void AddDeepSpeed(const Question& q, const std::string& fw, Args* a, Launch* l) {
  const Setup& r = q.setup;
  l->files.push_back({"ds_config.json", DeepSpeedConfig(q)});
  a->emplace_back("--deepspeed", "ds_config.json");
  if (r.techniques.recompute == Recompute::kFull) a->emplace_back("--gradient_checkpointing", "");
  if (fw != "deepspeed") {
    l->framework = "deepspeed";
    l->notes.push_back("ZeRO-1 is DeepSpeed's (FSDP offers ZeRO-2 and ZeRO-3)");
  }
}

// The Trainer under FSDP (ZeRO-2 or 3): its options and the auto-wrap config file.
void AddFsdp(const Question& q, Args* a, Launch* l) {
  const Setup& r = q.setup;
  const Parallel& p = r.parallel;
  const bool full_recompute = r.techniques.recompute == Recompute::kFull;
  l->framework = "pytorch_fsdp";
  a->emplace_back("--fsdp", std::string("\"") + (p.zero == 3 ? "full_shard" : "shard_grad_op") +
                                (r.techniques.offload_params ? " offload" : "") + " auto_wrap\"");
  a->emplace_back("--fsdp_config", "fsdp_config.json");
  l->files.push_back({"fsdp_config.json", "{\n  \"transformer_layer_cls_to_wrap\": [\"" +
                                              LayerClass(r.model.family) +
                                              "\"],\n  \"activation_checkpointing\": " +
                                              (full_recompute ? "true" : "false") + "\n}\n"});
}

// The Trainer under plain DDP (ZeRO 0, or one data-parallel rank).
void AddDdp(const Question& q, Args* a, Launch* l) {
  const Setup& r = q.setup;
  l->framework = "pytorch_fsdp";
  if (r.techniques.recompute == Recompute::kFull) a->emplace_back("--gradient_checkpointing", "");
  if (r.parallel.Dp() > 1)
    l->notes.push_back(
        "ZeRO 0: plain DistributedDataParallel, which torchrun "
        "and the Trainer set up without further options");
}

// Hugging Face Trainer under torchrun: DDP, FSDP (ZeRO-2/3) or DeepSpeed (any stage).
void TrainerLaunch(const Question& q, const Estimate& e, const std::string& fw,
                   const std::string& repo, Launch* l) {
  const Setup& r = q.setup;
  const Workload& w = r.workload;
  const Parallel& p = r.parallel;
  const bool fp16 = r.precision.weights == WeightFormat::kFp16;
  Args a = {{"--model_name_or_path", repo},
            {"--per_device_train_batch_size", N(w.micro_batch)},
            {"--gradient_accumulation_steps", N(w.grad_accum)},
            {fp16 ? "--fp16" : "--bf16", ""},
            {"--optim", Optim(r.optimizer)},
            {"--output_dir", "out"}};
  const bool deepspeed = fw == "deepspeed" || p.zero == 1;
  if (p.tp > 1 || p.pp > 1 || p.cp > 1) {
    l->notes.push_back(
        "tp/pp/cp > 1 is not a Trainer option: run this layout with Megatron-LM "
        "or torchtitan; the command covers its data-parallel part");
  }
  if (deepspeed) {
    AddDeepSpeed(q, fw, &a, l);
  } else if (p.zero >= 2 && p.Dp() > 1) {
    AddFsdp(q, &a, l);
  } else {
    AddDdp(q, &a, l);
  }
  if (w.IsPeft()) {
    l->notes.push_back("train.py applies the adapters: peft LoraConfig(r=" + N(w.lora_rank) +
                       ", target_modules=...)" +
                       (w.kind == WorkloadKind::kQlora
                            ? " on a BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="
                              "\"nf4\") base"
                            : ""));
  }
  l->notes.push_back(
      "train.py is a Hugging Face Trainer script (HfArgumentParser over "
      "TrainingArguments); the dataset and max steps are yours");
  l->command = Join(Torchrun(e, p, "train.py"), a);
}

// torchtune's `tune run` (torchtune/_cli/run.py: torchrun's options, then the recipe): the
// recipe by method and GPU count, and the configuration keys its recipes read (recipes/
// configs/llama3_1/8B_lora.yaml and 8B_full.yaml; tensor_parallel_dim and
// context_parallel_dim in recipes/full_finetune_distributed.py).
void TorchtuneLaunch(const Question& q, const Estimate& e, Launch* l) {
  const Setup& r = q.setup;
  const Workload& w = r.workload;
  const Parallel& p = r.parallel;
  const bool peft = w.IsPeft();
  const std::string recipe = std::string(peft ? "lora_finetune" : "full_finetune") +
                             (p.gpus > 1 ? "_distributed" : "_single_device");
  std::string run = "tune run";
  if (p.gpus > 1) {
    const auto [nodes, per_node] = NodesAndPerNode(e, p);
    run += " --nnodes " + N(nodes) + " --nproc_per_node " + N(per_node);
  }
  Args a = {
      {recipe, ""},
      {"--config", "CONFIG"},
      {"batch_size=" + N(w.micro_batch), ""},
      {"gradient_accumulation_steps=" + N(w.grad_accum), ""},
      {"tokenizer.max_seq_len=" + N(w.seq_len), ""},
      {std::string("dtype=") + (r.precision.weights == WeightFormat::kFp32 ? "fp32" : "bf16"), ""},
      {std::string("enable_activation_checkpointing=") +
           (r.techniques.recompute == Recompute::kFull ? "True" : "False"),
       ""},
      {std::string("compile=") + (q.training.compile ? "True" : "False"), ""}};
  if (peft) a.emplace_back("model.lora_rank=" + N(w.lora_rank), "");
  if (!peft) {
    a.emplace_back(
        std::string("optimizer_in_bwd=") + (r.techniques.optimizer_in_backward ? "True" : "False"),
        "");
  }
  if (r.optimizer == Optimizer::kPagedAdamW8bit) {
    a.emplace_back("optimizer._component_=bitsandbytes.optim.PagedAdamW8bit", "");
  }
  l->notes.push_back(
      "CONFIG is torchtune's configuration for the model and method (`tune ls` lists them, "
      "e.g. llama3_1/8B_lora" +
      std::string(w.kind == WorkloadKind::kQlora ? ", or a qlora one" : "") + ")");
  if (w.kind == WorkloadKind::kPretrain) {
    l->notes.push_back("torchtune fine-tunes: a pretraining run takes its full_finetune recipe");
  }
  if (p.tp > 1) a.emplace_back("tensor_parallel_dim=" + N(p.tp), "");
  if (p.cp > 1) a.emplace_back("context_parallel_dim=" + N(p.cp), "");
  if (p.pp > 1)
    l->notes.push_back("torchtune's recipes have no pipeline parallelism: pp is not set");
  l->command = Join(run, a);
}

Launch Training(const Question& q, const Estimate& e, const std::string& fw) {
  const Setup& r = q.setup;
  Launch l;
  l.framework = fw;
  if (fw == "torchtune") {
    TorchtuneLaunch(q, e, &l);
    return l;
  }
  const std::string repo = Repo(q, &l.notes);
  if (fw == "megatron") {
    l.command = Join(Torchrun(e, r.parallel, "pretrain_gpt.py"), MegatronArgs(q));
    l.notes.push_back(
        "add the data and tokenizer options (--data-path, --tokenizer-type, ...) "
        "and the model's position embedding and bias options; --train-iters "
        "follows the run's tokens / (global batch x seq length)");
    return l;
  }
  TrainerLaunch(q, e, fw, repo, &l);
  // The command is a Trainer script already; only a switch to DeepSpeed renames it.
  if (fw == "hf_transformers" && l.framework == "pytorch_fsdp") l.framework = fw;
  return l;
}

}  // namespace

Launch LaunchFor(const Question& q, const Estimate& e) {
  const Setup& r = q.setup;
  const std::string fw = r.StackNamed()            ? r.stack->id
                         : r.workload.IsTraining() ? "pytorch_fsdp"
                                                   : "vllm";
  Launch l = r.workload.IsTraining() ? Training(q, e, fw) : Serving(q, e, fw);
  if (!r.StackNamed()) {
    l.notes.push_back("the estimate used no framework profile; set framework to \"" + l.framework +
                      "\" for its memory behaviour (KV pool, buckets, graphs)");
  }
  return l;
}

}  // namespace gpuplan
