// SPDX-License-Identifier: MIT
// The engine's façade: JSON text in, an envelope of JSON text out, never an exception.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace gpuplan {

namespace json_io {
struct ParsedRequest;
}  // namespace json_io

/// Which part of the catalog `CatalogJson` prints.
enum class CatalogPart { kAll, kGpus, kModels, kFigures, kStacks };

/// A loaded catalog and the calls that use it. Loading parses and validates the catalog once,
/// so each estimate costs only the request's own work.
class Engine {
 public:
  /// Loads a catalog from the text of gpus.json and models.json. Never throws; problems are
  /// reported by every call as {"ok": false, "errors": [...]}.
  Engine(std::string_view gpus_json, std::string_view models_json);
  ~Engine();
  Engine(Engine&& other) noexcept;
  Engine& operator=(Engine&& other) noexcept;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// `{"ok": true, "result": {...}}` or `{"ok": false, "errors": [{code, path, message}]}`.
  std::string Estimate(std::string_view request_json) const;
  /// How much of each recommendation's estimate a plan carries.
  enum class PlanAnswer {
    kLean,  ///< what the table and sheet show; the rest is one Estimate call away
    kFull,  ///< every recommendation's complete estimate (explain, levers, diagnosis...)
  };
  /// `gpuplan plan`: the request may omit gpu and parallel; constraints bound the search.
  std::string Plan(std::string_view request_json, PlanAnswer answer = PlanAnswer::kLean) const;
  /// `gpuplan script`: `{"filename", "script"}`, a PyTorch program that measures the request's
  /// job on one GPU and prints it next to the engine's estimate (script.h). Needs a `gpu`.
  std::string Script(std::string_view request_json) const;
  /// `gpuplan calibrate`: the request describes the measured setup and carries `measured`;
  /// the answer compares it with the estimate and derives `calibration` factors (calibration.h).
  std::string Calibrate(std::string_view request_json) const;
  /// `gpuplan fleet`: several recurring workloads (training, offline and online inference with
  /// a daily curve) on one pool per card type: pools, utilisation, sharing, cost (fleet.h).
  std::string Fleet(std::string_view request_json) const;
  /// `gpuplan limits`: for the request's card, count and layout, the largest micro-batch and
  /// sequence (training) or concurrency and context (serving) that fit, and the catalog's
  /// largest model per purpose on that many cards (limits.h). Needs a `gpu`.
  std::string Limits(std::string_view request_json) const;
  /// `gpuplan launch`: the command line (and configuration file) that runs the request's
  /// fixed setup in its framework, vLLM or PyTorch FSDP when it names none (launch.h).
  std::string Launch(std::string_view request_json) const;
  /// `gpuplan traffic`: a plan request plus `traffic` (requests per second, prompt and output
  /// length distributions, prefix-cache hit rate): replicas, cards and cost per million tokens
  /// for each card type (traffic.h).
  std::string Traffic(std::string_view request_json) const;
  /// The catalog in use as `{"version", "gpus", "models"}` inside the same envelope.
  std::string Catalog(CatalogPart part) const;
  /// True when the catalog loaded without errors.
  bool CatalogOk() const;
  /// The catalog's version string ("" when it did not load).
  std::string CatalogVersion() const;

 private:
  bool Parse(std::string_view request_json, bool require_gpu, json_io::ParsedRequest* parsed,
             std::string* envelope) const;

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The engine's version (core/version.h, the one source).
std::string_view Version();

}  // namespace gpuplan
