// SPDX-License-Identifier: MIT
#include "json/serving_io.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "core/units.h"

namespace gpuplan::json_io {
namespace {

constexpr int64_t kMaxTokens = int64_t{1} << 24;

// Which engines read a setting; "*" = every serving engine.
struct Setting {
  const char* key;
  const char* engines;
};
constexpr std::array<Setting, 18> kSettings{{
    {"version", "*"},
    {"max_num_seqs", "vllm sglang tensorrt_llm"},
    {"max_num_batched_tokens", "vllm sglang tensorrt_llm"},
    {"max_model_len", "vllm sglang tensorrt_llm"},
    {"enforce_eager", "vllm sglang tensorrt_llm"},
    {"block_size", "vllm sglang tensorrt_llm"},
    {"gpu_memory_utilization", "vllm"},
    {"mem_fraction_static", "sglang"},
    {"kv_cache_free_gpu_mem_fraction", "tensorrt_llm"},
    {"n_ctx", "llama_cpp"},
    {"n_batch", "llama_cpp"},
    {"n_ubatch", "llama_cpp"},
    {"n_gpu_layers", "llama_cpp"},
    {"n_cpu_moe", "llama_cpp"},
    {"split_mode", "llama_cpp"},
    {"cache_type_k", "llama_cpp"},
    {"cache_type_v", "llama_cpp"},
    {"kv_cache_dtype", ""},  // named in precision.kv_cache instead
}};

bool Reads(const Setting& s, const std::string& engine) {
  const std::string list = s.engines;
  if (list == "*") return true;
  const std::string padded = " " + list + " ";
  return padded.find(" " + engine + " ") != std::string::npos;
}

bool EngineReads(const char* key, const std::string& engine) {
  const auto* const it = std::find_if(kSettings.begin(), kSettings.end(),
                                      [&](const Setting& s) { return std::string(s.key) == key; });
  return it != kSettings.end() && Reads(*it, engine);
}

// ggml's cache types: bytes per element of one block (ggml-common.h: a block of 32 values with
// an fp16 scale, q4_1 and q5_1 with an fp16 minimum too, q5 with 4 bytes of high bits).
constexpr std::array<std::pair<const char*, double>, 9> kGgmlCache{{
    {"f32", 4},
    {"f16", 2},
    {"bf16", 2},
    {"q8_0", 34.0 / 32},
    {"q4_0", 18.0 / 32},
    {"q4_1", 20.0 / 32},
    {"iq4_nl", 18.0 / 32},
    {"q5_0", 22.0 / 32},
    {"q5_1", 24.0 / 32},
}};

std::optional<double> CacheType(Fields* r, const char* key) {
  const auto name =
      r->Enum(key, {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1"});
  if (!name) return std::nullopt;
  for (const auto& [type, bytes] : kGgmlCache) {
    if (*name == type) return bytes;
  }
  return std::nullopt;
}

}  // namespace

void ReadServing(const Json* v, const ReadContext& ctx, ParsedRequest* out) {
  if (v == nullptr) return;
  Question& req = out->request;
  const StackProfile* fw = req.setup.NamedStack();
  if (fw == nullptr || !fw->serving || req.setup.workload.IsTraining()) {
    out->warnings.push_back(Unused("/serving",
                                   "is read only with a serving framework (vllm, sglang, "
                                   "tensorrt_llm or llama_cpp) and an inference workload"));
    return;
  }
  const std::string engine = fw->id;
  Fields r(v, "/serving", ctx, &out->normalized["serving"]);
  if (!r.ok()) return;
  for (const Setting& s : kSettings) {
    if (r.Has(s.key) && !Reads(s, engine)) {
      r.Accept(s.key);
      out->warnings.push_back(
          Unused(r.PathOf(s.key), std::string(s.engines).empty()
                                      ? "is precision.kv_cache in this contract"
                                      : "is not a setting of " + std::string(fw->name)));
    }
  }
  ServingOverrides& o = req.serving;
  if (r.Has("version")) o.version = r.String("version", 40).value_or("");
  if (!o.version.empty() && (o.version[0] < '0' || o.version[0] > '9')) {
    ctx.Error("invalid_value", "/serving/version",
              "serving.version is a release number such as \"0.8.5\" or \"b4500\" without the b");
    o.version.clear();
  }
  const auto take = [&](const char* key) { return r.Has(key) && EngineReads(key, engine); };
  if (take("max_num_seqs")) o.max_seqs = r.Int("max_num_seqs", 1, 1 << 20);
  if (take("max_num_batched_tokens")) {
    o.max_batched_tokens = r.Int("max_num_batched_tokens", 1, kMaxTokens);
  }
  if (take("max_model_len")) o.max_model_len = r.Int("max_model_len", 1, kMaxTokens).value_or(0);
  if (take("enforce_eager")) o.enforce_eager = r.Bool("enforce_eager").value_or(false);
  if (take("block_size")) o.block_size = r.Int("block_size", 1, 4096);
  if (take("gpu_memory_utilization")) {
    o.memory_fraction = r.Number("gpu_memory_utilization", 0.01, 1);
  }
  if (take("kv_cache_free_gpu_mem_fraction")) {
    o.memory_fraction = r.Number("kv_cache_free_gpu_mem_fraction", 0.01, 1);
  }
  if (take("mem_fraction_static")) o.static_fraction = r.Number("mem_fraction_static", 0.01, 1);
  if (engine == "llama_cpp") {
    if (r.Has("n_ctx")) o.n_ctx = r.Int("n_ctx", 1, kMaxTokens).value_or(0);
    // llama.cpp runs n_ubatch = min(n_batch, n_ubatch) tokens a pass (llama_context's cparams).
    const int64_t n_batch = r.IntOr("n_batch", 2048, 1, kMaxTokens);
    if (r.Has("n_ubatch") || r.Has("n_batch")) {
      o.max_batched_tokens = std::min(n_batch, r.IntOr("n_ubatch", 512, 1, kMaxTokens));
    } else {
      r.Default("n_ubatch", 512);
    }
    if (r.Has("cache_type_k")) o.k_bytes = CacheType(&r, "cache_type_k");
    if (r.Has("cache_type_v")) o.v_bytes = CacheType(&r, "cache_type_v");
    const int64_t layers = req.setup.model.layers;
    if (r.Has("n_gpu_layers")) {
      const int64_t ngl = r.Int("n_gpu_layers", -1, 1 << 20).value_or(-1);
      // The estimate says what stays on the CPU (layers_on_cpu, setup_warnings.cpp).
      if (ngl >= 0 && ngl <= layers) o.n_gpu_layers = ngl;
    }
    if (r.Has("n_cpu_moe")) o.n_cpu_moe = r.Int("n_cpu_moe", 0, layers).value_or(-1);
    const std::string split = r.EnumOr("split_mode", "layer", {"layer", "row", "none"});
    if (split == "row") {
      out->warnings.push_back(Note{"engine_setting_not_modelled",
                                   {},
                                   "serving.split_mode row splits each tensor's rows over the "
                                   "GPUs; the estimate keeps the layer split",
                                   "/serving/split_mode"});
    }
  }
  if (!r.Has("version")) r.Default("version", "latest");
  r.RejectUnknown();
}

}  // namespace gpuplan::json_io
