// SPDX-License-Identifier: MIT
#include "json/stacks_io.h"

#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "json/reader.h"

namespace gpuplan::json_io {
namespace {

// The profiles' strings: they are `const char*` in the policy structs (copied by the thousand
// in a plan, so no string is copied with them) and live as long as the program.
const char* Intern(const std::string& s) {
  static std::deque<std::string> pool;
  pool.push_back(s);
  return pool.back().c_str();
}

struct Reading {
  const ReadContext& ctx;
  std::string path;  ///< the value's JSON pointer
  void Fail(const std::string& why) const { ctx.Error("invalid_stack_value", path, why); }
};

// A number in [min, max].
bool Number(const Json& j, double min, double max, const Reading& r, double* out) {
  if (!j.is_number() || !std::isfinite(j.get<double>()) || j.get<double>() < min ||
      j.get<double>() > max) {
    r.Fail("must be a number in [" + Show(min) + ", " + Show(max) + "], got " + Show(j));
    return false;
  }
  *out = j.get<double>();
  return true;
}

bool Int(const Json& j, int64_t min, int64_t max, const Reading& r, int64_t* out) {
  double v = 0;
  if (!Number(j, static_cast<double>(min), static_cast<double>(max), r, &v)) return false;
  if (std::floor(v) != v) {
    r.Fail("must be a whole number, got " + Show(j));
    return false;
  }
  *out = static_cast<int64_t>(v);
  return true;
}

bool Bool(const Json& j, const Reading& r, bool* out) {
  if (!j.is_boolean()) {
    r.Fail("must be true or false, got " + Show(j));
    return false;
  }
  *out = j.get<bool>();
  return true;
}

bool Text(const Json& j, const Reading& r, const char** out) {
  if (!j.is_string() || j.get<std::string>().empty()) {
    r.Fail("must be a non-empty string, got " + Show(j));
    return false;
  }
  *out = Intern(j.get<std::string>());
  return true;
}

// Bytes: a number of bytes, or {value, unit} in GiB or MiB (the value times 1024^3 or
// 1024^2, as the figure reads in its source).
bool Bytes(const Json& j, const Reading& r, double* out) {
  constexpr double kMax = 1e15;
  if (j.is_object()) {
    const Json* value = j.contains("value") ? &j.at("value") : nullptr;
    const std::string unit =
        j.contains("unit") && j.at("unit").is_string() ? j.at("unit").get<std::string>() : "";
    const double scale = unit == "GiB"   ? 1024.0 * 1024.0 * 1024.0
                         : unit == "MiB" ? 1024.0 * 1024.0
                                         : 0;
    if (value == nullptr || scale == 0 || j.size() != 2) {
      r.Fail("bytes are a number or {\"value\", \"unit\": \"GiB\" | \"MiB\"}, got " + Show(j));
      return false;
    }
    double v = 0;
    if (!Number(*value, 0, kMax, r, &v)) return false;
    *out = v * scale;
    return true;
  }
  return Number(j, 0, kMax, r, out);
}

// A JSON object's members, each read once, with an error for any other.
class Members {
 public:
  Members(const Json& j, const Reading& r) : j_(j), r_(r) {
    if (!j.is_object()) r.Fail("must be an object, got " + TypeName(j));
  }
  // The member, or null (absent, or this is not an object).
  const Json* Get(const char* key) {
    seen_.emplace(key);
    return j_.is_object() && j_.contains(key) ? &j_.at(key) : nullptr;
  }
  Reading At(const char* key) const { return {r_.ctx, r_.path + "/" + key}; }
  void RejectUnknown() const {
    if (!j_.is_object()) return;
    for (const auto& [k, v] : j_.items()) {
      if (seen_.count(k) == 0)
        r_.ctx.Error("unknown_field", r_.path + "/" + PointerToken(k), "is not a known field");
    }
  }

