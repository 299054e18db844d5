// SPDX-License-Identifier: MIT
#include "json/hf_config.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

namespace gpuplan::json_io {
namespace {

constexpr int64_t kMaxDim = int64_t{1} << 24;  // 16M: far above any real width or vocabulary

// A layer_types entry that attends locally: a sliding window (Gemma 2 and 3, gpt-oss, Cohere 2)
// or a fixed chunk (Llama 4's "chunked_attention").
bool IsLocalType(const Json& t) {
  return t.is_string() && (t.get<std::string>() == "sliding_attention" ||
                           t.get<std::string>() == "chunked_attention");
}

// The period of a list of layers whose global layers close each period (k - 1 local layers,
// then one global): k; 1 when every layer is local; -1 when every layer is global; 0 when the
// list is not of that form.
int64_t PatternOfLocal(const std::vector<bool>& local) {
  const int64_t n = static_cast<int64_t>(local.size());
  int64_t first_global = -1;
  for (int64_t i = 0; i < n && first_global < 0; ++i) {
    if (!local[static_cast<size_t>(i)]) first_global = i;
  }
  if (first_global < 0) return 1;
  if (first_global == 0) {  // every layer global, or no pattern
    for (const bool l : local) {
      if (l) return 0;
    }
    return -1;
  }
  const int64_t k = first_global + 1;
  for (int64_t i = 0; i < n; ++i) {
    if (local[static_cast<size_t>(i)] == ((i + 1) % k == 0)) return 0;
  }
  return k;
}

// PatternOfLocal of a layer_types list; 0 when an entry is not a string.
int64_t PatternOf(const Json& types) {
  std::vector<bool> local;
  for (const Json& t : types) {
    if (!t.is_string()) return 0;
    local.push_back(IsLocalType(t));
  }
  return PatternOfLocal(local);
}

// Reads config fields that may be spelled several ways (hidden_size / n_embd / d_model).
class HfReader {
 public:
  HfReader(const Json& c, std::string path, const ReadContext& ctx)
      : c_(c), path_(std::move(path)), ctx_(ctx) {}

  const Json* Find(std::initializer_list<const char*> names, std::string* found = nullptr) const {
    for (const char* n : names) {
      const auto it = c_.find(n);
      if (it != c_.end() && !it->is_null()) {
        if (found != nullptr) *found = n;
        return &*it;
      }
    }
    return nullptr;
  }

  std::optional<int64_t> Int(std::initializer_list<const char*> names, bool required,
                             int64_t min = 1, int64_t max = kMaxDim) {
    std::string name;
    const Json* v = Find(names, &name);
    if (v == nullptr) {
      if (required) {
        ctx_.Error("missing_field", path_ + "/" + *names.begin(),
                   "is required to size the model (also accepted: " + Alternatives(names) + ")");
        failed_ = true;
      }
      return std::nullopt;
    }
    bool integral = false;
    int64_t value = 0;
    if (v->is_number_unsigned()) {
      integral = v->get<uint64_t>() <= static_cast<uint64_t>(max);
      value = integral ? v->get<int64_t>() : 0;
    } else if (v->is_number_integer()) {
      integral = true;
      value = v->get<int64_t>();
    } else if (v->is_number_float()) {
      const double d = v->get<double>();
      integral = std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 9e18;
      value = integral ? static_cast<int64_t>(d) : 0;
    }
    if (!integral || value < min || value > max) {
      ctx_.Error("out_of_range", path_ + "/" + PointerToken(name),
                 "must be an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
                     "], got " + Show(*v));
      failed_ = true;
      return std::nullopt;
    }
    return value;
  }

  /// A dimension the family's configs may omit: the config's value, else transformers' default
  /// for the family (recorded as defaulted), else an error when `required`.
  std::optional<int64_t> Dim(std::initializer_list<const char*> names,
                             std::optional<int64_t> family_default, bool required, int64_t min = 1,
                             int64_t max = kMaxDim) {
    if (family_default && Find(names) == nullptr) {
      Defaulted(*names.begin());
      return family_default;
    }
    return Int(names, required, min, max);
  }

  std::optional<bool> Bool(std::initializer_list<const char*> names) {
    std::string name;
    const Json* v = Find(names, &name);
    if (v == nullptr) return std::nullopt;
    if (!v->is_boolean()) {
      ctx_.Error("wrong_type", path_ + "/" + PointerToken(name),
                 "must be true or false, got " + Show(*v));
      failed_ = true;
      return std::nullopt;
    }
    return v->get<bool>();
  }

  /// Whether `name` is present and null (a config switching a default off).
  bool IsNull(const char* name) const {
    const auto it = c_.find(name);
    return it != c_.end() && it->is_null();
  }

  std::string Str(const char* name) const {
    const auto it = c_.find(name);
    return it != c_.end() && it->is_string() ? it->get<std::string>() : std::string();
  }

  bool failed() const { return failed_; }

  /// Records that `name` was absent and transformers' default for the family applies.
  void Defaulted(const char* name) const {
    if (ctx_.defaults != nullptr && Find({name}) == nullptr) {
      ctx_.defaults->push_back(path_ + "/" + name);
    }
  }

 private:
  static std::string Alternatives(std::initializer_list<const char*> names) {
    std::string s;
    for (const char* n : names) s += std::string(s.empty() ? "" : ", ") + n;
    return s;
  }

