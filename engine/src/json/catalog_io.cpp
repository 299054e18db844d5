// SPDX-License-Identifier: MIT
#include "json/catalog_io.h"

#include <algorithm>
#include <set>

#include "core/units.h"
#include "json/hf_config.h"
#include "json/supply_io.h"

namespace gpuplan::json_io {
namespace {

bool IsKebabId(const std::string& id) {
  if (id.empty() || id.size() > 64 || id.front() == '-' || id.back() == '-') return false;
  char prev = 0;
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
    if (!ok || (c == '-' && prev == '-')) return false;
    prev = c;
  }
  return true;
}

std::optional<Json> ParseText(std::string_view text, const char* root, Diagnostics* errors) {
  Diagnostics parse_errors;
  // A team's catalog may list thousands of cards: allow 64 MiB, not a request's 8.
  auto doc = ParseJson(text, std::string(root) + ".json", &parse_errors, size_t{64} << 20);
  for (auto& e : parse_errors) errors->push_back(std::move(e));
  if (doc && !doc->is_object()) {
    errors->push_back({"wrong_type", "", std::string(root) + ".json must be an object"});
    return std::nullopt;
  }
  return doc;
}

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::vector<GpuSpec> CardsToSearch(const Question& r, const LoadedCatalog& cat) {
  if (r.constraints.gpus.empty() && !r.setup.gpu.id.empty()) return {r.setup.gpu};
  std::vector<GpuSpec> cards;
  if (r.constraints.gpus.empty()) {
    cards = cat.gpus;
  } else {
    for (const auto& id : r.constraints.gpus) cards.push_back(*cat.FindGpu(id));
  }
  for (GpuSpec& g : cards) ApplyMarket(r.setup.pricing.market, cat.rates, &g);
  return cards;
}

std::string NearestIds(const std::string& id, const std::vector<std::string>& ids) {
  std::vector<std::pair<size_t, std::string>> scored;
  scored.reserve(ids.size());
  for (const auto& candidate : ids) scored.emplace_back(EditDistance(id, candidate), candidate);
  std::sort(scored.begin(), scored.end());
  std::string out;
  for (size_t i = 0; i < scored.size() && i < 3; ++i) {
    out += (i == 0 ? "" : ", ") + scored[i].second;
  }
  return out;
}

const GpuSpec* LoadedCatalog::FindGpu(const std::string& id) const {
  for (const auto& g : gpus) {
    if (g.id == id) return &g;
  }
  return nullptr;
}

const ModelPreset* LoadedCatalog::FindModel(const std::string& id) const {
  for (const auto& m : models) {
    if (m.id == id) return &m;
  }
  return nullptr;
}

std::optional<GpuSpec> GpuFromJson(const Json& card, const std::string& path,
                                   const ReadContext& ctx) {
  const size_t errors_before = ctx.diagnostics->size();
  Fields r(&card, path, ctx, nullptr);
  if (!r.ok()) return std::nullopt;
  GpuSpec g;
  const auto require = [&](const char* key) {
    if (!r.Has(key)) ctx.Error("missing_field", r.PathOf(key), "is required for a card");
  };
  for (const char* key : {"id", "name", "vendor", "mem_bandwidth_gb_per_s", "board_power_w"}) {
    require(key);
  }
  // Volta and Turing have fp16 tensor cores but no bf16: one of the two is enough.
  if (!r.Has("bf16_dense_tflops") && !r.Has("fp16_dense_tflops")) {
    ctx.Error("missing_field", r.PathOf("bf16_dense_tflops"),
              "is required (or fp16_dense_tflops for a card without bf16 units)");
  }
  g.id = r.String("id", 64).value_or("");
  if (r.Has("id") && !g.id.empty() && !IsKebabId(g.id)) {
    ctx.Error("invalid_id", r.PathOf("id"),
              "must be lower-case kebab-case (letters, digits, '-', '.'), got " + Show(card["id"]));
  }
  g.name = r.String("name").value_or("");
  g.vendor = r.Enum("vendor", {"nvidia", "amd", "intel", "huawei", "google", "other"}).value_or("");
  g.generation = r.String("generation", 40).value_or("");
  g.arch = ArchOf(g.generation);
  const auto gib = r.Number("memory_gib", 1, 4096);
  const auto gb = r.Number("memory_gb", 1, 4400);
  if (r.Has("memory_gib") == r.Has("memory_gb")) {
    ctx.Error(r.Has("memory_gib") ? "conflicting_fields" : "missing_field", r.PathOf("memory_gib"),
              "give exactly one of memory_gib (binary, 2^30 bytes) or memory_gb (10^9 bytes)");
  }
  g.memory_bytes = gib ? *gib * kGiB : gb.value_or(0) * kGB;
  // Measured totals sit 0.4-0.8 GiB (1-2.6%) under the nominal size on the cards that have one
  // (RTX 3090 23.58 of 24 GiB, RTX 5090 31.37 of 32, in vLLM's start-up logs): the driver keeps
  // the rest. 0.99 x nominal stands in where no card of the kind was measured.
  const auto usable = r.Number("usable_memory_gib", 0.5, 4096);
  g.usable_memory_bytes = usable ? *usable * kGiB : 0.99 * g.memory_bytes;
  g.usable_memory_given = usable.has_value();
  // A unified pool (Apple silicon, GB10, MI300A) is shared with the CPU and the OS; its
  // usable_memory_gib is the GPU's share (GpuSpec::CapacityBytes).
  g.unified_memory = r.Bool("unified_memory").value_or(false);
  g.inference_only = r.Bool("inference_only").value_or(false);
  if (usable && *usable * kGiB > g.memory_bytes) {
    ctx.Error("inconsistent", r.PathOf("usable_memory_gib"),
              "is above the card's memory: the driver reports at most the nominal size");
  }
  g.mem_bandwidth_bytes_per_s = r.Number("mem_bandwidth_gb_per_s", 1, 100000).value_or(0) * kGB;
  g.sm_count = r.Int("sm_count", 1, 10000).value_or(0);
  g.fp32_flops = r.Number("fp32_tflops", 0.01, 10000).value_or(0) * kTera;
  g.tf32_flops = r.Number("tf32_dense_tflops", 0.01, 100000).value_or(0) * kTera;
  g.bf16_flops = r.Number("bf16_dense_tflops", 0.01, 100000).value_or(0) * kTera;
  g.fp16_flops = r.Number("fp16_dense_tflops", 0.01, 100000).value_or(0) * kTera;
  g.fp8_flops = r.Number("fp8_dense_tflops", 0.01, 100000).value_or(0) * kTera;
  g.int8_ops = r.Number("int8_dense_tops", 0.01, 100000).value_or(0) * kTera;
  g.fp6_flops = r.Number("fp6_dense_tflops", 0.01, 100000).value_or(0) * kTera;
  g.fp4_flops = r.Number("fp4_dense_tflops", 0.01, 100000).value_or(0) * kTera;
  if (const Json* formats = r.Raw("block_scaled")) {
    const std::string at = r.PathOf("block_scaled");
    if (!formats->is_array() || formats->empty() || formats->size() > 4) {
      ctx.Error("wrong_type", at, "must be a list of one to four of mxfp8, mxfp6, mxfp4, nvfp4");
    } else {
      for (size_t i = 0; i < formats->size(); ++i) {
        const Json& f = (*formats)[i];
        const std::string name = f.is_string() ? f.get<std::string>() : std::string();
        const bool known = name == "mxfp8" || name == "mxfp6" || name == "mxfp4" || name == "nvfp4";
        if (!known) {
          ctx.Error("unknown_value", at + "/" + std::to_string(i),
                    "must be mxfp8, mxfp6, mxfp4 or nvfp4, got " + Show(f));
        } else if (std::find(g.block_scaled.begin(), g.block_scaled.end(), name) !=
                   g.block_scaled.end()) {
          ctx.Error("inconsistent", at + "/" + std::to_string(i), "repeats " + name);
        } else {
          g.block_scaled.push_back(name);
        }
      }
    }
  }
  if (g.fp32_flops > 0 && g.bf16_flops > 0 && g.bf16_flops < g.fp32_flops) {
    ctx.Error("inconsistent", r.PathOf("bf16_dense_tflops"),
              "is below fp32_tflops: a dense bf16 tensor-core figure is never below fp32");
  }
  if (g.fp32_flops > 0 && g.fp16_flops > 0 && g.fp16_flops < g.fp32_flops) {
    ctx.Error("inconsistent", r.PathOf("fp16_dense_tflops"),
              "is below fp32_tflops: a dense fp16 tensor-core figure is never below fp32");
  }
  g.board_power_w = r.Number("board_power_w", 1, 5000).value_or(0);
  g.form_factor =
      r.Enum("form_factor", {"sxm", "pcie", "oam", "nvl", "superchip", "board"}).value_or("");
  g.cooling = r.Enum("cooling", {"air", "liquid", "air_or_liquid"}).value_or("air");
  if (const Json* link = r.Raw("intra_node")) {
    Fields l(link, r.PathOf("intra_node"), ctx, nullptr);
    g.intra_node_kind = l.String("kind", 40).value_or("");
    g.intra_node_bytes_per_s = l.Number("gb_per_s_per_direction", 0.1, 10000).value_or(0) * kGB;
    l.RejectUnknown();
  }
  g.gpus_per_node = r.Int("gpus_per_node", 1, 576).value_or(8);
  g.inter_node_bytes_per_s = r.Number("inter_node_gb_per_s_per_gpu", 0.1, 10000).value_or(0) * kGB;
  g.runtime_reserve_bytes = r.Number("runtime_reserve_gib", 0, 64).value_or(1.0) * kGiB;
  g.supply = SupplyFromJson(&r, ctx);
  if (const auto cc = r.Number("compute_capability", 1, 20)) {
    if (g.vendor != "nvidia") {
      ctx.Error("inconsistent", r.PathOf("compute_capability"),
                "is a CUDA figure: only NVIDIA cards have one");
    }
    g.compute_capability = *cc;
  }
  g.release_year = r.Int("release_year", 1990, 2100).value_or(0);
  r.Accept("sources");
  r.Accept("notes");
  r.RejectUnknown();
  if (ctx.diagnostics->size() != errors_before) return std::nullopt;
  return g;
}

LoadedCatalog LoadCatalog(std::string_view gpus_text, std::string_view models_text,
                          Diagnostics* errors) {
  LoadedCatalog cat;
  std::vector<std::string> defaults;
  const ReadContext ctx{errors, nullptr};
  if (auto doc = ParseText(gpus_text, "gpus", errors)) {
    Fields top(&*doc, "", ctx, nullptr);
    top.Int("schema_version", 1, 1);
    cat.version = top.String("catalog_version", 40).value_or("");
    if (!top.Has("catalog_version")) ctx.Error("missing_field", "/catalog_version", "is required");
    cat.rates = RatesFromJson(top.Raw("exchange_rates"), ctx);
    const Json* list = top.Raw("gpus");
    top.RejectUnknown();
    if (list == nullptr || !list->is_array()) {
      ctx.Error("wrong_type", "/gpus", "must be an array of cards");
    } else {
      std::set<std::string> ids;
      for (size_t i = 0; i < list->size(); ++i) {
        const std::string path = "/gpus/" + std::to_string(i);
        auto g = GpuFromJson((*list)[i], path, ctx);
        if (!g) continue;
        if (!ids.insert(g->id).second) {
          ctx.Error("duplicate_id", path + "/id", "repeats the id '" + g->id + "'");
          continue;
        }
        if (g->supply) {
          CheckCurrencies(*g->supply, cat.rates, path, ctx);
          for (const Offer& o : g->supply->offers) cat.markets.insert(o.market);
          if (!g->supply->sold_only_in.empty()) cat.markets.insert(g->supply->sold_only_in);
          for (const auto& m : g->supply->restricted) cat.markets.insert(m.market);
        }
        // Priced for the default market; a request for another re-prices its copies.
        ApplyMarket(MarketChoice{}, cat.rates, &*g);
        cat.gpus.push_back(std::move(*g));
      }
      cat.gpus_json = *list;
    }
  }
  if (auto doc = ParseText(models_text, "models", errors)) {
    Fields top(&*doc, "", ctx, nullptr);
    top.Int("schema_version", 1, 1);
    const Json* list = top.Raw("models");
    top.RejectUnknown();
    if (list == nullptr || !list->is_array()) {
      ctx.Error("wrong_type", "/models", "must be an array of model presets");
    } else {
      std::set<std::string> ids;
      for (size_t i = 0; i < list->size(); ++i) {
        const std::string path = "/models/" + std::to_string(i);
        Fields r(&(*list)[i], path, ctx, nullptr);
        if (!r.ok()) continue;
        ModelPreset preset;
        preset.id = r.String("id", 64).value_or("");
        preset.name = r.String("name").value_or("");
        preset.hf_repo = r.String("hf_repo").value_or("");
        r.String("source", 2000);
        r.String("params_published_source", 2000);
        if (const Json* pub = r.Raw("params_published"); pub != nullptr && !pub->is_null()) {
          r.Number("params_published", 1e6, 1e14);
          preset.params_published = pub->is_number() ? pub->get<double>() : 0;
        }
        preset.params_published_rounded = r.Bool("params_published_rounded").value_or(false);
        r.Accept("notes");
        const Json* hf = r.Raw("hf_config");
        r.RejectUnknown();
        if (preset.id.empty() || !IsKebabId(preset.id)) {
          ctx.Error("invalid_id", path + "/id", "must be a lower-case kebab-case id");
          continue;
        }
        if (hf == nullptr) {
          ctx.Error("missing_field", path + "/hf_config", "is required for a model preset");
          continue;
        }
        std::vector<Note> ignored;
        auto spec = ModelFromHfConfig(*hf, path + "/hf_config", ctx, &ignored);
        if (!spec) continue;
        spec->name = preset.name;
        preset.spec = std::move(*spec);
        preset.hf_config = ConfigText(*hf);
        if (!ids.insert(preset.id).second) {
          ctx.Error("duplicate_id", path + "/id", "repeats the id '" + preset.id + "'");
          continue;
        }
        cat.models.push_back(std::move(preset));
      }
      cat.models_json = *list;
    }
  }
  return cat;
}

void ReadCardNumbers(const Json& obj, const std::string& path, const LoadedCatalog& cat,
                     const ReadContext& ctx, double max, const std::string& requirement,
                     std::map<std::string, double>* out) {
  for (const auto& [id, v] : obj.items()) {
    const std::string at = path + "/" + PointerToken(id);
    if (cat.FindGpu(id) == nullptr) {
      ctx.Error("unknown_gpu", at, "is not a card in catalog " + cat.version);
    } else if (!v.is_number() || !(v.get<double>() >= 0) || v.get<double>() > max) {
      ctx.Error("out_of_range", at, "must be " + requirement + ", got " + Show(v));
    } else {
      (*out)[id] = v.get<double>();
    }
  }
}

}  // namespace gpuplan::json_io
