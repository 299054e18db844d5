// SPDX-License-Identifier: MIT
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "json/reader.h"
#include "model/hardware.h"
#include "model/model_spec.h"
#include "plan/question.h"

namespace gpuplan::json_io {

/// A model preset of the catalog: its architecture read through the same config.json reader a
/// pasted config goes through.
struct ModelPreset {
  std::string id;
  std::string name;
  std::string hf_repo;  ///< the Hugging Face repository the launch commands name; may be empty
  ModelSpec spec;
  std::string hf_config;                  ///< the config.json the spec was read from, as JSON text
  double params_published = 0;            ///< 0 when the catalog has none
  bool params_published_rounded = false;  ///< only a rounded figure ("7B") is published
};

/// A parsed, validated catalog plus its JSON text for `gpuplan catalog`.
// NOLINTNEXTLINE(bugprone-exception-escape): its members can only throw std::bad_alloc.
struct LoadedCatalog {
  std::string version;
  std::vector<GpuSpec> gpus;  ///< priced for the default market (global)
  std::vector<ModelPreset> models;
  ExchangeRates rates;
  std::set<std::string> markets = {"global"};  ///< every market the catalog names
  Json gpus_json;                              ///< the "gpus" array as shipped
  Json models_json;                            ///< the "models" array as shipped

  const GpuSpec* FindGpu(const std::string& id) const;
  const ModelPreset* FindModel(const std::string& id) const;
};

/// Parses and validates both catalog files; every problem is reported with its JSON pointer
/// (rooted at /gpus or /models) and the result is usable only when no error was added.
LoadedCatalog LoadCatalog(std::string_view gpus_text, std::string_view models_text,
                          Diagnostics* errors);

/// Reads one card (a catalog entry, or an inline `gpu` object in a request).
std::optional<GpuSpec> GpuFromJson(const Json& card, const std::string& path,
                                   const ReadContext& ctx);

/// Returns the catalog ids closest to `id` for a "did you mean" hint (at most three).
std::string NearestIds(const std::string& id, const std::vector<std::string>& ids);

/// The cards a search compares (plan, traffic): constraints.gpus, else the card the request
/// names, else the whole catalog, each priced for the request's market. `r` was read against
/// `cat`, so every id is in it.
std::vector<GpuSpec> CardsToSearch(const Question& r, const LoadedCatalog& cat);

/// Reads `{card id: number}` (constraints.wait_s, fleet prices, purchase prices): each card must
/// be in `cat` and each number in [0, max]; a bad entry is an error at its own path, the rest
/// are kept. `requirement` completes "must be ..." (e.g. "a wait in seconds from 0 to 1e9").
void ReadCardNumbers(const Json& obj, const std::string& path, const LoadedCatalog& cat,
                     const ReadContext& ctx, double max, const std::string& requirement,
                     std::map<std::string, double>* out);

}  // namespace gpuplan::json_io