  const Json& c_;
  std::string path_;
  ReadContext ctx_;
  bool failed_ = false;
};

const std::set<std::string>& KnownFamilies() {
  static const std::set<std::string> k = {
      "llama",       "mistral", "mixtral",     "qwen2", "qwen2_moe",   "qwen3",       "qwen3_moe",
      "gemma",       "gemma2",  "gemma3_text", "phi3",  "deepseek_v2", "deepseek_v3", "gpt2",
      "gpt_bigcode", "falcon",  "opt",         "bloom", "llama4_text", "gpt_oss",     "glm4_moe",
      "cohere",      "cohere2", "smollm3",     "olmo2"};
  return k;
}

// A multimodal wrapper's model_type names the text model it holds when text_config carries none
// (Gemma3ForConditionalGeneration, Llama4ForConditionalGeneration).
std::string TextFamily(const std::string& family) {
  if (family == "gemma3") return "gemma3_text";
  if (family == "llama4") return "llama4_text";
  return family;
}

// Families whose layers are not all attention: state-space (Mamba) or linear-attention layers
// hold a fixed-size state instead of a KV cache and other weights than q/k/v/o, so a transformer
// count of them would mislead. Qwen3-Next (Gated DeltaNet + gated attention), MiniMax-M1
// (lightning attention), Jamba, Zamba, Bamba, Falcon-H1, Nemotron-H and Granite 4 (Mamba),
// LFM2 (short convolutions), RecurrentGemma (RG-LRU), RWKV and xLSTM (recurrences).
const std::set<std::string>& HybridFamilies() {
  static const std::set<std::string> k = {"qwen3_next",
                                          "minimax",
                                          "minimax_m1",
                                          "jamba",
                                          "zamba",
                                          "zamba2",
                                          "bamba",
                                          "falcon_h1",
                                          "falcon_mamba",
                                          "mamba",
                                          "mamba2",
                                          "nemotron_h",
                                          "granitemoehybrid",
                                          "lfm2",
                                          "lfm2_moe",
                                          "recurrent_gemma",
                                          "rwkv",
                                          "rwkv5",
                                          "rwkv6",
                                          "rwkv7",
                                          "xlstm",
                                          "kimi_linear"};
  return k;
}

// layer_types values (and Jamba-style layers_block_type values) naming a layer that is not
// attention.
bool IsHybridLayerType(const std::string& t) {
  static const std::set<std::string> k = {
      "linear_attention", "mamba", "mamba2",   "ssm",           "conv",
      "recurrent",        "rwkv",  "deltanet", "gated_deltanet"};
  return k.count(t) > 0;
}

// transformers' per-class default for tie_word_embeddings when a config omits it.
bool DefaultTied(const std::string& family) {
  static const std::set<std::string> untied = {
      "llama", "mistral",     "mixtral",     "qwen2",       "qwen2_moe", "qwen3",    "qwen3_moe",
      "phi3",  "deepseek_v2", "deepseek_v3", "llama4_text", "gpt_oss",   "glm4_moe", "olmo2"};
  return untied.count(family) == 0;
}

// transformers' config-class default for an architecture field a family's configs may omit:
// Gemma 3's multimodal checkpoints (4B, 12B, 27B) save a sparse text_config that leaves heads,
// head_dim and the vocabulary to Gemma3TextConfig (configuration_gemma3.py).
std::optional<int64_t> FamilyDefault(const std::string& family, const std::string& field) {
  static const std::map<std::string, std::map<std::string, int64_t>> k = {
      {"gemma3_text",
       {{"vocab_size", 262208},
        {"hidden_size", 2304},
        {"intermediate_size", 9216},
        {"num_hidden_layers", 26},
        {"num_attention_heads", 8},
        {"num_key_value_heads", 4},
        {"head_dim", 256},
        {"max_position_embeddings", 131072},
        {"sliding_window", 4096},
        {"sliding_window_pattern", 6}}},
      // GptOssConfig: a 128-token window on every other layer.
      {"gpt_oss", {{"sliding_window", 128}}},
      // Cohere2Config: a 4096-token window, every fourth layer global.
      {"cohere2", {{"sliding_window", 4096}, {"sliding_window_pattern", 4}}},
      // Llama4TextConfig: 8192-token chunks, a NoPE (global) layer every fourth.
      {"llama4_text", {{"attention_chunk_size", 8192}, {"no_rope_layer_interval", 4}}}};
  const auto f = k.find(family);
  if (f == k.end()) return std::nullopt;
  const auto v = f->second.find(field);
  if (v == f->second.end()) return std::nullopt;
  return v->second;
}

// GPT-2 and GPTBigCode: learned position tables under n_positions.
bool IsGptStyle(const std::string& family) { return family == "gpt2" || family == "gpt_bigcode"; }

// The families with LayerNorm and a plain MLP; the rest have a gated MLP.
bool UsesLayerNorm(const std::string& family) {
  return IsGptStyle(family) || family == "opt" || family == "bloom" || family == "falcon";
}

// Every dimension is bounded on its own; their products are not. Refuse models beyond 10^15
// parameters (a thousand times today's largest) before any integer arithmetic can overflow.
bool SizeIsSane(const ModelSpec& m, const std::string& path, const ReadContext& ctx) {
  const auto d = [](int64_t v) { return static_cast<double>(v); };
  const double h = d(m.hidden);
  const double widths =
      d(m.QueryWidth()) + d(m.KeyWidth()) + d(m.ValueWidth()) + d(m.AttnOutWidth());
  const double mlp = std::max(
      d(m.intermediate), d(m.moe.expert_intermediate) * d(m.moe.experts + m.moe.shared_experts));
  const double latents = d(m.mla.q_lora_rank + m.mla.kv_lora_rank) * (h + widths);
  const double total = d(m.layers) * (h * widths + 3 * h * mlp + latents) +
                       (2 * d(m.vocab) + d(m.position_embeddings)) * h;
  if (total > 1e15 || widths > 1e9) {
    ctx.Error("out_of_range", path,
              "describes a model of about " + std::to_string(static_cast<long long>(total / 1e12)) +
                  " trillion parameters; gpuplan plans models up to 10^15");
    return false;
  }
  return true;
}

// The model_type, or the outer config's when text_config has none, and the norm and MLP kind it
// implies.
void ReadFamily(const Json& config, bool nested, const std::string& path, const ReadContext& ctx,
                const HfReader& r, ModelSpec* m, std::vector<Note>* warnings) {
  m->family = r.Str("model_type");
  if (m->family.empty() && nested) m->family = HfReader(config, path, ctx).Str("model_type");
  m->family = TextFamily(m->family);
  const std::string& f = m->family;
  if (KnownFamilies().count(f) == 0 && HybridFamilies().count(f) == 0) {
    warnings->push_back(Note{"unknown_model_family",
                             {},
                             "model_type '" + f.substr(0, 40) +
                                 "' is not one gpuplan knows; read as a Llama-style model "
                                 "(gated MLP, RMSNorm, no biases): check the parameter count"});
  }
  const bool layer_norm = UsesLayerNorm(f);
  m->norm = layer_norm ? NormKind::kLayer : NormKind::kRms;
  m->mlp = layer_norm ? MlpKind::kPlain : MlpKind::kGated;
  // CohereLayerNorm is a LayerNorm without a bias (modeling_cohere.py: bias=False).
  if (f == "cohere" || f == "cohere2") m->norm = NormKind::kLayerNoBias;
}

// Refuses a model whose layers are not all attention (HybridFamilies), by its model_type or by
// a layer list that names such a layer: a transformer's count, KV cache and FLOPs of it would
// be wrong, with nothing to say so.
bool RefuseHybrid(const HfReader& r, const std::string& base, const ModelSpec& m,
                  const ReadContext& ctx) {
  if (HybridFamilies().count(m.family) > 0) {
    ctx.Error("unsupported_architecture", base + "/model_type",
              "'" + m.family +
                  "' mixes attention with state-space or linear-attention layers, which gpuplan "
                  "does not model (no KV cache, other weights): its estimate would mislead");
    return false;
  }
  for (const char* key : {"layer_types", "layers_block_type"}) {
    const Json* types = r.Find({key});
    if (types == nullptr || !types->is_array()) continue;
    for (size_t i = 0; i < types->size() && i < 100000; ++i) {
      const Json& t = (*types)[i];
      if (t.is_string() && IsHybridLayerType(t.get<std::string>())) {
        ctx.Error("unsupported_architecture", base + "/" + key + "/" + std::to_string(i),
                  "is '" + t.get<std::string>().substr(0, 40) +
                      "': gpuplan models attention layers only (their weights, KV cache and "
                      "FLOPs), not state-space or linear-attention layers");
        return false;
      }
    }
  }
  return true;
}

// Falcon's own field names: the key/value heads, the layer's norms, biases and MLP width.
void ReadFalcon(HfReader& r, ModelSpec* m) {
  const bool new_arch = r.Bool({"new_decoder_architecture"}).value_or(false);
  const bool multi_query = r.Bool({"multi_query"}).value_or(true);
  m->kv_heads =
      new_arch ? r.Int({"num_kv_heads"}, false).value_or(m->heads) : (multi_query ? 1 : m->heads);
  const bool parallel = r.Bool({"parallel_attn"}).value_or(true);
  m->norms_per_layer = new_arch ? 2 : (parallel ? 1 : 2);
  const bool bias = r.Bool({"bias"}).value_or(false);
  m->qkv_bias = m->o_bias = m->mlp_bias = bias;
  m->intermediate = r.Int({"ffn_hidden_size"}, false).value_or(4 * m->hidden);
}

// Key/value heads (GQA field names, MQA flags, or full multi-head attention), the MLP width and
// the biases each family puts on its projections.
void ReadAttentionAndMlp(HfReader& r, ModelSpec* m) {
  const std::string& f = m->family;
  const bool layer_norm = UsesLayerNorm(f);
  if (f == "falcon") {
    ReadFalcon(r, m);
  } else if (f == "gpt_bigcode") {
    m->kv_heads = r.Bool({"multi_query"}).value_or(true) ? 1 : m->heads;
  } else {
    const auto kv_default = FamilyDefault(f, "num_key_value_heads");
    m->kv_heads =
        r.Dim({"num_key_value_heads", "num_kv_heads"}, kv_default, false).value_or(m->heads);
    if (!kv_default && r.Find({"num_key_value_heads", "num_kv_heads"}) == nullptr)
      r.Defaulted("num_key_value_heads");
  }
  if (f != "falcon") {
    const auto inter = r.Dim({"intermediate_size", "ffn_dim", "n_inner"},
                             FamilyDefault(f, "intermediate_size"), !layer_norm);
    m->intermediate = inter.value_or(4 * m->hidden);
    if (!inter) r.Defaulted("n_inner");
  }
  if (layer_norm && f != "falcon") {
    // GPT-2, GPTBigCode, OPT and BLOOM put biases on every projection.
    const bool bias = r.Bool({"enable_bias"}).value_or(true);
    m->qkv_bias = m->o_bias = m->mlp_bias = bias;
  }
  // One attention_bias flag for q, k, v and o, as the family's attention class reads it (its
  // config class's default: True for gpt-oss, False for the rest).
  static const std::set<std::string> attention_bias = {
      "llama",   "qwen3",  "qwen3_moe", "gemma3_text", "llama4_text",
      "gpt_oss", "cohere", "cohere2",   "smollm3",     "olmo2"};
  if (attention_bias.count(f) > 0) {
    m->qkv_bias = m->o_bias = r.Bool({"attention_bias"}).value_or(f == "gpt_oss");
  }
  if (f == "llama" || f == "smollm3") m->mlp_bias = r.Bool({"mlp_bias"}).value_or(false);
  if (f == "qwen2" || f == "qwen2_moe") m->qkv_bias = true;  // Qwen2Attention: q/k/v bias=True
  if (f == "qwen3" || f == "qwen3_moe" || f == "gemma3_text") {
    // Qwen3Attention and Gemma3Attention: q_norm and k_norm are RMSNorm(head_dim).
    m->qk_norm = true;
  }
  if (f == "glm4_moe") {
    // Glm4MoeAttention (modeling_glm4_moe.py): q/k/v take attention_bias, o_proj never has a
    // bias; use_qk_norm adds q_norm and k_norm of head_dim.
    m->qkv_bias = r.Bool({"attention_bias"}).value_or(false);
    m->qk_norm = r.Bool({"use_qk_norm"}).value_or(false);
  }
  if (f == "olmo2") {
    // Olmo2Attention: q_norm = Olmo2RMSNorm(num_heads * head_dim), k_norm over the key heads.
    m->qk_norm = true;
    m->qk_norm_weights = QkNormWeights::kFullWidth;
  }
  if (f == "cohere") {
    // CohereAttention: use_qk_norm (Command R+) adds CohereLayerNorm((num_heads, head_dim))
    // and ((num_key_value_heads, head_dim)): a weight per head and channel.
    m->qk_norm = r.Bool({"use_qk_norm"}).value_or(false);
    m->qk_norm_weights = QkNormWeights::kFullWidth;
  }
  if (f == "llama4_text") {
    // Llama4TextAttention: use_qk_norm applies Llama4TextL2Norm, which has no weight.
    m->qk_norm = r.Bool({"use_qk_norm"}).value_or(true);
    m->qk_norm_weights = QkNormWeights::kNone;
  }
  if (f == "gpt_oss") {
    // GptOssAttention keeps a sink logit per head; GptOssExperts add gate_up_proj_bias and
    // down_proj_bias to every expert (modular_gpt_oss.py).
    m->attention_sinks = true;
    m->mlp_bias = true;
  }
}

// Norms, position tables and embeddings where a family departs from Llama's.
void ReadNormsAndEmbeddings(HfReader& r, ModelSpec* m, std::vector<Note>* warnings) {
  const std::string& f = m->family;
  // Gemma 2 and 3: input, post-attention, pre- and post-feedforward (Gemma3DecoderLayer).
  if (f == "gemma2" || f == "gemma3_text") m->norms_per_layer = 4;
  // CohereDecoderLayer runs attention and the MLP in parallel off one input_layernorm.
  if (f == "cohere" || f == "cohere2") m->norms_per_layer = 1;
  if (IsGptStyle(f))
    m->position_embeddings = r.Int({"n_positions", "max_position_embeddings"}, false).value_or(0);
  if (f == "opt") {
    // OPTLearnedPositionalEmbedding keeps 2 extra rows (the padding offset).
    m->position_embeddings = r.Int({"max_position_embeddings"}, false).value_or(2048) + 2;
    m->final_norm = r.Bool({"do_layer_norm_before"}).value_or(true);
    const auto proj = r.Int({"word_embed_proj_dim"}, false);
    if (proj && *proj != m->hidden) {
      warnings->push_back(Note{"opt_projection_ignored",
                               {{"word_embed_proj_dim", static_cast<double>(*proj)}},
                               "OPT's word_embed_proj_dim projections are not counted"});
    }
  }
  if (f == "bloom") m->embedding_norm = true;
  m->tied_embeddings = r.Bool({"tie_word_embeddings"}).value_or(DefaultTied(f));
  r.Defaulted("tie_word_embeddings");
}

// Applies a layer pattern read from a layer list: no local layer drops the window, a list of no
// repeating form counts every layer as global (an upper bound) and says so.
void ApplyPattern(int64_t pattern, const std::string& at, ModelSpec* m,
                  std::vector<Note>* warnings) {
  m->sliding_pattern = pattern;
  if (pattern > 0) return;
  m->sliding_window = 0;
  m->sliding_pattern = 1;
  m->local_chunked = false;
  if (pattern == 0) {
    warnings->push_back(Note{"layer_types_irregular",
                             {},
                             "the layer list is not a repeating local/global pattern: every "
                             "layer is counted as full attention, an upper bound",
                             at});
  }
}

// Llama 4's chunked attention (modeling_llama4.py, configuration_llama4.py): a layer with RoPE
// attends within chunks of attention_chunk_size tokens (vLLM and transformers cache one chunk
// for it), a NoPE layer attends to the whole context. no_rope_layers marks RoPE layers 1 and
// NoPE layers 0; empty or absent, a NoPE layer closes every no_rope_layer_interval layers
// (layers 3, 7, 11, ...). A null attention_chunk_size turns chunking off.
void ReadChunkedAttention(HfReader& r, const std::string& base, ModelSpec* m,
                          std::vector<Note>* warnings) {
  if (r.IsNull("attention_chunk_size")) return;
  m->sliding_window =
      r.Dim({"attention_chunk_size"}, FamilyDefault(m->family, "attention_chunk_size"), false)
          .value_or(0);
  if (m->sliding_window <= 0) return;
  m->local_chunked = true;
  const Json* types = r.Find({"layer_types"});
  const Json* no_rope = r.Find({"no_rope_layers"});
  if (types != nullptr && types->is_array() && !types->empty()) {
    ApplyPattern(PatternOf(*types), base + "/layer_types", m, warnings);
  } else if (no_rope != nullptr && no_rope->is_array() && !no_rope->empty()) {
    std::vector<bool> local;
    for (const Json& v : *no_rope) {
      local.push_back((v.is_number() && v.get<double>() != 0) || (v.is_boolean() && v.get<bool>()));
    }
    ApplyPattern(PatternOfLocal(local), base + "/no_rope_layers", m, warnings);
  } else {
    m->sliding_pattern =
        r.Dim({"no_rope_layer_interval"}, FamilyDefault(m->family, "no_rope_layer_interval"), false,
              1, 1 << 16)
            .value_or(1);
  }
}

// Sliding-window attention: Mistral v0.1 on every layer, Gemma 2 on every other layer, Gemma 3
// on five of six, gpt-oss on every other, Cohere 2 on three of four; Qwen2 configs carry a
// window that use_sliding_window (false) switches off.
void ReadSlidingWindow(HfReader& r, const std::string& base, ModelSpec* m,
                       std::vector<Note>* warnings) {
  if (m->family == "llama4_text") {
    ReadChunkedAttention(r, base, m, warnings);
    return;
  }
  const bool window_on = r.Bool({"use_sliding_window"}).value_or(true);
  if (window_on) {
    m->sliding_window =
        r.Dim({"sliding_window"}, FamilyDefault(m->family, "sliding_window"), false).value_or(0);
  }
  if (m->sliding_window <= 0) return;
  // Which layers are local: layer_types when the config lists them, else Gemma 2's and
  // gpt-oss's every other layer (transformers: layer_idx % 2 == 0 is local), else
  // sliding_window_pattern (Gemma 3: 6, Cohere 2: 4 by default), else every layer.
  const Json* types = r.Find({"layer_types"});
  if (types != nullptr && types->is_array() && !types->empty()) {
    ApplyPattern(PatternOf(*types), base + "/layer_types", m, warnings);
  } else if (m->family == "gemma2" || m->family == "gpt_oss") {
    m->sliding_pattern = 2;
  } else {
    m->sliding_pattern =
        r.Dim({"sliding_window_pattern"}, FamilyDefault(m->family, "sliding_window_pattern"), false,
              1, 1 << 16)
            .value_or(1);
  }
}

// Qwen2-MoE and Qwen3-MoE: routed experts, the dense layers, one gated shared expert.
void ReadQwenMoe(HfReader& r, ModelSpec* m) {
  m->moe.experts = r.Int({"num_experts"}, true).value_or(0);
  m->moe.experts_per_token = r.Int({"num_experts_per_tok"}, true).value_or(0);
  m->moe.expert_intermediate = r.Int({"moe_intermediate_size"}, true).value_or(0);
  m->moe.layer_freq = r.Int({"decoder_sparse_step"}, false).value_or(1);
  m->moe.layer_offset = 1;  // Qwen2MoeDecoderLayer: (layer_idx + 1) % decoder_sparse_step == 0
  const Json* only = r.Find({"mlp_only_layers"});
  if (only != nullptr && only->is_array() && only->size() <= 4096) {
    for (const auto& i : *only) {
      if (i.is_number_integer()) m->moe.dense_layers.push_back(i.get<int64_t>());
    }
  }
  const auto shared = r.Int({"shared_expert_intermediate_size"}, false, 0);
  if (shared && *shared > 0) {
    m->moe.shared_experts = 1;
    m->moe.shared_intermediate = *shared;
    m->moe.shared_gate = true;
  }
}

// DeepSeek-V2 and V3: routed and shared experts, and multi-head latent attention.
void ReadDeepSeek(HfReader& r, ModelSpec* m) {
  m->moe.experts = r.Int({"n_routed_experts"}, true).value_or(0);
  m->moe.experts_per_token = r.Int({"num_experts_per_tok"}, true).value_or(0);
  m->moe.expert_intermediate = r.Int({"moe_intermediate_size"}, true).value_or(0);
  m->moe.shared_experts = r.Int({"n_shared_experts"}, false, 0).value_or(0);
  m->moe.shared_intermediate = m->moe.expert_intermediate;
  m->moe.first_dense_layers = r.Int({"first_k_dense_replace"}, false, 0).value_or(0);
  m->moe.layer_freq = r.Int({"moe_layer_freq"}, false).value_or(1);
  m->moe.router_bias = m->family == "deepseek_v3";  // e_score_correction_bias
  m->mla.q_lora_rank = r.Int({"q_lora_rank"}, false, 0).value_or(0);
  m->mla.kv_lora_rank = r.Int({"kv_lora_rank"}, true).value_or(0);
  m->mla.qk_nope_head_dim = r.Int({"qk_nope_head_dim"}, true).value_or(0);
  m->mla.qk_rope_head_dim = r.Int({"qk_rope_head_dim"}, true).value_or(0);
  m->mla.v_head_dim = r.Int({"v_head_dim"}, true).value_or(0);
  m->kv_heads = m->heads;
  m->head_dim = m->mla.qk_nope_head_dim + m->mla.qk_rope_head_dim;
}

// gpt-oss (modular_gpt_oss.py): every layer routes to num_experts_per_tok of
// num_local_experts gated experts of intermediate_size, with biases (ReadAttentionAndMlp), and
// a router with a bias; no shared expert. The checkpoint's experts are MXFP4; the weight format
// is the request's precision, not the architecture's.
void ReadGptOss(HfReader& r, ModelSpec* m) {
  m->moe.experts = r.Int({"num_local_experts"}, true).value_or(0);
  m->moe.experts_per_token = r.Int({"num_experts_per_tok", "experts_per_token"}, true).value_or(0);
  m->moe.expert_intermediate = m->intermediate;
  m->moe.router_bias = true;  // GptOssTopKRouter.bias
}

// Llama 4 (modeling_llama4.py): a Llama4TextMoe layer holds num_local_experts routed experts
// and one shared expert, all of intermediate_size, and a bias-free router; the other layers
// hold a dense MLP of intermediate_size_mlp. The MoE layers are moe_layers, else every
// interleave_moe_layer_step-th layer counted from one (range(step - 1, n, step)): all of
// Scout's, every other one of Maverick's.
void ReadLlama4Moe(HfReader& r, ModelSpec* m) {
  const int64_t expert_width = m->intermediate;
  m->intermediate = r.Int({"intermediate_size_mlp"}, false).value_or(16384);
  r.Defaulted("intermediate_size_mlp");
  m->moe.experts = r.Int({"num_local_experts"}, true).value_or(0);
  m->moe.experts_per_token = r.Int({"num_experts_per_tok"}, false).value_or(1);
  r.Defaulted("num_experts_per_tok");
  m->moe.expert_intermediate = expert_width;
  m->moe.shared_experts = 1;
  m->moe.shared_intermediate = expert_width;
  const Json* listed = r.Find({"moe_layers"});
  if (listed != nullptr && listed->is_array() && listed->size() <= 100000) {
    std::set<int64_t> moe;
    for (const Json& i : *listed) {
      if (i.is_number_integer()) moe.insert(i.get<int64_t>());
    }
    for (int64_t i = 0; i < m->layers; ++i) {
      if (moe.count(i) == 0) m->moe.dense_layers.push_back(i);
    }
    return;
  }
  m->moe.layer_freq = r.Int({"interleave_moe_layer_step"}, false).value_or(1);
  m->moe.layer_offset = 1;
}

// GLM-4.5 and GLM-4.6 (modeling_glm4_moe.py): DeepSeek-V3's layout without MLA. Layers from
// first_k_dense_replace on hold n_routed_experts experts of moe_intermediate_size, shared
// experts as one MLP of n_shared_experts x moe_intermediate_size, and a router with
// e_score_correction_bias; the first layers a dense MLP of intermediate_size. The
// num_nextn_predict_layers multi-token-prediction layer is not counted: Glm4MoeModel builds
// num_hidden_layers layers and skips its weights on load (_keys_to_ignore_on_load_unexpected),
// serving engines load it only for speculative decoding, and DeepSeek-V3 here is counted
// without its MTP module alike.
void ReadGlm4Moe(HfReader& r, ModelSpec* m) {
  m->moe.experts = r.Int({"n_routed_experts"}, true).value_or(0);
  m->moe.experts_per_token = r.Int({"num_experts_per_tok"}, true).value_or(0);
  m->moe.expert_intermediate = r.Int({"moe_intermediate_size"}, true).value_or(0);
  m->moe.shared_experts = r.Int({"n_shared_experts"}, false, 0).value_or(1);
  m->moe.shared_intermediate = m->moe.expert_intermediate;
  m->moe.first_dense_layers = r.Int({"first_k_dense_replace"}, false, 0).value_or(1);
  m->moe.router_bias = true;  // Glm4MoeTopkRouter.e_score_correction_bias
}

// Mixture of experts, by family.
void ReadMoe(HfReader& r, ModelSpec* m) {
  const std::string& f = m->family;
  if (f == "mixtral") {
    m->moe.experts = r.Int({"num_local_experts"}, true).value_or(0);
    m->moe.experts_per_token = r.Int({"num_experts_per_tok"}, true).value_or(0);
    m->moe.expert_intermediate = m->intermediate;
  } else if (f == "qwen2_moe" || f == "qwen3_moe") {
    ReadQwenMoe(r, m);
  } else if (f == "deepseek_v2" || f == "deepseek_v3") {
    ReadDeepSeek(r, m);
  } else if (f == "gpt_oss") {
    ReadGptOss(r, m);
  } else if (f == "llama4_text") {
    ReadLlama4Moe(r, m);
  } else if (f == "glm4_moe") {
    ReadGlm4Moe(r, m);
  }
}

// The checks across fields, once every field is read.
bool IsConsistent(const ModelSpec& m, const std::string& base, const ReadContext& ctx) {
  if (m.kv_heads < 1 || m.kv_heads > m.heads || m.heads % m.kv_heads != 0) {
    ctx.Error("out_of_range", base + "/num_key_value_heads",
              "must divide num_attention_heads (" + std::to_string(m.heads) + "), got " +
                  std::to_string(m.kv_heads));
    return false;
  }
  if (m.head_dim < 1) {
    ctx.Error("out_of_range", base + "/head_dim", "could not be derived: give head_dim");
    return false;
  }
  if (m.IsMoe() && (m.moe.experts_per_token < 1 || m.moe.experts_per_token > m.moe.experts)) {
    ctx.Error(
        "out_of_range", base + "/num_experts_per_tok",
        "must be between 1 and the number of experts (" + std::to_string(m.moe.experts) + ")");
    return false;
  }
  return true;
}

}  // namespace

namespace {

// The KV cache type a quantised checkpoint declares: ModelOpt's kv_cache_quant_algo ("FP8",
// in config.json's quantization_config or hf_quant_config.json's quantization) or
// compressed-tensors' kv_cache_scheme ({"num_bits": 8, "type": "float" | "int"}).
std::string CheckpointKvCache(const Json& config) {
  for (const char* key : {"quantization_config", "quantization"}) {
    const auto q = config.find(key);
    if (q == config.end() || !q->is_object()) continue;
    const auto algo = q->find("kv_cache_quant_algo");
    if (algo != q->end() && algo->is_string()) {
      const std::string a = algo->get<std::string>();
      if (a == "FP8" || a == "fp8") return "fp8";
      if (a == "INT8" || a == "int8") return "int8";
    }
    const auto scheme = q->find("kv_cache_scheme");
    if (scheme != q->end() && scheme->is_object()) {
      const auto bits = scheme->find("num_bits");
      const auto type = scheme->find("type");
      if (bits != scheme->end() && bits->is_number() && bits->get<double>() == 8) {
        return type != scheme->end() && type->is_string() && type->get<std::string>() == "int"
                   ? "int8"
                   : "fp8";
      }
    }
  }
  return "";
}

// The weights format a checkpoint's quantization_config declares (transformers' quant_method):
// GPTQ, AWQ and AutoRound with their bits and group_size; gpt-oss's MXFP4 (its
// modules_to_not_convert keeps attention, router, embeddings and lm_head in bf16, so only the
// experts are MXFP4 when self_attn is listed); DeepSeek's fp8 with weight_block_size
// [128, 128].
void CheckpointWeights(const Json& config, ModelSpec* m) {
  const auto q = config.find("quantization_config");
  if (q == config.end() || !q->is_object()) return;
  const auto str = [&](const char* key) {
    const auto it = q->find(key);
    return it != q->end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  const auto num = [&](const char* key) {
    const auto it = q->find(key);
    return it != q->end() && it->is_number() ? it->get<double>() : 0.0;
  };
  const std::string method = str("quant_method");
  if (method == "gptq" || method == "awq" || method == "auto-round" || method == "autoround" ||
      method == "intel/auto-round") {
    const double bits = num("bits");
    const double group = num("group_size");
    if (bits != 0 && bits != 4) {
      m->checkpoint_quant_unmodelled = method + " at " + std::to_string(static_cast<int>(bits)) +
                                       " bits (only 4-bit GPTQ/AWQ/AutoRound are modelled)";
      return;
    }
    m->checkpoint_weights = method == "gptq"  ? "gptq_int4"
                            : method == "awq" ? "awq_int4"
                                              : "autoround_int4";
    // group_size -1 (GPTQ's per-channel) and anything out of the contract's range keep 128.
    if (group >= 8 && group <= (1 << 16)) m->checkpoint_group_size = static_cast<int>(group);
    return;
  }
  if (method == "mxfp4") {
    bool attention_16bit = false;
    const auto keep = q->find("modules_to_not_convert");
    if (keep != q->end() && keep->is_array()) {
      for (const Json& k : *keep) {
        if (k.is_string() && k.get<std::string>().find("attn") != std::string::npos) {
          attention_16bit = true;
        }
      }
    }
    m->checkpoint_weights = attention_16bit && m->IsMoe() ? "mxfp4_experts" : "mxfp4";
    return;
  }
  if (method == "fp8") {
    const auto block = q->find("weight_block_size");
    if (block != q->end() && block->is_array() && block->size() == 2 && (*block)[0] == 128 &&
        (*block)[1] == 128) {
      m->checkpoint_weights = "fp8_block128";
    }
  }
}

}  // namespace

namespace {

void WholeFloatsAsIntegers(Json* v) {
  if (v->is_number_float()) {
    const double d = v->get<double>();
    constexpr double kExact = 9007199254740992.0;  // 2^53: every integer below is a double
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < kExact) {
      *v = static_cast<int64_t>(d);
    }
  } else if (v->is_structured()) {
    for (Json& item : *v) WholeFloatsAsIntegers(&item);
  }
}

}  // namespace

std::string ConfigText(const Json& config) {
  Json copy = config;
  WholeFloatsAsIntegers(&copy);
  return copy.dump(1, ' ', false, Json::error_handler_t::replace);
}

std::optional<ModelSpec> ModelFromHfConfig(const Json& config, const std::string& path,
                                           const ReadContext& ctx, std::vector<Note>* warnings) {
  if (!config.is_object()) {
    ctx.Error("wrong_type", path, "must be a config.json object, got " + TypeName(config));
    return std::nullopt;
  }
  // Multimodal configs nest the language model under text_config.
  const auto text = config.find("text_config");
  const bool nested = text != config.end() && text->is_object();
  const Json& c = nested ? *text : config;
  const std::string base = nested ? path + "/text_config" : path;
  HfReader r(c, base, ctx);
  const auto vision = config.find("vision_config");
  if (nested && vision != config.end() && vision->is_object()) {
    warnings->push_back(Note{"vision_tower_not_counted",
                             {},
                             "the language model under text_config is planned; the vision "
                             "encoder and its projector are not counted",
                             path + "/vision_config"});
  }

  ModelSpec m;
  ReadFamily(config, nested, path, ctx, r, &m, warnings);
  if (!RefuseHybrid(r, base, m, ctx)) return std::nullopt;
  const auto fd = [&m](const char* field) { return FamilyDefault(m.family, field); };
  m.hidden =
      r.Dim({"hidden_size", "n_embd", "n_embed", "d_model"}, fd("hidden_size"), true).value_or(0);
  // The same bound as an explicit model's `layers`: the largest published models have a few
  // hundred, and a count in the millions would make every setup a plan tries cost seconds.
  m.layers = r.Dim({"num_hidden_layers", "n_layer", "num_layers"}, fd("num_hidden_layers"), true, 1,
                   100000)
                 .value_or(0);
  m.heads = r.Dim({"num_attention_heads", "n_head"}, fd("num_attention_heads"), true).value_or(0);
  m.vocab = r.Dim({"vocab_size"}, fd("vocab_size"), true).value_or(0);
  if (r.failed()) return std::nullopt;
  // Cohere and Cohere 2 derive head_dim from the widths whatever the config says
  // (configuration_cohere2.py: head_dim = hidden_size // num_attention_heads).
  const bool derived_head_dim = m.family == "cohere" || m.family == "cohere2";
  const auto explicit_head_dim =
      derived_head_dim ? std::nullopt : r.Dim({"head_dim"}, fd("head_dim"), false);
  m.head_dim = explicit_head_dim.value_or(m.heads > 0 ? m.hidden / m.heads : 0);

  ReadAttentionAndMlp(r, &m);
  ReadNormsAndEmbeddings(r, &m, warnings);
  ReadSlidingWindow(r, base, &m, warnings);
  m.max_context =
      r.Dim({"max_position_embeddings", "n_positions", "seq_length"}, fd("max_position_embeddings"),
            false, 1, std::numeric_limits<int32_t>::max())
          .value_or(0);
  ReadMoe(r, &m);
  m.checkpoint_kv_cache = CheckpointKvCache(config);
  CheckpointWeights(config, &m);
  if (r.failed()) return std::nullopt;
  if (!IsConsistent(m, base, ctx)) return std::nullopt;
  if (!SizeIsSane(m, path, ctx)) return std::nullopt;
  return m;
}

namespace {

// A declared parameter count that the architecture as given misses by more than 1%, but that
// exactly one of the choices the request left to their defaults explains (a plain or gated
// MLP, with the intermediate width and norm that go with it; tied or untied embeddings),
// selects that choice. Several or none: the architecture's count stands and
// the estimate warns (params_mismatch).
void ExplainDeclaredParams(const Fields& r, ModelSpec* m, Json* normalized,
                           std::vector<Note>* warnings) {
  if (m->declared_params <= 0) return;
  const auto off = [&](const ModelSpec& v) {
    const double total = static_cast<double>(CountParams(v).total);
    return std::fabs(total - static_cast<double>(v.declared_params)) /
           static_cast<double>(v.declared_params);
  };
  if (off(*m) <= 0.01) return;
  std::vector<ModelSpec> fits;
  for (const MlpKind mlp : {MlpKind::kGated, MlpKind::kPlain}) {
    if (r.Has("mlp") && mlp != m->mlp) continue;
    for (const bool tied : {false, true}) {
      if (r.Has("tied_embeddings") && tied != m->tied_embeddings) continue;
      ModelSpec v = *m;
      v.mlp = mlp;
      v.tied_embeddings = tied;
      if (!r.Has("intermediate") && mlp != m->mlp) {
        v.intermediate =
            std::min(kMaxDim, mlp == MlpKind::kPlain ? 4 * v.hidden : (8 * v.hidden) / 3);
      }
      if (!r.Has("norm") && mlp != m->mlp) {
        v.norm = mlp == MlpKind::kGated ? NormKind::kRms : NormKind::kLayer;
      }
      if (off(v) <= 0.01) fits.push_back(v);
    }
  }
  if (fits.size() != 1) return;
  *m = fits.front();
  if (normalized != nullptr) {
    (*normalized)["mlp"] = m->mlp == MlpKind::kGated ? "gated" : "plain";
    (*normalized)["tied_embeddings"] = m->tied_embeddings;
    (*normalized)["intermediate"] = m->intermediate;
    (*normalized)["norm"] = m->norm == NormKind::kRms ? "rms" : "layer";
  }
  if (warnings != nullptr) {
    warnings->push_back(Note{"params_select_architecture",
                             {{"declared", static_cast<double>(m->declared_params)},
                              {"derived", static_cast<double>(CountParams(*m).total)}},
                             std::string("only one architecture matches the stated params: a ") +
                                 (m->mlp == MlpKind::kGated ? "gated" : "plain") + " MLP with " +
                                 (m->tied_embeddings ? "tied" : "untied") +
                                 " embeddings, which is used",
                             "/model/params"});
  }
}

}  // namespace

std::optional<ModelSpec> ModelFromExplicit(const Json& model, const std::string& path,
                                           const ReadContext& ctx, Json* normalized,
                                           std::vector<Note>* warnings) {
  Fields r(&model, path, ctx, normalized);
  ModelSpec m;
  m.family = "explicit";
  m.name = r.String("name").value_or("custom model");
  const auto layers = r.Int("layers", 1, 100000);
  const auto hidden = r.Int("hidden", 1, kMaxDim);
  const auto heads = r.Int("heads", 1, kMaxDim);
  const auto vocab = r.Int("vocab", 1, kMaxDim);
  for (const char* required : {"layers", "hidden", "heads", "vocab"}) {
    if (!r.Has(required)) {
      ctx.Error("missing_field", r.PathOf(required), "is required for an explicit model");
    }
  }
  m.layers = layers.value_or(0);
  m.hidden = hidden.value_or(0);
  m.heads = heads.value_or(0);
  m.vocab = vocab.value_or(0);
  const std::string mlp = r.EnumOr("mlp", "gated", {"gated", "plain"});
  m.mlp = mlp == "gated" ? MlpKind::kGated : MlpKind::kPlain;
  const std::string norm = r.EnumOr("norm", mlp == "gated" ? "rms" : "layer", {"rms", "layer"});
  m.norm = norm == "rms" ? NormKind::kRms : NormKind::kLayer;
  const int64_t default_inter =
      std::min(kMaxDim, m.mlp == MlpKind::kPlain ? 4 * m.hidden : (8 * m.hidden) / 3);
  m.intermediate = r.IntOr("intermediate", default_inter, 1, kMaxDim);
  m.kv_heads = r.IntOr("kv_heads", m.heads, 1, kMaxDim);
  const int64_t head_dim_default = m.heads > 0 ? m.hidden / m.heads : 1;
  m.head_dim = r.Has("head_dim") ? r.Int("head_dim", 1, kMaxDim).value_or(1) : head_dim_default;
  if (!r.Has("head_dim")) r.Default("head_dim", head_dim_default);
  m.tied_embeddings = r.BoolOr("tied_embeddings", false);
  m.qkv_bias = r.BoolOr("qkv_bias", false);
  m.dropout = r.BoolOr("dropout", false);
  m.max_context = r.Int("max_context", 1, std::numeric_limits<int32_t>::max()).value_or(0);
  if (const Json* moe = r.Raw("moe")) {
    Json moe_out;
    Fields e(moe, r.PathOf("moe"), ctx, &moe_out);
    m.moe.experts = e.Int("experts", 1, 100000).value_or(0);
    m.moe.experts_per_token = e.Int("experts_per_token", 1, 100000).value_or(0);
    m.moe.expert_intermediate = e.IntOr("expert_intermediate", m.intermediate, 1, kMaxDim);
    m.moe.shared_experts = e.IntOr("shared_experts", 0, 0, 1000);
    m.moe.shared_intermediate =
        e.IntOr("shared_intermediate", m.moe.expert_intermediate, 1, kMaxDim);
    m.moe.first_dense_layers = e.IntOr("first_dense_layers", 0, 0, m.layers);
    for (const char* required : {"experts", "experts_per_token"}) {
      if (!e.Has(required))
        ctx.Error("missing_field", e.PathOf(required), "is required for an MoE model");
    }
    e.RejectUnknown();
    if (normalized != nullptr) (*normalized)["moe"] = moe_out;
    if (m.moe.experts_per_token > m.moe.experts) {
      ctx.Error("out_of_range", e.PathOf("experts_per_token"),
                "must not exceed experts (" + std::to_string(m.moe.experts) + ")");
    }
  }
  const auto params = r.Int("params", 1, std::numeric_limits<int64_t>::max());
  m.declared_params = params.value_or(0);
  r.RejectUnknown();
  if (m.heads > 0 && (m.kv_heads > m.heads || m.heads % m.kv_heads != 0)) {
    ctx.Error(
        "out_of_range", r.PathOf("kv_heads"),
        "must divide heads (" + std::to_string(m.heads) + "), got " + std::to_string(m.kv_heads));
  }
  if (m.layers == 0 || m.hidden == 0 || m.heads == 0 || m.vocab == 0) return std::nullopt;
  if (m.head_dim < 1) {
    ctx.Error("out_of_range", r.PathOf("head_dim"),
              "is hidden / heads = 0 (hidden " + std::to_string(m.hidden) + " < heads " +
                  std::to_string(m.heads) + "): give head_dim");
    return std::nullopt;
  }
  if (!SizeIsSane(m, path, ctx)) return std::nullopt;
  ExplainDeclaredParams(r, &m, normalized, warnings);
  return m;
}

}  // namespace gpuplan::json_io
