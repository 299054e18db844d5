// SPDX-License-Identifier: MIT
// The measurement script. The engine writes only the settings and its own estimate as Python
// literals; the program after them is fixed text (after/measure.py, compiled in), so every
// request gets the same, reviewed measurement method: warm-up steps excluded, several full
// steps timed, the peak memory counters of the CUDA caching allocator, and the 10% success line.
#include "after/script.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>

namespace gpuplan {

// after/measure.py from the line after its settings block, embedded by the build
// (cmake/EmbedScript.cmake).
std::string_view MeasureProgram();

namespace {

// Warm-up and measured steps: the first steps are excluded, several full cycles measured.
constexpr int kWarmupSteps = 3;
constexpr int kMeasuredSteps = 10;

std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string Num(double v) {
  if (!std::isfinite(v)) return "None";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string Int(int64_t v) { return std::to_string(v); }
std::string Bool(bool v) { return v ? "True" : "False"; }

// Hugging Face module names of the LoRA targets (Llama-style layers).
std::string LoraTargetList(const LoraTargets& t) {
  const std::pair<bool, const char*> all[] = {
      {t.q, "q_proj"},       {t.k, "k_proj"},   {t.v, "v_proj"},       {t.o, "o_proj"},
      {t.gate, "gate_proj"}, {t.up, "up_proj"}, {t.down, "down_proj"}, {t.lm_head, "lm_head"}};
  std::string out = "[";
  for (const auto& [on, name] : all) {
    if (!on) continue;
    if (out.size() > 1) out += ", ";
    out += Quote(name);
  }
  return out + "]";
}

// A JSON text as a Python literal: the same text with true/false/null spelled the Python way
// outside strings. The text comes from nlohmann's dump, whose escapes (\" \\ \n \uXXXX ...)
// Python reads alike and which never writes "\/"; continuation lines are indented by `indent`.
std::string PythonFromJson(std::string_view json, std::string_view indent) {
  std::string out;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < json.size()) {
        out += json[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    const std::string_view rest = json.substr(i);
    if (c == '"') {
      in_string = true;
      out += c;
    } else if (c == '\n') {
      out += "\n";
      out += indent;
    } else if (rest.substr(0, 4) == "true") {
      out += "True";
      i += 3;
    } else if (rest.substr(0, 5) == "false") {
      out += "False";
      i += 4;
    } else if (rest.substr(0, 4) == "null") {
      out += "None";
      i += 3;
    } else {
      out += c;
    }
  }
  return out;
}

// A model given by explicit numbers has no config.json: it is written as the transformers
// family whose layers are exactly those numbers (Llama: gated MLP, RMSNorm, no biases; Qwen2:
// the same with q/k/v biases; Mixtral: Llama's attention with routed experts and a bias-free
// router, every layer MoE), or refused with the reason when no family is.
struct ExplicitArchitecture {
  std::string model_type;  ///< empty when no transformers family has the layout
  std::string refusal;
};

ExplicitArchitecture ExplicitFamily(const ModelSpec& m) {
  if (m.mlp != MlpKind::kGated || m.norm != NormKind::kRms) {
    return {"",
            "no transformers family has a decoder with a plain MLP or LayerNorm and no "
            "biases on its linears"};
  }
  if (!m.IsMoe()) return {m.qkv_bias ? "qwen2" : "llama", ""};
  if (m.moe.shared_experts > 0 || m.moe.first_dense_layers > 0 || m.qkv_bias) {
    return {"",
            "no transformers family has routed experts with shared experts, leading dense "
            "layers or q/k/v biases on Llama's attention: give the model's config.json"};
  }
  return {"mixtral", ""};
}

std::string ExplicitConfig(const ModelSpec& m, const std::string& model_type) {
  std::string s =
      "{\"vocab_size\": " + Int(m.vocab) + ", \"hidden_size\": " + Int(m.hidden) +
      ", \"intermediate_size\": " + Int(m.IsMoe() ? m.moe.expert_intermediate : m.intermediate) +
      ",\n               \"num_hidden_layers\": " + Int(m.layers) +
      ", \"num_attention_heads\": " + Int(m.heads) +
      ", \"num_key_value_heads\": " + Int(m.kv_heads) + ", \"head_dim\": " + Int(m.head_dim) +
      ",\n               \"tie_word_embeddings\": " + Bool(m.tied_embeddings);
  if (model_type == "llama") s += ", \"attention_bias\": False, \"mlp_bias\": False";
  if (model_type == "mixtral") {
    s += ", \"num_local_experts\": " + Int(m.moe.experts) +
         ", \"num_experts_per_tok\": " + Int(m.moe.experts_per_token);
  }
  if (m.max_context > 0) s += ", \"max_position_embeddings\": " + Int(m.max_context);
  return s + "}";
}

std::string Settings(const Question& q) {
  const Setup& r = q.setup;
  const ModelSpec& m = r.model;
  const Workload& w = r.workload;
  const int64_t context = w.IsTraining() ? w.seq_len : w.prompt_tokens + w.output_tokens;
  const int64_t positions = std::max<int64_t>({context, m.max_context, 2048});
  std::string s = "SETTINGS = {\n";
  const auto add = [&s](const char* key, const std::string& value) {
    s += "    " + Quote(key) + ": " + value + ",\n";
  };
  add("kind", Quote(Name(w.kind)));
  add("model", Quote(q.model_preset.empty() ? m.name : q.model_preset));
  // The architecture transformers builds: the config.json the engine read, whole (the script
  // takes a multimodal wrapper's text_config and drops its quantisation), or explicit numbers
  // written as a family.
  if (!q.model_config.empty()) {
    add("model_type", Quote(m.family));
    add("unbuildable", Quote(""));
    add("config", PythonFromJson(q.model_config, "    "));
  } else {
    const ExplicitArchitecture arch = ExplicitFamily(m);
    add("model_type", arch.model_type.empty() ? "None" : Quote(arch.model_type));
    add("unbuildable", Quote(arch.refusal));
    s += "    \"config\": " + ExplicitConfig(m, arch.model_type) + ",\n";
  }
  add("positions", Int(positions));
  add("vocab", Int(m.vocab));
  add("moe", Bool(m.IsMoe()));
  add("weights", Quote(Name(r.precision.weights)));
  add("double_quant", Bool(r.precision.quant.double_quant));
  add("master_weights", Quote(r.precision.master == MasterWeights::kFp32 ? "fp32" : "none"));
  add("kv_cache", Quote(Name(r.precision.kv_cache)));
  add("optimizer", Quote(Name(r.optimizer)));
  add("optimizer_kernel", Quote(Name(r.training.optimizer_kernel)));
  add("micro_batch", Int(w.micro_batch));
  add("seq_len", Int(w.seq_len));
  add("grad_accum", Int(w.grad_accum));
  add("recompute", Quote(Name(r.techniques.recompute)));
  add("flash_attention", Bool(r.techniques.flash_attention));
  add("chunked_loss", Bool(r.techniques.chunked_loss));
  add("lora_rank", Int(w.lora_rank));
  add("lora_targets", LoraTargetList(w.lora_targets));
  add("prompt_tokens", Int(w.prompt_tokens));
  add("output_tokens", Int(w.output_tokens));
  add("concurrency", Int(w.concurrency));
  add("gpu", Quote(r.gpu.id.empty() ? r.gpu.name : r.gpu.id));
  // A serving engine's own benchmark runs with what the request set of it; the rest stays the
  // engine's default, as the estimate has it.
  const ServingOverrides& v = q.serving;
  const auto maybe = [](const auto& o) { return o ? Num(static_cast<double>(*o)) : "None"; };
  s += "    \"serving\": {\"framework\": " + Quote(r.StackNamed() ? r.stack->id : "") +
       ", \"gpu_memory_utilization\": " + maybe(v.memory_fraction) +
       ", \"mem_fraction_static\": " + maybe(v.static_fraction) +
       ",\n                \"max_num_seqs\": " + maybe(v.max_seqs) +
       ", \"max_num_batched_tokens\": " + maybe(v.max_batched_tokens) +
       ", \"max_model_len\": " + Int(v.max_model_len) +
       ",\n                \"enforce_eager\": " + Bool(v.enforce_eager) +
       ", \"n_gpu_layers\": " + Int(v.n_gpu_layers) + "},\n";
  add("layout", "{\"gpus\": " + Int(r.parallel.gpus) + ", \"tp\": " + Int(r.parallel.tp) +
                    ", \"pp\": " + Int(r.parallel.pp) + ", \"cp\": " + Int(r.parallel.cp) +
                    ", \"ep\": " + Int(r.parallel.ep) + ", \"zero\": " + Int(r.parallel.zero) +
                    "}");
  add("warmup_steps", Int(kWarmupSteps));
  add("measured_steps", Int(kMeasuredSteps));
  return s + "}\n";
}

std::string EstimateBlock(const char* name, const Estimate* estimate) {
  if (estimate == nullptr) return std::string(name) + " = {}\n";
  const Estimate& e = *estimate;
  const MemoryBreakdown& b = e.memory.per_gpu;
  std::string s = std::string(name) + " = {\n";
  const auto add = [&s](const char* key, const std::string& value) {
    s += "    " + Quote(key) + ": " + value + ",\n";
  };
  add("params_total", Int(e.params.total));
  if (e.has_training) {
    // What trains: LoRA's adapters (the whole model's, as the script builds it) or every
    // parameter.
    const auto adapters = e.memory.detail.find("lora_adapter_params_per_gpu");
    add("trainable_params",
        adapters != e.memory.detail.end() ? Num(adapters->second) : Int(e.params.total));
  }
  add("peak_allocated_bytes", Num(b.Allocated()));
  // torch's reserved counter holds the tensors and the allocator's slack, not the CUDA context.
  const auto slack = e.memory.detail.find("runtime.allocator_slack");
  add("peak_reserved_bytes",
      Num(b.Allocated() + (slack != e.memory.detail.end() ? slack->second : 0.0)));
  if (e.has_training) {
    add("step_s", Num(e.training.step_s));
    add("tokens_per_s", Num(e.training.tokens_per_s));
  }
  if (e.has_serving) {
    add("ttft_ms", Num(e.serving.at_request.ttft_s * 1e3));
    add("tpot_ms", Num(e.serving.at_request.tpot_s * 1e3));
    add("decode_tokens_per_s", Num(e.serving.at_request.decode_tokens_per_s_total));
  }
  return s + "}\n";
}

}  // namespace

Setup OneGpu(const Setup& r) {
  Setup one = r;
  one.parallel = Parallel{};
  one.parallel.gpus = 1;
  return one;
}

std::string MeasurementScript(const Question& q, const Estimate& one_gpu, const Estimate* layout,
                              std::string_view engine_version, std::string_view catalog_version) {
  const Setup& r = q.setup;
  std::string out = "#!/usr/bin/env python3\n";
  out += "# Measures what gpuplan " + std::string(engine_version) + " (catalog " +
         std::string(catalog_version) + ") estimated, with random weights.\n";
  out += "# Run: python3 gpuplan_measure.py   (torch; transformers 4.56 or newer, which builds\n";
  out +=
      "# the model's own architecture from its config; peft for LoRA; bitsandbytes for 4/8-bit\n";
  out += "# bases and 8-bit optimizers). Nothing is downloaded.\n";
  if (r.workload.IsTraining()) {
    out +=
        "# Speed-up curve (measure 1, 2 and 4 GPUs on the same data):\n"
        "#   torchrun --nproc_per_node N gpuplan_measure.py   (data parallel, the request's "
        "ZeRO stage)\n";
  }
  if (r.parallel.gpus > 1) {
    out += "# The request's layout uses " + Int(r.parallel.gpus) +
           " GPUs; run alone, this script measures one GPU\n# without parallelism or sharding "
           "and compares with the engine's estimate of that.\n";
  }
  out += "\n" + Settings(q) + "\n" + EstimateBlock("ESTIMATE", &one_gpu) +
         EstimateBlock("ESTIMATE_LAYOUT", layout);
  out += MeasureProgram();
  return out;
}

}  // namespace gpuplan