 private:
  const Json& j_;
  const Reading& r_;
  std::set<std::string> seen_;
};

bool Caps(const Json& j, const Reading& r, std::array<CapTier, 5>* out) {
  if (!j.is_array() || j.empty() || j.size() > out->size()) {
    r.Fail("must be 1 to 5 tiers, smallest cards first");
    return false;
  }
  *out = {};
  bool ok = true;
  for (size_t i = 0; i < j.size(); ++i) {
    const Reading at{r.ctx, r.path + "/" + std::to_string(i)};
    Members m(j[i], at);
    CapTier& t = (*out)[i];
    const Json* below = m.Get("below_gib");
    if (below == nullptr || !below->is_null()) {
      ok = below != nullptr && Number(*below, 0, 1e6, m.At("below_gib"), &t.below_gib) && ok;
    }
    const Json* tokens = m.Get("max_batched_tokens");
    ok = tokens != nullptr &&
         Int(*tokens, 1, 1 << 24, m.At("max_batched_tokens"), &t.max_batched_tokens) && ok;
    if (const Json* seqs = m.Get("max_seqs"))
      ok = Int(*seqs, 0, 1 << 24, m.At("max_seqs"), &t.max_seqs) && ok;
    if (const Json* g = m.Get("graph_batch"))
      ok = Int(*g, 0, 1 << 20, m.At("graph_batch"), &t.graph_batch) && ok;
    if (const Json* g = m.Get("graph_batch_wide")) {
      ok = Int(*g, 0, 1 << 20, m.At("graph_batch_wide"), &t.graph_batch_wide) && ok;
    }
    m.RejectUnknown();
  }
  return ok;
}

bool Older(const Json& j, const Reading& r, std::array<ServingPolicy::Older, 3>* out) {
  if (!j.is_array() || j.size() > out->size()) {
    r.Fail("must be at most 3 earlier releases, oldest first");
    return false;
  }
  *out = {};
  bool ok = true;
  for (size_t i = 0; i < j.size(); ++i) {
    const Reading at{r.ctx, r.path + "/" + std::to_string(i)};
    Members m(j[i], at);
    ServingPolicy::Older& o = (*out)[i];
    const Json* before = m.Get("before");
    ok = before != nullptr && Text(*before, m.At("before"), &o.before) && ok;
    if (const Json* f = m.Get("memory_fraction"))
      ok = Number(*f, 0, 1, m.At("memory_fraction"), &o.memory_fraction) && ok;
    if (const Json* g = m.Get("graphs_in_budget"))
      ok = Bool(*g, m.At("graphs_in_budget"), &o.graphs_in_budget) && ok;
    if (const Json* w = m.Get("whole_prompts"))
      ok = Bool(*w, m.At("whole_prompts"), &o.whole_prompts) && ok;
    if (const Json* n = m.Get("non_torch_bytes"))
      ok = Bytes(*n, m.At("non_torch_bytes"), &o.non_torch_bytes) && ok;
    m.RejectUnknown();
  }
  return ok;
}

bool Reserve(const Json& j, const Reading& r, ReserveRule* out) {
  Members m(j, r);
  bool ok = true;
  const std::pair<const char*, double*> bytes[] = {
      {"base_bytes", &out->base_bytes},
      {"per_chunk_token_bytes", &out->per_chunk_token_bytes},
      {"per_graph_batch_bytes", &out->per_graph_batch_bytes},
      {"per_model_rank_bytes", &out->per_model_rank_bytes},
      {"floor_bytes", &out->floor_bytes},
      {"floor_above_bytes", &out->floor_above_bytes}};
  for (const auto& [key, into] : bytes) {
    if (const Json* v = m.Get(key)) ok = Bytes(*v, m.At(key), into) && ok;
  }
  if (const Json* c = m.Get("min_chunk_tokens"))
    ok = Int(*c, 0, 1 << 24, m.At("min_chunk_tokens"), &out->min_chunk_tokens) && ok;
  m.RejectUnknown();
  return ok;
}

// A policy value the file can set: its key (the field's path in StackProfile) and where it goes.
// Plain function pointers, one table: std::function and a map of them cost the page's download
// kilobytes for a table read once.
struct PolicyField {
  const char* key;
  bool* (*flag)(StackProfile*);
  double* (*number)(StackProfile*);
  int64_t* (*count)(StackProfile*);
  double min;
  double max;
  bool (*custom)(const Json& value, const Reading& r, StackProfile* p);
};

bool SetZero(const Json& v, const Reading& r, int* into) {
  int64_t z = 0;
  if (!Int(v, 0, 3, r, &z)) return false;
  *into = static_cast<int>(z);
  return true;
}

bool SetKvBudget(const Json& v, const Reading& r, StackProfile* p) {
  static const std::pair<const char*, KvBudget> kBudgets[] = {
      {"as_needed", KvBudget::kAsNeeded},
      {"share_of_card", KvBudget::kShareOfCard},
      {"card_minus_reserve", KvBudget::kCardMinusReserve},
      {"share_of_free", KvBudget::kShareOfFree}};
  for (const auto& [name, budget] : kBudgets) {
    if (v.is_string() && v.get<std::string>() == name) {
      p->engine.kv_budget = budget;
      return true;
    }
  }
  r.Fail("must be as_needed, share_of_card, card_minus_reserve or share_of_free, got " + Show(v));
  return false;
}

bool SetOptimizerKernel(const Json& v, const Reading& r, StackProfile* p) {
  const auto kernel = v.is_string() ? OptimizerKernelNamed(v.get<std::string>()) : std::nullopt;
  if (!kernel) {
    r.Fail("must be foreach, fused or for_loop, got " + Show(v));
    return false;
  }
  p->training.optimizer_kernel = *kernel;
  return true;
}

using P = StackProfile;
constexpr double kHuge = 1e13;
using Custom = bool (*)(const Json&, const Reading&, P*);

constexpr PolicyField Flag(const char* key, bool* (*at)(P*)) {
  return {key, at, nullptr, nullptr, 0, 0, nullptr};
}
constexpr PolicyField Num(const char* key, double* (*at)(P*), double min, double max) {
  return {key, nullptr, at, nullptr, min, max, nullptr};
}
constexpr PolicyField Count(const char* key, int64_t* (*at)(P*), double min, double max) {
  return {key, nullptr, nullptr, at, min, max, nullptr};
}
constexpr PolicyField Other(const char* key, Custom set) {
  return {key, nullptr, nullptr, nullptr, 0, 0, set};
}

const PolicyField kPolicyFields[] = {
    Flag("layouts.model_parallel", [](P* p) { return &p->layouts.model_parallel; }),
    Other("layouts.max_zero", [](const Json& v, const Reading& r,
                                 P* p) { return SetZero(v, r, &p->layouts.max_zero); }),
    Other("layouts.default_zero", [](const Json& v, const Reading& r,
                                     P* p) { return SetZero(v, r, &p->layouts.default_zero); }),
    Flag("training.master_copy", [](P* p) { return &p->training.master_copy; }),
    Other("training.optimizer_kernel", SetOptimizerKernel),
    Num(
        "training.expert_matmul_efficiency",
        [](P* p) { return &p->training.expert_matmul_efficiency; }, 0.01, 1),
    Flag("training.fused_pointwise", [](P* p) { return &p->training.fused_pointwise; }),
    Num(
        "training.lora_input_copy_bytes", [](P* p) { return &p->training.lora_input_copy_bytes; },
        0, 4),
    Flag("training.fp32_grad_accumulation",
         [](P* p) { return &p->training.fp32_grad_accumulation; }),
    Flag("training.kbit_fp32_upcast", [](P* p) { return &p->training.kbit_fp32_upcast; }),
    Flag("training.saved.norm_fp32_copy", [](P* p) { return &p->training.saved.norm_fp32_copy; }),
    Flag("training.saved.kv_expanded", [](P* p) { return &p->training.saved.kv_expanded; }),
    Other("training.extra_fp32_logit_copies",
          [](const Json& v, const Reading& r, P* p) {
            int64_t n = 0;
            if (!Int(v, 0, 8, r, &n)) return false;
            p->training.extra_fp32_logit_copies = static_cast<int>(n);
            return true;
          }),
    Flag("training.buckets.copy_for_allreduce",
         [](P* p) { return &p->training.buckets.copy_for_allreduce; }),
    Num(
        "training.buckets.bucket_elements",
        [](P* p) { return &p->training.buckets.bucket_elements; }, 0, 1e12),
    Num(
        "training.buckets.reduce_elements",
        [](P* p) { return &p->training.buckets.reduce_elements; }, 0, 1e12),
    Num(
        "training.buckets.reduce_elements_per_rank",
        [](P* p) { return &p->training.buckets.reduce_elements_per_rank; }, 0, 1e12),
    Flag("training.buckets.single_unless_overlapped",
         [](P* p) { return &p->training.buckets.single_unless_overlapped; }),
    Num(
        "training.gather.prefetch_elements",
        [](P* p) { return &p->training.gather.prefetch_elements; }, 0, 1e12),
    Flag("training.gather.unsharded_under_pp",
         [](P* p) { return &p->training.gather.unsharded_under_pp; }),
    Flag("training.residency.kept_between_steps",
         [](P* p) { return &p->training.residency.kept_between_steps; }),
    Flag("training.residency.kept_between_steps_zero3",
         [](P* p) { return &p->training.residency.kept_between_steps_zero3; }),
    Flag("training.residency.buckets_kept_between_steps",
         [](P* p) { return &p->training.residency.buckets_kept_between_steps; }),
    Flag("training.overlap.grad_reduce", [](P* p) { return &p->training.overlap.grad_reduce; }),
    Flag("training.overlap.param_gather", [](P* p) { return &p->training.overlap.param_gather; }),
    Flag("engine.expert_parallel", [](P* p) { return &p->engine.expert_parallel; }),
    Other("engine.kv_budget", SetKvBudget),
    Num(
        "engine.memory_fraction", [](P* p) { return &p->engine.memory_fraction; }, 0, 1),
    Other("engine.graph_bytes", [](const Json& v, const Reading& r,
                                   P* p) { return Bytes(v, r, &p->engine.graph_bytes); }),
    Other("engine.reserve",
          [](const Json& v, const Reading& r, P* p) { return Reserve(v, r, &p->engine.reserve); }),
    Other("engine.caps",
          [](const Json& v, const Reading& r, P* p) { return Caps(v, r, &p->engine.caps); }),
    Other("engine.first_tier_generation",
          [](const Json& v, const Reading& r, P* p) {
            return Text(v, r, &p->engine.first_tier_generation);
          }),
    Count(
        "engine.block_tokens", [](P* p) { return &p->engine.block_tokens; }, 0, 1 << 16),
    Flag("engine.profile_run", [](P* p) { return &p->engine.profile_run; }),
    Num(
        "engine.sampler_bytes_per_logit", [](P* p) { return &p->engine.sampler_bytes_per_logit; },
        0, 1024),
    Count(
        "engine.whole_prompt_min_tokens", [](P* p) { return &p->engine.whole_prompt_min_tokens; },
        0, 1 << 24),
    Count(
        "engine.chunked_above", [](P* p) { return &p->engine.chunked_above; }, 0, 1 << 24),
    Other("engine.older",
          [](const Json& v, const Reading& r, P* p) { return Older(v, r, &p->engine.older); }),
    Flag("engine.layer_split", [](P* p) { return &p->engine.layer_split; }),
    Flag("engine.caching_allocator", [](P* p) { return &p->engine.caching_allocator; }),
    Flag("engine.worst_case_graph", [](P* p) { return &p->engine.worst_case_graph; }),
    Flag("engine.input_embedding_on_host", [](P* p) { return &p->engine.input_embedding_on_host; }),
    Flag("engine.host_layers", [](P* p) { return &p->engine.host_layers; }),
    Num(
        "engine.decode_bytes_per_s_per_sm",
        [](P* p) { return &p->engine.decode_bytes_per_s_per_sm; }, 0, kHuge),
};

const PolicyField* FindField(const std::string& key) {
  for (const PolicyField& f : kPolicyFields) {
    if (key == f.key) return &f;
  }
  return nullptr;
}

bool Set(const PolicyField& f, const Json& v, const Reading& r, StackProfile* p) {
  if (f.flag != nullptr) return Bool(v, r, f.flag(p));
  if (f.number != nullptr) return Number(v, f.min, f.max, r, f.number(p));
  if (f.count != nullptr) {
    return Int(v, static_cast<int64_t>(f.min), static_cast<int64_t>(f.max), r, f.count(p));
  }
  return f.custom(v, r, p);
}

bool ReadSupport(const Json& j, const Reading& r, StackSupport* s) {
  Members m(j, r);
  bool ok = true;
  if (const Json* b = m.Get("backends")) {
    static const std::pair<const char*, uint8_t> kBackends[] = {
        {"cuda", kCuda}, {"rocm", kRocm}, {"gaudi", kGaudi}, {"ascend", kAscend}, {"xpu", kXpu}};
    s->backends = 0;
    if (!b->is_array() || b->empty()) {
      m.At("backends").Fail("must be a list of cuda, rocm, gaudi, ascend, xpu");
      ok = false;
    } else {
      for (const Json& name : *b) {
        bool known = false;
        for (const auto& [n, bit] : kBackends) {
          if (name.is_string() && name.get<std::string>() == n) {
            s->backends = static_cast<uint8_t>(s->backends | bit);
            known = true;
          }
        }
        if (!known) {
          m.At("backends").Fail("is not a platform: " + Show(name));
          ok = false;
        }
      }
    }
  }
  if (const Json* c = m.Get("min_cuda_cc"))
    ok = Number(*c, 0, 20, m.At("min_cuda_cc"), &s->min_cuda_cc) && ok;
  if (const Json* c = m.Get("min_cuda_cc_since"))
    ok = Text(*c, m.At("min_cuda_cc_since"), &s->min_cuda_cc_since) && ok;
  if (const Json* c = m.Get("earlier_min_cuda_cc")) {
    ok = Number(*c, 0, 20, m.At("earlier_min_cuda_cc"), &s->earlier_min_cuda_cc) && ok;
  }
  if (const Json* g = m.Get("rocm_generations")) {
    if (!g->is_array() || g->size() > s->rocm_generations.size()) {
      m.At("rocm_generations").Fail("must be at most 6 generations");
      ok = false;
    } else {
      for (size_t i = 0; i < g->size(); ++i) {
        ok = Text((*g)[i], m.At("rocm_generations"), &s->rocm_generations[i]) && ok;
      }
    }
  }
  if (const Json* v = m.Get("version")) ok = Text(*v, m.At("version"), &s->version) && ok;
  for (const auto& [key, code, text] :
       {std::tuple{"rocm_note", &s->rocm_note_code, &s->rocm_note},
        std::tuple{"plugin_note", &s->plugin_note_code, &s->plugin_note}}) {
    if (const Json* note = m.Get(key)) {
      const Reading at = m.At(key);
      Members n(*note, at);
      const Json* c = n.Get("code");
      const Json* t = n.Get("text");
      ok = c != nullptr && t != nullptr && Text(*c, n.At("code"), code) &&
           Text(*t, n.At("text"), text) && ok;
      n.RejectUnknown();
    }
  }
  if (const Json* src = m.Get("source")) ok = Text(*src, m.At("source"), &s->source) && ok;
  m.RejectUnknown();
  return ok;
}

bool ReadProfile(const Json& j, const Reading& r, StackProfile* p) {
  Members m(j, r);
  bool ok = true;
  const Json* id = m.Get("id");
  const Json* name = m.Get("name");
  const Json* serving = m.Get("serving");
  ok = id != nullptr && Text(*id, m.At("id"), &p->id) && ok;
  ok = name != nullptr && Text(*name, m.At("name"), &p->name) && ok;
  ok = serving != nullptr && Bool(*serving, m.At("serving"), &p->serving) && ok;
  if (const Json* needs = m.Get("needs_cuda_or_rocm")) {
    const Reading at = m.At("needs_cuda_or_rocm");
    Members v(*needs, at);
    const Json* value = v.Get("value");
    v.Get("source");
    ok = value != nullptr && Bool(*value, v.At("value"), &p->needs_cuda_or_rocm) && ok;
    v.RejectUnknown();
  }
  if (const Json* support = m.Get("support"))
    ok = ReadSupport(*support, m.At("support"), &p->support) && ok;
  if (const Json* policy = m.Get("policy")) {
    const Reading at = m.At("policy");
    if (!policy->is_object()) {
      at.Fail("must be an object of policy values");
      ok = false;
    } else {
      for (const auto& [key, entry] : policy->items()) {
        const Reading e{r.ctx, at.path + "/" + PointerToken(key)};
        const PolicyField* field = FindField(key);
        if (field == nullptr) {
          e.Fail("is not a policy value the physics reads (stacks/policy.h)");
          ok = false;
          continue;
        }
        Members v(entry, e);
        const Json* value = v.Get("value");
        const Json* source = v.Get("source");
        if (source == nullptr || !source->is_string() || source->get<std::string>().empty()) {
          e.Fail("needs its source");
          ok = false;
        }
        const Json* unit = v.Get("unit");
        if (value == nullptr) {
          e.Fail("needs its value");
          ok = false;
        } else if (unit != nullptr) {
          ok = Set(*field, Json{{"value", *value}, {"unit", *unit}}, v.At("value"), p) && ok;
        } else {
          ok = Set(*field, *value, v.At("value"), p) && ok;
        }
        v.RejectUnknown();
      }
    }
  }
  if (const Json* notes = m.Get("notes")) {
    if (!notes->is_array() || notes->size() > p->sources.size()) {
      m.At("notes").Fail("must be at most 6 sentences");
      ok = false;
    } else {
      for (size_t i = 0; i < notes->size(); ++i)
        ok = Text((*notes)[i], m.At("notes"), &p->sources[i]) && ok;
    }
  }
  m.RejectUnknown();
  return ok;
}

}  // namespace

bool ReadStacks(std::string_view text, std::vector<StackProfile>* out, Diagnostics* errors) {
  const size_t before = errors->size();
  const auto doc = ParseJson(text, "stacks.json", errors);
  if (!doc) return false;
  const ReadContext ctx{errors, nullptr};
  const Reading top{ctx, ""};
  Members m(*doc, top);
  const Json* version = m.Get("schema_version");
  if (version == nullptr || *version != 1) top.Fail("schema_version must be 1");
  m.Get("read");
  m.Get("about");
  const Json* stacks = m.Get("stacks");
  out->clear();
  if (stacks == nullptr || !stacks->is_array()) {
    m.At("stacks").Fail("must be the list of profiles");
  } else {
    for (size_t i = 0; i < stacks->size(); ++i) {
      StackProfile p;
      ReadProfile((*stacks)[i], {ctx, "/stacks/" + std::to_string(i)}, &p);
      out->push_back(p);
    }
  }
  m.RejectUnknown();
  return errors->size() == before;
}

const std::vector<StackProfile>& Stacks() {
  static const std::vector<StackProfile> all = [] {
    std::vector<StackProfile> out;
    Diagnostics errors;
    // The file is compiled in and checked by the tests (CTest stacks_schema and the unit
    // tests): a problem here is a build defect, and no profile is better than a wrong one.
    if (!ReadStacks(EmbeddedStacksJson(), &out, &errors)) out.clear();
    return out;
  }();
  return all;
}

const StackProfile* FindStack(std::string_view id) {
  for (const StackProfile& s : Stacks()) {
    if (id == s.id) return &s;
  }
  return nullptr;
}

std::vector<std::pair<std::string, std::string>> StackValueSources(std::string_view id) {
  std::vector<std::pair<std::string, std::string>> out;
  Diagnostics errors;
  const auto doc = ParseJson(EmbeddedStacksJson(), "stacks.json", &errors);
  if (!doc || !doc->contains("stacks")) return out;
  for (const Json& s : doc->at("stacks")) {
    if (s.value("id", "") != id || !s.contains("policy")) continue;
    for (const auto& [key, entry] : s.at("policy").items())
      out.emplace_back(key, entry.value("source", ""));
  }
  return out;
}

}  // namespace gpuplan::json_io
