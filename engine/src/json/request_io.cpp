// SPDX-License-Identifier: MIT
// Reads the contract's request. Every value lands in `normalized` (given or defaulted), so the
// result can show each assumption; every problem is collected with its JSON pointer.
#include "json/request_io.h"

#include <algorithm>
#include <limits>

#include "core/units.h"
#include "json/calibration_io.h"
#include "json/hf_config.h"
#include "json/serving_io.h"
#include "json/stacks_io.h"
#include "json/supply_io.h"
#include "model/gguf.h"

namespace gpuplan::json_io {
namespace {

constexpr int64_t kBig = int64_t{1} << 40;
constexpr int64_t kMaxSeq = int64_t{1} << 24;  // 16M tokens
constexpr int64_t kMaxGpus = 1 << 20;

void ReadModel(const Json* model, const LoadedCatalog& cat, const ReadContext& ctx,
               ParsedRequest* out) {
  Question& req = out->request;
  if (model == nullptr) {
    ctx.Error("missing_field", "/model",
              "is required: {\"preset\": ID}, {\"hf_config\": {...}} or explicit numbers");
    return;
  }
  if (!model->is_object()) {
    ctx.Error("wrong_type", "/model", "must be an object, got " + TypeName(*model));
    return;
  }
  Json& norm = out->normalized["model"];
  const bool has_preset = model->contains("preset");
  const bool has_hf = model->contains("hf_config");
  if (has_preset && has_hf) {
    ctx.Error("conflicting_fields", "/model", "give one of preset or hf_config, not both");
    return;
  }
  // model.hf_id: the Hugging Face id the config came from (the page fetches it; the engine
  // never does). A label: it names the model and is the repository a launch command loads.
  if (model->contains("hf_id") && !has_preset && !has_hf) {
    ctx.Error("missing_field", "/model/hf_config",
              "is required with hf_id: the engine never fetches a model; give its config.json "
              "(gpuplan --hf-config FILE)");
    return;
  }
  if (has_preset || has_hf) {
    Fields r(model, "/model", ctx, &norm);
    const auto hf_id = r.String("hf_id", 200);
    if (has_preset) {
      const auto id = r.String("preset", 64);
      if (id) {
        const ModelPreset* p = cat.FindModel(*id);
        if (p == nullptr) {
          std::vector<std::string> ids;
          for (const auto& m : cat.models) ids.push_back(m.id);
          ctx.Error("unknown_model", "/model/preset",
                    "is not a model in catalog " + cat.version + ", got " + Show(*id) +
                        " (nearest: " + NearestIds(*id, ids) + ")");
        } else {
          req.setup.model = p->spec;
          req.model_preset = p->id;
          req.model_repo = p->hf_repo;
          req.model_config = p->hf_config;
        }
      }
    } else {
      const Json* hf = r.Raw("hf_config");
      if (auto spec = ModelFromHfConfig(*hf, "/model/hf_config", ctx, &out->warnings)) {
        req.setup.model = std::move(*spec);
        if (hf_id && !hf_id->empty()) req.setup.model.name = *hf_id;
        if (req.setup.model.name.empty())
          req.setup.model.name = "config.json (" + req.setup.model.family + ")";
        req.model_config = ConfigText(*hf);
      }
      norm["hf_config"] = *hf;
    }
    if (hf_id && !hf_id->empty()) req.model_repo = *hf_id;
    r.RejectUnknown();
    return;
  }
  if (auto spec = ModelFromExplicit(*model, "/model", ctx, &norm, &out->warnings)) {
    req.setup.model = std::move(*spec);
  }
}

LoraTargets ParseTargets(const Json* v, Fields* r, const ReadContext& ctx, Json* norm) {
  LoraTargets t;
  const auto all = [&t] { t.q = t.k = t.v = t.o = t.gate = t.up = t.down = true; };
  if (v == nullptr) {
    all();
    r->Default("lora_targets", "all_linear");
    return t;
  }
  const std::string path = r->PathOf("lora_targets");
  if (v->is_string()) {
    const std::string s = v->get<std::string>();
    if (s == "all_linear") {
      all();
    } else if (s == "attention") {
      t.q = t.k = t.v = t.o = true;
    } else if (s == "qv") {
      t.q = t.v = true;
    } else if (s == "mlp") {
      t.gate = t.up = t.down = true;
    } else {
      ctx.Error(
          "unknown_value", path,
          "must be all_linear, attention, qv, mlp or a list of module names, got " + Show(*v));
    }
    (*norm)["lora_targets"] = s;
    return t;
  }
  if (!v->is_array() || v->empty() || v->size() > 64) {
    ctx.Error("wrong_type", path, "must be a preset name or a list of 1 to 64 module names");
    return t;
  }
  for (size_t i = 0; i < v->size(); ++i) {
    const Json& item = (*v)[i];
    const std::string name = item.is_string() ? item.get<std::string>() : std::string();
    if (name == "q_proj" || name == "wq") {
      t.q = true;
    } else if (name == "k_proj" || name == "wk") {
      t.k = true;
    } else if (name == "v_proj" || name == "wv") {
      t.v = true;
    } else if (name == "o_proj" || name == "output_proj" || name == "wo" || name == "dense") {
      t.o = true;
    } else if (name == "gate_proj" || name == "w1") {
      t.gate = true;
    } else if (name == "up_proj" || name == "w3" || name == "fc1") {
      t.up = true;
    } else if (name == "down_proj" || name == "w2" || name == "fc2") {
      t.down = true;
    } else if (name == "lm_head" || name == "output") {
      t.lm_head = true;
    } else {
      ctx.Error("unknown_value", path + "/" + std::to_string(i),
                "must be one of q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, "
                "lm_head, got " +
                    Show(item));
    }
  }
  (*norm)["lora_targets"] = *v;
  return t;
}

// workload.requests: {"count": n, "prompt_tokens": {"mean", "p95"}, "output_tokens": {...}}.
void ReadRequestSet(const Json* v, const ReadContext& ctx, Json* norm, Workload::RequestSet* out) {
  if (v == nullptr) return;
  Fields r(v, "/workload/requests", ctx, &(*norm)["requests"]);
  if (!r.ok()) return;
  out->count = r.Int("count", 1, kBig).value_or(0);
  if (!r.Has("count")) {
    ctx.Error("missing_field", "/workload/requests/count", "is required: how many requests");
  }
  const auto lengths = [&](const char* key, double* mean, double* p95) {
    const std::string path = "/workload/requests/" + std::string(key);
    Fields l(r.Raw(key), path, ctx, &(*norm)["requests"][key]);
    if (!l.ok()) return;
    *mean = l.Number("mean", 1, static_cast<double>(kMaxSeq)).value_or(0);
    if (!l.Has("mean")) ctx.Error("missing_field", path + "/mean", "is required");
    *p95 = l.NumberOr("p95", *mean, 1, static_cast<double>(kMaxSeq));
    if (*p95 < *mean) {
      ctx.Error("inconsistent", path + "/p95",
                "is below the mean: a 95th percentile is at least it");
    }
    l.RejectUnknown();
  };
  if (r.Has("prompt_tokens")) lengths("prompt_tokens", &out->prompt_mean, &out->prompt_p95);
  if (r.Has("output_tokens")) lengths("output_tokens", &out->output_mean, &out->output_p95);
  r.RejectUnknown();
}

void ReadWorkload(const Json* wl, const ReadContext& ctx, ParsedRequest* out) {
  Workload& w = out->request.setup.workload;
  if (wl == nullptr) {
    ctx.Error("missing_field", "/workload", "is required (at least {\"kind\": ...})");
    return;
  }
  Json& norm = out->normalized["workload"];
  Fields r(wl, "/workload", ctx, &norm);
  if (!r.ok()) return;
  const auto kind = r.Enum("kind", {"pretrain", "full_finetune", "lora", "qlora", "inference"});
  if (!r.Has("kind")) {
    ctx.Error("missing_field", "/workload/kind",
              "is required: pretrain, full_finetune, lora, qlora or inference");
  }
  if (kind == "pretrain") w.kind = WorkloadKind::kPretrain;
  if (kind == "full_finetune") w.kind = WorkloadKind::kFullFinetune;
  if (kind == "lora") w.kind = WorkloadKind::kLora;
  if (kind == "qlora") w.kind = WorkloadKind::kQlora;
  if (kind == "inference") w.kind = WorkloadKind::kInference;
  const int64_t max_ctx = out->request.setup.model.max_context;
  if (w.IsTraining()) {
    w.micro_batch = r.IntOr("micro_batch", 1, 1, 1 << 20);
    w.seq_len =
        r.IntOr("seq_len", max_ctx > 0 ? std::min<int64_t>(max_ctx, 4096) : 4096, 1, kMaxSeq);
    w.grad_accum = r.IntOr("grad_accum", 1, 1, 1 << 20);
    if (const auto gb = r.Int("global_batch", 1, kBig)) w.global_batch = *gb;
    w.batch_given = r.Has("global_batch") || r.Has("grad_accum");
    // The run's length: Chinchilla's 20 tokens per parameter for pretraining (Hoffmann et al.
    // 2022), a typical 100M-token supervised set for fine-tuning.
    const double params = static_cast<double>(CountParams(out->request.setup.model).total);
    const bool pretrain = w.kind == WorkloadKind::kPretrain;
    w.tokens = r.NumberOr("tokens", pretrain && params > 0 ? 20 * params : 1e8, 1, 1e18);
    if (w.IsPeft()) {
      w.lora_rank = r.IntOr("lora_rank", 16, 1, 1 << 16);
      w.lora_targets = ParseTargets(r.Raw("lora_targets"), &r, ctx, &norm);
    }
    if (max_ctx > 0 && w.seq_len > max_ctx) {
      out->warnings.push_back(Note{"seq_len_beyond_model_context",
                                   {{"seq_len", static_cast<double>(w.seq_len)},
                                    {"max_context", static_cast<double>(max_ctx)}},
                                   "seq_len exceeds the model's max_position_embeddings"});
    }
  } else if (kind == "inference") {
    ReadRequestSet(r.Raw("requests"), ctx, &norm, &w.requests);
    // A finite set's mean lengths are the lengths the estimate serves, unless given.
    const auto mean = [](double v, int64_t fallback) {
      return v > 0 ? std::max<int64_t>(1, static_cast<int64_t>(std::llround(v))) : fallback;
    };
    w.prompt_tokens = r.IntOr("prompt_tokens", mean(w.requests.prompt_mean, 1024), 1, kMaxSeq);
    w.output_tokens = r.IntOr("output_tokens", mean(w.requests.output_mean, 256), 1, kMaxSeq);
    w.concurrency = r.IntOr("concurrency", 1, 1, 1 << 20);
    const std::string mode = r.EnumOr("mode", "online", {"online", "offline"});
    w.mode = mode == "offline" ? InferenceMode::kOffline : InferenceMode::kOnline;
    // Serving engines prefill in chunks (vLLM's max_num_batched_tokens is a few thousand);
    // a whole batch of long prompts in one pass is what plain Hugging Face generate does.
    // A serving engine's chunk depends on the card (vLLM, SGLang): 0 leaves it to the
    // estimate, which knows the card (ApplyEngineDefaults).
    const StackProfile* fw = out->request.setup.NamedStack();
    const bool engine_chunk = fw != nullptr && fw->serving && !r.Has("prefill_chunk_tokens");
    const int64_t all = w.prompt_tokens * w.concurrency;
    w.prefill_chunk_limit = r.Has("prefill_chunk_tokens")
                                ? r.Int("prefill_chunk_tokens", 1, kBig).value_or(8192)
                            : engine_chunk ? 0
                                           : 8192;
    if (!r.Has("prefill_chunk_tokens") && !engine_chunk)
      r.Default("prefill_chunk_tokens", std::min<int64_t>(all, 8192));
    w.SetConcurrency(w.concurrency);
    if (!engine_chunk) norm["prefill_chunk_tokens"] = w.prefill_chunk_tokens;
    if (max_ctx > 0 && w.prompt_tokens + w.output_tokens > max_ctx) {
      out->warnings.push_back(
          Note{"context_beyond_model",
               {{"tokens", static_cast<double>(w.prompt_tokens + w.output_tokens)},
                {"max_context", static_cast<double>(max_ctx)}},
               "prompt + output tokens exceed the model's max_position_embeddings"});
    }
  }
  // Fields of the other purpose are accepted (a form may keep them) but said to be unused.
  static const std::vector<const char*> kTraining = {"micro_batch",  "seq_len", "grad_accum",
                                                     "global_batch", "tokens",  "lora_rank",
                                                     "lora_targets"};
  static const std::vector<const char*> kServing = {
      "prompt_tokens", "output_tokens", "concurrency", "mode", "prefill_chunk_tokens", "requests"};
  const bool training = w.IsTraining();
  for (const char* key : training ? kServing : kTraining) {
    if (r.Has(key) && kind) {
      r.Accept(key);
      out->warnings.push_back(
          Unused(r.PathOf(key), "is not used by a " + std::string(Name(w.kind)) + " workload"));
    }
  }
  if (!w.IsPeft()) {
    for (const char* key : {"lora_rank", "lora_targets"}) {
      if (r.Has(key) && training) {
        r.Accept(key);
        out->warnings.push_back(Unused(r.PathOf(key), "is used only by lora and qlora"));
      }
    }
  }
  r.RejectUnknown();
}

// global_batch = micro_batch x grad_accum x data-parallel ranks (the contract). Given without
// grad_accum, it sets grad_accum; given with it, the three must agree.
void ReconcileGlobalBatch(const ReadContext& ctx, ParsedRequest* out) {
  Workload& w = out->request.setup.workload;
  if (!w.IsTraining() || w.global_batch == 0) return;
  const int64_t dp = std::max<int64_t>(1, out->request.setup.parallel.Dp());
  const int64_t per_accum = w.micro_batch * dp;
  auto& defaults = out->defaults_applied;
  const bool accum_given =
      std::find(defaults.begin(), defaults.end(), "/workload/grad_accum") == defaults.end();
  if (accum_given) {
    if (w.global_batch != per_accum * w.grad_accum) {
      ctx.Error("inconsistent", "/workload/global_batch",
                "must equal micro_batch x grad_accum x data-parallel ranks (" +
                    std::to_string(per_accum * w.grad_accum) + "), got " +
                    std::to_string(w.global_batch));
    }
  } else if (w.global_batch % per_accum != 0) {
    ctx.Error("inconsistent", "/workload/global_batch",
              "must be a multiple of micro_batch x data-parallel ranks (" +
                  std::to_string(per_accum) + "), got " + std::to_string(w.global_batch));
  } else {
    w.grad_accum = w.global_batch / per_accum;
    out->normalized["workload"]["grad_accum"] = w.grad_accum;
  }
}

void ReadPrecision(const Json* v, const ReadContext& ctx, ParsedRequest* out) {
  Question& req = out->request;
  Json& norm = out->normalized["precision"];
  Fields r(v, "/precision", ctx, &norm);
  const bool qlora = req.setup.workload.kind == WorkloadKind::kQlora;
  // A pasted checkpoint whose quantization_config declares its format sets the default for
  // serving and adapters (QLoRA keeps nf4 unless the checkpoint is a 4-bit one); full training
  // starts from 16-bit weights. An explicit weights wins.
  const std::string& stored = req.setup.model.checkpoint_weights;
  const bool full_training = req.setup.workload.kind == WorkloadKind::kPretrain ||
                             req.setup.workload.kind == WorkloadKind::kFullFinetune;
  const bool stored_fits =
      !stored.empty() && !full_training &&
      (!qlora || IsFourBit(ParseWeightFormat(stored).value_or(WeightFormat::kBf16)));
  const std::string weights =
      r.EnumOr("weights", stored_fits ? stored : (qlora ? "nf4" : "bf16"),
               {"fp32",        "tf32",        "bf16",         "fp16",           "fp8",
                "int8",        "int4",        "nf4",          "gptq_int4",      "awq_int4",
                "gguf_q4_k_m", "gguf_q8_0",   "gguf_q2_k",    "gguf_q3_k_m",    "gguf_q5_k_m",
                "gguf_q6_k",   "gguf_iq2_xs", "gguf_q4_0",    "gguf_q4_1",      "gguf_q5_0",
                "gguf_q5_1",   "gguf_iq4_xs", "gguf_iq3_xxs", "mxfp4",          "mxfp4_experts",
                "nvfp4",       "mxfp8",       "fp8_block128", "autoround_int4", "exl2"});
  req.setup.precision.weights = ParseWeightFormat(weights).value_or(WeightFormat::kBf16);
  if (!req.setup.model.checkpoint_quant_unmodelled.empty() && !r.Has("weights") && !full_training) {
    out->warnings.push_back(Note{"checkpoint_quantization_not_modelled",
                                 {},
                                 "the config's quantization_config (" +
                                     req.setup.model.checkpoint_quant_unmodelled +
                                     ") is not modelled: the weights are taken as " + weights});
  }
  const WeightFormat wf = req.setup.precision.weights;
  if (qlora && !IsFourBit(wf)) {
    ctx.Error("invalid_combination", "/precision/weights",
              "qlora needs a 4-bit base (nf4, int4, gptq_int4, awq_int4, autoround_int4), got " +
                  weights);
  }
  const bool full = req.setup.workload.kind == WorkloadKind::kPretrain ||
                    req.setup.workload.kind == WorkloadKind::kFullFinetune;
  if (full && !IsFloatTrainable(wf)) {
    ctx.Error("invalid_combination", "/precision/weights",
              "a quantised format (" + weights +
                  ") cannot be trained in full: use lora/qlora, or "
                  "fp32/bf16/fp16/fp8");
  }
  // A checkpoint that declares its KV cache type (quantization_config) sets the default.
  const std::string& declared = req.setup.model.checkpoint_kv_cache;
  const std::string kv_default = !declared.empty() ? declared
                                 : wf == WeightFormat::kFp16
                                     ? "fp16"
                                     : (wf == WeightFormat::kFp32 ? "fp32" : "bf16");
  const std::string kv = r.EnumOr("kv_cache", kv_default, {"fp32", "bf16", "fp16", "fp8", "int8"});
  req.setup.precision.kv_cache = ParseKvFormat(kv).value_or(KvFormat::kBf16);
  const bool sixteen =
      wf == WeightFormat::kBf16 || wf == WeightFormat::kFp16 || wf == WeightFormat::kFp8;
  const bool master_copy = full && sixteen && req.setup.stack->training.master_copy;
  const std::string master =
      r.EnumOr("master_weights", master_copy ? "fp32" : "none", {"fp32", "none"});
  req.setup.precision.master = master == "fp32" ? MasterWeights::kFp32 : MasterWeights::kNone;
  if (master == "fp32" && (wf == WeightFormat::kFp32 || wf == WeightFormat::kTf32)) {
    out->warnings.push_back(
        Note{"master_copy_redundant", {}, "fp32 weights are their own master copy"});
    req.setup.precision.master = MasterWeights::kNone;
  }
  const bool grouped = IsFourBit(wf);
  if (grouped) {
    const int stored_group =
        wf == ParseWeightFormat(stored) ? req.setup.model.checkpoint_group_size : 0;
    const int group_default = stored_group > 0 ? stored_group : wf == WeightFormat::kNf4 ? 64 : 128;
    req.setup.precision.quant.group_size =
        static_cast<int>(r.IntOr("group_size", group_default, 8, 1 << 16));
  } else if (r.Has("group_size")) {
    r.Int("group_size", 8, 1 << 16);
    out->warnings.push_back(
        Unused("/precision/group_size", "applies to the group-quantised 4-bit formats only"));
  }
  // ExLlamaV2 checkpoints are made at a chosen average (convert.py -b): the request says which.
  if (wf == WeightFormat::kExl2) {
    const std::optional<double> bpw = r.Number("bits_per_weight", 2.0, 8.0);
    if (!r.Has("bits_per_weight")) {
      ctx.Error("missing_field", "/precision/bits_per_weight",
                "is required for exl2 weights (the checkpoint's average bits, 2.0-8.0)");
    }
    req.setup.precision.quant.bits_per_weight = bpw.value_or(4);
  } else if (r.Has("bits_per_weight")) {
    r.Number("bits_per_weight", 2.0, 8.0);
    out->warnings.push_back(Unused("/precision/bits_per_weight", "applies to exl2 only"));
  }
  if (wf == WeightFormat::kNf4) {
    req.setup.precision.quant.double_quant = r.BoolOr("double_quant", true);
  } else if (r.Has("double_quant")) {
    r.Bool("double_quant");
    out->warnings.push_back(Unused("/precision/double_quant", "applies to nf4 only"));
  }
  if (!IsFloatTrainable(wf) && !IsGguf(wf)) {
    req.setup.precision.quantize_lm_head = r.BoolOr("quantize_lm_head", false);
  } else if (r.Has("quantize_lm_head")) {
    r.Bool("quantize_lm_head");
    out->warnings.push_back(
        Unused("/precision/quantize_lm_head", "applies to int8 and the 4-bit formats"));
  }
  // The contract's default: fp32 moments beside an fp32 master copy; without one, the
  // parameter's dtype (torch.optim creates its state with zeros_like(param)). With a master
  // copy and no value given, the stack's own rule stands.
  const bool pure = req.setup.precision.master == MasterWeights::kNone;
  const bool training = req.setup.workload.IsTraining();
  const std::string states =
      training ? r.EnumOr("optimizer_states", pure ? "param" : "fp32", {"fp32", "bf16", "param"})
               : r.Enum("optimizer_states", {"fp32", "bf16", "param"}).value_or("");
  if (!training && r.Has("optimizer_states")) {
    out->warnings.push_back(Unused("/precision/optimizer_states", "is read by training only"));
  }
  if (training && (r.Has("optimizer_states") || pure)) {
    req.training.optimizer_states = states == "bf16"   ? StateDtype::kBf16
                                    : states == "fp32" ? StateDtype::kFp32
                                                       : StateDtype::kParam;
  }
  // Only bitsandbytes' formats are upcast: PEFT's preparation skips GPTQ, AWQ and the others.
  const bool bnb_kbit = wf == WeightFormat::kNf4 || wf == WeightFormat::kInt8;
  if (req.setup.workload.IsPeft() && bnb_kbit) {
    req.training.kbit_fp32_upcast =
        r.BoolOr("kbit_fp32_upcast", req.setup.stack->training.kbit_fp32_upcast);
  } else if (r.Has("kbit_fp32_upcast")) {
    r.Bool("kbit_fp32_upcast");
    out->warnings.push_back(
        Unused("/precision/kbit_fp32_upcast", "applies to LoRA on an nf4 or int8 base only"));
  }
  if (req.setup.workload.IsPeft()) {
    req.setup.precision.adapters_fp32 = r.EnumOr("adapters", "fp32", {"fp32", "bf16"}) == "fp32";
  } else if (r.Has("adapters")) {
    r.Enum("adapters", {"fp32", "bf16"});
  }
  r.RejectUnknown();
}

void ReadTechniques(const Json* v, const ReadContext& ctx, ParsedRequest* out) {
  Question& req = out->request;
  MemoryTechniques& t = req.setup.techniques;
  Json& norm = out->normalized["memory_techniques"];
  Fields r(v, "/memory_techniques", ctx, &norm);
  const std::string rc = r.EnumOr("recompute", "selective",
                                  {"none", "selective", "full", "op_selective", "every_n_layers"});
  for (Recompute k : {Recompute::kNone, Recompute::kSelective, Recompute::kFull,
                      Recompute::kOpSelective, Recompute::kEveryNLayers}) {
    if (rc == Name(k)) t.recompute = k;
  }
  if (t.recompute == Recompute::kEveryNLayers) {
    if (!r.Has("recompute_every")) {
      ctx.Error("missing_field", "/memory_techniques/recompute_every",
                "every_n_layers needs recompute_every: every n-th block is recomputed");
    }
    t.recompute_every = r.Int("recompute_every", 1, 1 << 20).value_or(1);
  } else if (r.Has("recompute_every")) {
    r.Int("recompute_every", 1, 1 << 20);
    out->warnings.push_back(
        Unused("/memory_techniques/recompute_every", "is read only with every_n_layers"));
  }
  if (req.setup.workload.IsTraining()) {
    req.training.compile = r.BoolOr("compile", false);
  } else if (r.Has("compile")) {
    r.Bool("compile");
    out->warnings.push_back(Unused("/memory_techniques/compile", "is read by training only"));
  }
  // FlashAttention 2 needs Ampere or later; older cards fall back to attention that
  // materialises the score matrix unless the user says otherwise.
  const std::string& gen = req.setup.gpu.generation;
  const bool old_card = gen == "volta" || gen == "turing" || gen == "pascal";
  t.flash_attention = r.BoolOr("flash_attention", !old_card);
  const Json* off = r.Raw("offload");
  const std::string path = r.PathOf("offload");
  const auto apply = [&](const Json& item, const std::string& at) {
    const std::string s = item.is_string() ? item.get<std::string>() : std::string();
    if (s == "none") return;
    if (s == "optimizer") {
      t.offload_optimizer = true;
    } else if (s == "optimizer_and_params") {
      t.offload_optimizer = t.offload_params = true;
    } else if (s == "activations") {
      t.offload_activations = true;
    } else {
      ctx.Error("unknown_value", at,
                "must be none, optimizer, optimizer_and_params or activations, got " + Show(item));
    }
  };
  if (off == nullptr) {
    r.Default("offload", "none");
  } else if (off->is_array() && off->size() > 4) {
    ctx.Error("out_of_range", path, "lists at most 4 kinds of offload");
  } else if (off->is_array()) {
    for (size_t i = 0; i < off->size(); ++i) apply((*off)[i], path + "/" + std::to_string(i));
    norm["offload"] = *off;
  } else {
    apply(*off, path);
    norm["offload"] = *off;
  }
  t.chunked_loss = r.BoolOr("chunked_loss", false);
  if (t.chunked_loss)
    t.loss_chunks = r.IntOr("loss_chunks", 8, 1, 1 << 16);
  else if (r.Has("loss_chunks"))
    r.Int("loss_chunks", 1, 1 << 16);
  t.optimizer_in_backward = r.BoolOr("optimizer_in_backward", false);
  r.RejectUnknown();
  if (t.offload_activations && t.recompute != Recompute::kFull) {
    out->warnings.push_back(Note{"activation_offload_without_checkpointing",
                                 {},
                                 "activation offload moves every saved tensor to host memory; "
                                 "usually paired with full recomputation"});
  }
}

// parallel.pp_schedule and virtual_stages (contract, second round): the stack's schedule
// unless the request names one.
void ReadSchedule(Fields* r, const ReadContext& ctx, ParsedRequest* out) {
  const Pipeline stack = out->request.setup.stack->training.pipeline;
  const char* const kNames[] = {"1f1b", "interleaved", "gpipe"};
  const std::string schedule = r->EnumOr("pp_schedule", kNames[static_cast<int>(stack.schedule)],
                                         {"1f1b", "interleaved", "gpipe"});
  Pipeline p = stack;
  p.schedule = schedule == "interleaved" ? PipelineSchedule::kInterleaved
               : schedule == "gpipe"     ? PipelineSchedule::kGpipe
                                         : PipelineSchedule::k1F1B;
  const bool interleaved = p.schedule == PipelineSchedule::kInterleaved;
  if (interleaved) {
    p.virtual_stages =
        r->IntOr("virtual_stages", std::max<int64_t>(2, stack.virtual_stages), 1, 1 << 12);
    const int64_t layers = out->request.setup.model.layers;
    const int64_t chunks = out->request.setup.parallel.pp * p.virtual_stages;
    if (layers > 0 && chunks > layers) {
      ctx.Error("invalid_combination", "/parallel/virtual_stages",
                "pp x virtual_stages (" + std::to_string(chunks) + ") exceeds the model's " +
                    std::to_string(layers) + " layers");
    }
  } else if (r->Has("virtual_stages")) {
    r->Int("virtual_stages", 1, 1 << 12);
    out->warnings.push_back(
        Unused("/parallel/virtual_stages", "is read only with pp_schedule interleaved"));
    p.virtual_stages = 1;
  }
  if (r->Has("pp_schedule") || r->Has("virtual_stages")) out->request.training.pipeline = p;
}

// parallel.overlap: each flag the request gives replaces the stack's.
void ReadOverlap(const Json* v, const std::string& path, const ReadContext& ctx,
                 ParsedRequest* out) {
  const Overlap stack = out->request.setup.stack->training.overlap;
  Json& norm = out->normalized["parallel"]["overlap"];
  Fields r(v, path, ctx, &norm);
  TrainingOverrides& o = out->request.training;
  const auto flag = [&](const char* key, bool standing, std::optional<bool>* into) {
    const bool given = r.Has(key);
    const bool value = r.BoolOr(key, standing);
    if (given) *into = value;
  };
  flag("tp_comm", stack.tp_comm, &o.tp_comm_overlap);
  flag("grad_reduce", GradReduceOverlapAt(stack, out->request.setup.parallel.zero),
       &o.grad_reduce_overlap);
  flag("param_gather", stack.param_gather, &o.param_gather_overlap);
  r.RejectUnknown();
}

void ReadParallel(const Json* v, const ReadContext& ctx, ParsedRequest* out) {
  Parallel& p = out->request.setup.parallel;
  Fields r(v, "/parallel", ctx, &out->normalized["parallel"]);
  p.gpus = r.IntOr("gpus", 1, 1, kMaxGpus);
  p.tp = r.IntOr("tp", 1, 1, 1024);
  p.pp = r.IntOr("pp", 1, 1, 4096);
  p.cp = r.IntOr("cp", 1, 1, 4096);
  p.ep = r.IntOr("ep", 1, 1, 4096);
  // FSDP shards fully once there is more than one data-parallel rank.
  const StackProfile* fw = out->request.setup.NamedStack();
  const int64_t dp = p.gpus / std::max<int64_t>(1, p.tp * p.pp * p.cp);
  p.zero = static_cast<int>(
      r.IntOr("zero", fw != nullptr && dp > 1 ? fw->layouts.default_zero : 0, 0, 3));
  p.sequence_parallel = r.BoolOr("sequence_parallel", false);
  // The schedule and the overlap are training's; a serving request that gives them is told.
  if (out->request.setup.workload.IsTraining()) {
    ReadSchedule(&r, ctx, out);
    ReadOverlap(r.Raw("overlap"), r.PathOf("overlap"), ctx, out);
  } else {
    for (const char* key : {"pp_schedule", "virtual_stages", "overlap"}) {
      if (!r.Has(key)) continue;
      r.Accept(key);
      out->warnings.push_back(Unused(r.PathOf(key), "is read by training only"));
    }
  }
  r.RejectUnknown();
}

// Whose offers price the cards: a market the catalog names (pricing.market, default global),
// optionally one provider class; the request's own price overrides every offer.
void ReadPricing(const Json* v, const LoadedCatalog& cat, const ReadContext& ctx,
                 ParsedRequest* out) {
  Question& req = out->request;
  Json& normalized = out->normalized["pricing"];
  Fields p(v, "/pricing", ctx, &normalized);
  if (v != nullptr && !p.ok()) return;
  req.setup.pricing.usd_per_gpu_hour = p.Number("usd_per_gpu_hour", 0, 1e5).value_or(-1);
  const std::string market = p.String("market", 12).value_or("global");
  if (cat.markets.count(market) == 0 || market == "any") {
    std::string known;
    for (const auto& m : cat.markets) {
      if (m != "any") known += (known.empty() ? "" : ", ") + m;
    }
    ctx.Error("unknown_value", "/pricing/market",
              "must be a market the catalog prices (" + known + "), got '" + market + "'");
  }
  req.setup.pricing.market.market = market;
  if (p.Has("provider_class")) {
    req.setup.pricing.market.provider_class =
        p.Enum("provider_class", {"hyperscaler_on_demand", "specialty_cloud", "marketplace"})
            .value_or("");
  }
  p.RejectUnknown();
  normalized["market"] = market;
  ApplyMarket(req.setup.pricing.market, cat.rates, &req.setup.gpu);
}

void ReadGpu(const Json* v, const LoadedCatalog& cat, bool require, const ReadContext& ctx,
             ParsedRequest* out) {
  if (v == nullptr) {
    if (require) ctx.Error("missing_field", "/gpu", "is required: a catalog id or an inline card");
    return;
  }
  if (v->is_string()) {
    const std::string& id = v->get_ref<const std::string&>();
    if (id.size() > 64) {
      ctx.Error("unknown_gpu", "/gpu", "is not a catalog id: ids are at most 64 characters");
      return;
    }
    const GpuSpec* g = cat.FindGpu(id);
    if (g == nullptr) {
      std::vector<std::string> ids;
      for (const auto& c : cat.gpus) ids.push_back(c.id);
      ctx.Error("unknown_gpu", "/gpu",
                "is not a card in catalog " + cat.version + ", got " + Show(*v) +
                    " (nearest: " + NearestIds(id, ids) + ")");
      return;
    }
    out->request.setup.gpu = *g;
    out->normalized["gpu"] = id;
    return;
  }
  if (auto g = GpuFromJson(*v, "/gpu", ctx)) {
    // A catalog card's currencies were checked when the catalog loaded; an inline one's here.
    if (g->supply) CheckCurrencies(*g->supply, cat.rates, "/gpu", ctx);
    out->request.setup.gpu = std::move(*g);
    out->normalized["gpu"] = *v;
  }
}

void ReadHost(const Json* v, const ReadContext& ctx, ParsedRequest* out) {
  if (v == nullptr) return;
  HostSpec& h = out->request.setup.host;
  Fields r(v, "/host", ctx, &out->normalized["host"]);
  h.ram_bytes_per_node = r.Number("ram_bytes_per_node", 1, 1e16).value_or(0);
  h.storage_bytes_per_s = r.Number("storage_bytes_per_s", 1, 1e13).value_or(0);
  h.dataset_bytes = r.Number("dataset_bytes", 0, 1e18).value_or(0);
  h.loader_workers = r.Int("loader_workers", 0, 4096).value_or(0);
  r.RejectUnknown();
}

void ReadRuntime(const Json* v, const ReadContext& ctx, ParsedRequest* out) {
  RuntimeOptions& rt = out->request.setup.runtime;
  Fields r(v, "/runtime", ctx, &out->normalized["runtime"]);
  // Without a card (plan), each card's own reserve applies: -1.
  if (out->request.setup.gpu.id.empty() && !r.Has("reserve_bytes")) {
    rt.reserve_bytes = -1;
  } else {
    rt.reserve_bytes =
        r.NumberOr("reserve_bytes", out->request.setup.gpu.runtime_reserve_bytes, 0, 64 * kGiB);
  }
  rt.allocator_slack = r.NumberOr("allocator_slack", 0.05, 0, 1);
  // Without a layout (plan), each candidate's own: 0.5 GiB once it has more than one GPU
  // (CommReserveBytes), so a plan's rows hold what `estimate` of the same setup holds.
  if (out->request.setup.gpu.id.empty() && !r.Has("comm_reserve_bytes")) {
    rt.comm_reserve_bytes = -1;
  } else {
    const double comm = out->request.setup.parallel.gpus > 1 ? 0.5 * kGiB : 0;
    rt.comm_reserve_bytes = r.NumberOr("comm_reserve_bytes", comm, 0, 64 * kGiB);
  }
  r.RejectUnknown();
}

void ReadConstraints(const Json* v, const LoadedCatalog& cat, const ReadContext& ctx,
                     ParsedRequest* out) {
  if (v == nullptr) return;
  Constraints& c = out->request.constraints;
  Targets& t = out->request.setup.targets;
  Json& norm = out->normalized["constraints"];
  Fields r(v, "/constraints", ctx, &norm);
  c.max_gpus = r.Int("max_gpus", 1, 65536).value_or(0);
  if (const Json* list = r.Raw("gpus")) {
    if (!list->is_array() || list->size() > 4096) {
      ctx.Error("wrong_type", "/constraints/gpus", "must be an array of at most 4096 catalog ids");
    } else {
      for (size_t i = 0; i < list->size(); ++i) {
        const Json& id = (*list)[i];
        if (!id.is_string() || cat.FindGpu(id.get<std::string>()) == nullptr) {
          ctx.Error("unknown_gpu", "/constraints/gpus/" + std::to_string(i),
                    "is not a card in catalog " + cat.version + ", got " + Show(id));
        } else {
          c.gpus.push_back(id.get<std::string>());
        }
      }
      norm["gpus"] = *list;
    }
  }
  c.objective = r.EnumOr("objective", "default", {"default", "time", "cost", "count", "power"});
  t.node_power_w = r.Number("node_power_w", 1, 1e7).value_or(0);
  t.rack_power_w = r.Number("rack_power_w", 1, 1e8).value_or(0);
  t.cooling = r.Enum("cooling", {"air", "liquid"}).value_or("");
  c.budget_usd = r.Number("budget_usd", 0, 1e13).value_or(0);
  c.deadline_s = r.Number("deadline_s", 1, 1e10).value_or(0);
  t.ttft_ms = r.Number("ttft_ms", 0.001, 1e8).value_or(0);
  t.tpot_ms = r.Number("tpot_ms", 0.001, 1e8).value_or(0);
  c.quantize = r.Bool("quantize").value_or(false);
  if (const Json* waits = r.Raw("wait_s")) {
    if (!waits->is_object() || waits->size() > 4096) {
      ctx.Error("wrong_type", "/constraints/wait_s",
                "must be an object of card id -> expected wait in seconds");
    } else {
      ReadCardNumbers(*waits, "/constraints/wait_s", cat, ctx, 1e9,
                      "a wait in seconds from 0 to 1e9", &c.wait_s);
      Json& normalized = norm["wait_s"] = Json::object();
      for (const auto& [id, value] : waits->items()) {
        if (c.wait_s.count(id) != 0) normalized[id] = value;  // as given, for the echo
      }
    }
  }
  r.RejectUnknown();
}

}  // namespace

Note Unused(const std::string& path, const std::string& why) {
  return Note{"field_unused", {}, path + " " + why, path};
}

bool ParseRequest(std::string_view text, const LoadedCatalog& catalog, bool require_gpu,
                  ParsedRequest* out, Diagnostics* errors) {
  const size_t before = errors->size();
  auto doc = ParseJson(text, "the request", errors);
  if (!doc) return false;
  const ReadContext ctx{errors, &out->defaults_applied};
  Fields top(&*doc, "", ctx, nullptr);
  if (!top.ok()) return false;
  // Order matters: the card's generation picks the flash-attention default, the model's
  // context the seq_len default.
  ReadGpu(top.Raw("gpu"), catalog, require_gpu, ctx, out);
  ReadModel(top.Raw("model"), catalog, ctx, out);
  // Before the workload and the layout, whose defaults (prefill chunk, ZeRO stage) it sets.
  if (top.Has("framework")) {
    if (const auto id =
            top.Enum("framework", {"vllm", "sglang", "tensorrt_llm", "llama_cpp", "pytorch_fsdp",
                                   "deepspeed", "megatron", "torchtune", "hf_transformers"})) {
      if (const StackProfile* named = FindStack(*id)) out->request.setup.stack = named;
      out->normalized["framework"] = *id;
    }
  }
  ReadWorkload(top.Raw("workload"), ctx, out);
  if (const StackProfile* fw = out->request.setup.NamedStack()) {
    const bool training = out->request.setup.workload.IsTraining();
    if (fw->serving == training) {
      ctx.Error("framework_mismatch", "/framework",
                std::string(fw->name) +
                    (fw->serving ? " is a serving engine; a training workload takes "
                                   "pytorch_fsdp, deepspeed, megatron, torchtune or hf_transformers"
                                 : " is a training stack; inference takes vllm, sglang, "
                                   "tensorrt_llm or llama_cpp"));
    }
  }
  ReadPrecision(top.Raw("precision"), ctx, out);
  Question& req = out->request;
  if (req.setup.workload.IsTraining()) {
    const std::string opt =
        top.Has("optimizer")
            ? top.Enum("optimizer", {"adamw", "adam", "adamw_8bit", "paged_adamw_8bit", "sgd",
                                     "sgd_momentum", "adafactor", "lion"})
                  .value_or("adamw")
            : "adamw";
    if (!top.Has("optimizer")) {
      top.Accept("optimizer");
      out->defaults_applied.push_back("/optimizer");
    }
    out->normalized["optimizer"] = opt;
    static const std::pair<const char*, Optimizer> kOpt[] = {
        {"adamw", Optimizer::kAdamW},
        {"adam", Optimizer::kAdam},
        {"adamw_8bit", Optimizer::kAdamW8bit},
        {"paged_adamw_8bit", Optimizer::kPagedAdamW8bit},
        {"sgd", Optimizer::kSgd},
        {"sgd_momentum", Optimizer::kSgdMomentum},
        {"adafactor", Optimizer::kAdafactor},
        {"lion", Optimizer::kLion}};
    for (const auto& [name, o] : kOpt) {
      if (opt == name) req.setup.optimizer = o;
    }
    // How the step runs over the parameters (torch.optim's foreach, fused or for-loop): the
    // stack's unless given.
    std::string kernel = Name(req.setup.stack->training.optimizer_kernel);
    if (!top.Has("optimizer_kernel")) {
      top.Accept("optimizer_kernel");
    } else if (const auto named = top.Enum("optimizer_kernel", {"foreach", "fused", "for_loop"})) {
      kernel = *named;
      req.training.optimizer_kernel = OptimizerKernelNamed(kernel);
    }
    out->normalized["optimizer_kernel"] = kernel;
  } else {
    for (const char* key : {"optimizer", "optimizer_kernel"}) {
      if (!top.Has(key)) continue;
      top.Accept(key);
      out->warnings.push_back(Unused(std::string("/") + key, "is not used by inference"));
    }
  }
  ReadServing(top.Raw("serving"), ctx, out);
  ReadTechniques(top.Raw("memory_techniques"), ctx, out);
  ReadParallel(top.Raw("parallel"), ctx, out);
  ReconcileGlobalBatch(ctx, out);
  const double headroom = top.NumberOr("headroom", 0.2, 0, 10);
  req.setup.headroom = headroom;
  out->normalized["headroom"] = headroom;
  ReadHost(top.Raw("host"), ctx, out);
  ReadRuntime(top.Raw("runtime"), ctx, out);
  ReadConstraints(top.Raw("constraints"), catalog, ctx, out);
  ReadPricing(top.Raw("pricing"), catalog, ctx, out);
  ReadCalibration(top.Raw("calibration"), ctx, out);
  ReadMeasured(top.Raw("measured"), ctx, out);
  top.RejectUnknown();
  // Everything the policies depend on is read: resolve them once, for every estimate of it.
  UseStack(&req.setup, *req.setup.stack, req.training, req.serving);
  return errors->size() == before;
}

}  // namespace gpuplan::json_io
