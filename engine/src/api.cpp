// SPDX-License-Identifier: MIT
#include "gpuplan/api.h"

#include "after/calibration.h"
#include "after/launch.h"
#include "after/script.h"
#include "core/version.h"
#include "json/calibration_io.h"
#include "json/catalog_io.h"
#include "json/figure_writer.h"
#include "json/fleet_io.h"
#include "json/limits_io.h"
#include "json/request_io.h"
#include "json/result_io.h"
#include "json/stacks_io.h"
#include "json/traffic_io.h"
#include "physics/estimate.h"
#include "plan/fleet.h"
#include "plan/limits.h"
#include "plan/planner.h"
#include "plan/traffic.h"

namespace gpuplan {

// NOLINTNEXTLINE(bugprone-exception-escape): its members can only throw std::bad_alloc.
struct Engine::Impl {
  json_io::LoadedCatalog catalog;
  Diagnostics catalog_errors;
};

Engine::Engine(std::string_view gpus_json, std::string_view models_json)
    : impl_(std::make_unique<Impl>()) {
  impl_->catalog = json_io::LoadCatalog(gpus_json, models_json, &impl_->catalog_errors);
  for (auto& e : impl_->catalog_errors) e.code = "catalog_" + e.code;
}

Engine::~Engine() = default;
Engine::Engine(Engine&&) noexcept = default;
Engine& Engine::operator=(Engine&&) noexcept = default;

bool Engine::CatalogOk() const { return impl_->catalog_errors.empty(); }

std::string Engine::CatalogVersion() const { return impl_->catalog.version; }

// Parses a request against the catalog; on failure `*envelope` holds the error answer.
bool Engine::Parse(std::string_view request_json, bool require_gpu, json_io::ParsedRequest* parsed,
                   std::string* envelope) const {
  if (!CatalogOk()) {
    *envelope = json_io::DumpEnvelope(json_io::ErrorEnvelope(impl_->catalog_errors));
    return false;
  }
  Diagnostics errors;
  if (!json_io::ParseRequest(request_json, impl_->catalog, require_gpu, parsed, &errors)) {
    *envelope = json_io::DumpEnvelope(json_io::ErrorEnvelope(errors));
    return false;
  }
  return true;
}

namespace {
// `measured` belongs to calibrate; elsewhere it is said to be unused rather than dropped.
void WarnMeasured(json_io::ParsedRequest* parsed) {
  if (parsed->has_measured) {
    parsed->warnings.push_back(Note{"unused_field", {}, "is read only by calibrate", "/measured"});
  }
}

// The profile whose model-code values describe the program `gpuplan script` writes: it builds
// the model with transformers' own classes, so what its modeling code saves (fp32 norm
// inputs, the loss's logit copies, PEFT's k-bit preparation) is that profile's.
constexpr std::string_view kScriptModelCode = "hf_transformers";

// The setup the measurement program runs, so the estimate it prints beside its figures is the
// estimate of what ran: transformers' modeling code under the program's own loop, which steps
// torch.optim with the request's kernel (its stack's, unless it named one) and trains LoRA
// without autocast (PEFT's fp32 input copies). Serving keeps the request's setup.
Setup ScriptSetup(const Question& q) {
  Setup s = q.setup;
  const StackProfile* model_code = json_io::FindStack(kScriptModelCode);
  if (!s.workload.IsTraining() || model_code == nullptr) return s;
  TrainingOverrides o = q.training;
  o.optimizer_kernel = q.setup.training.optimizer_kernel;
  o.lora_input_copy_bytes = 4;
  UseStack(&s, *model_code, o, q.serving);
  return s;
}
}  // namespace

std::string Engine::Estimate(std::string_view request_json) const {
  json_io::ParsedRequest parsed;
  std::string envelope;
  if (!Parse(request_json, /*require_gpu=*/true, &parsed, &envelope)) return envelope;
  WarnMeasured(&parsed);
  const gpuplan::Estimate e = EstimateSetup(parsed.request.setup);
  const json_io::Json result = json_io::EstimateToJson(parsed, e, impl_->catalog.version);
  return json_io::DumpEnvelope({{"ok", true}, {"result", result}});
}

std::string Engine::Plan(std::string_view request_json, PlanAnswer answer) const {
  json_io::ParsedRequest parsed;
  std::string envelope;
  if (!Parse(request_json, /*require_gpu=*/false, &parsed, &envelope)) return envelope;
  WarnMeasured(&parsed);
  const PlanResult plan =
      gpuplan::Plan(parsed.request, json_io::CardsToSearch(parsed.request, impl_->catalog));
  if (answer == PlanAnswer::kLean) {
    return json_io::LeanPlanEnvelope(parsed, plan, impl_->catalog.version);
  }
  return json_io::DumpEnvelope(
      {{"ok", true}, {"result", json_io::PlanToJson(parsed, plan, impl_->catalog.version)}});
}

std::string Engine::Script(std::string_view request_json) const {
  json_io::ParsedRequest parsed;
  std::string envelope;
  if (!Parse(request_json, /*require_gpu=*/true, &parsed, &envelope)) return envelope;
  const Setup runs = ScriptSetup(parsed.request);
  const gpuplan::Estimate one = EstimateSetup(OneGpu(runs), /*with_levers=*/false);
  const bool several = runs.parallel.gpus > 1;
  // Under torchrun at ZeRO-3 the program keeps LoRA's adapters in the base's dtype: FSDP
  // flattens each unit's tensors into one of a single dtype.
  Setup sharded = runs;
  if (sharded.workload.IsPeft() && sharded.parallel.zero >= 3) {
    sharded.precision.adapters_fp32 = false;
  }
  const gpuplan::Estimate layout =
      several ? EstimateSetup(sharded, /*with_levers=*/false) : gpuplan::Estimate{};
  const json_io::Json result = {
      {"filename", "gpuplan_measure.py"},
      {"script", MeasurementScript(parsed.request, one, several ? &layout : nullptr, Version(),
                                   impl_->catalog.version)}};
  return json_io::DumpEnvelope({{"ok", true}, {"result", result}});
}

std::string Engine::Calibrate(std::string_view request_json) const {
  json_io::ParsedRequest parsed;
  std::string envelope;
  if (!Parse(request_json, /*require_gpu=*/true, &parsed, &envelope)) return envelope;
  if (!parsed.has_measured) {
    return json_io::DumpEnvelope(json_io::ErrorEnvelope(
        {{"missing_field", "/measured",
          "calibrate needs what was measured: peak_allocated_bytes, tokens_per_s, ttft_ms, "
          "tpot_ms or scaling"}}));
  }
  const CalibrationResult c = gpuplan::Calibrate(parsed.request.setup, parsed.measured);
  return json_io::DumpEnvelope(
      {{"ok", true}, {"result", json_io::CalibrationToJson(parsed, c, impl_->catalog.version)}});
}

std::string Engine::Fleet(std::string_view request_json) const {
  if (!CatalogOk()) return json_io::DumpEnvelope(json_io::ErrorEnvelope(impl_->catalog_errors));
  json_io::ParsedFleet parsed;
  Diagnostics errors;
  if (!json_io::ParseFleet(request_json, impl_->catalog, &parsed, &errors)) {
    return json_io::DumpEnvelope(json_io::ErrorEnvelope(errors));
  }
  const FleetResult r = PlanFleet(parsed.fleet, parsed.cards);
  return json_io::DumpEnvelope(
      {{"ok", true}, {"result", json_io::FleetToJson(parsed, r, impl_->catalog.version)}});
}

std::string Engine::Limits(std::string_view request_json) const {
  json_io::ParsedRequest parsed;
  std::string envelope;
  if (!Parse(request_json, /*require_gpu=*/true, &parsed, &envelope)) return envelope;
  const gpuplan::Limits limits = FindLimits(parsed.request.setup);
  const json_io::Json models = json_io::LargestModels(impl_->catalog, parsed);
  return json_io::DumpEnvelope(
      {{"ok", true},
       {"result", json_io::LimitsToJson(parsed, limits, models, impl_->catalog.version)}});
}

std::string Engine::Launch(std::string_view request_json) const {
  json_io::ParsedRequest parsed;
  std::string envelope;
  if (!Parse(request_json, /*require_gpu=*/true, &parsed, &envelope)) return envelope;
  const gpuplan::Estimate e = EstimateSetup(parsed.request.setup, /*with_levers=*/false);
  const gpuplan::Launch l = LaunchFor(parsed.request, e);
  json_io::Json files = json_io::Json::array();
  for (const auto& f : l.files) files.push_back({{"name", f.name}, {"text", f.text}});
  return json_io::DumpEnvelope({{"ok", true},
                                {"result",
                                 {{"framework", l.framework},
                                  {"command", l.command},
                                  {"files", files},
                                  {"notes", l.notes},
                                  {"fits", e.fits},
                                  {"request_normalized", parsed.normalized},
                                  {"engine_version", std::string(Version())}}}});
}

std::string Engine::Traffic(std::string_view request_json) const {
  if (!CatalogOk()) return json_io::DumpEnvelope(json_io::ErrorEnvelope(impl_->catalog_errors));
  json_io::ParsedTraffic parsed;
  Diagnostics errors;
  if (!json_io::ParseTraffic(request_json, impl_->catalog, &parsed, &errors)) {
    return json_io::DumpEnvelope(json_io::ErrorEnvelope(errors));
  }
  const TrafficResult r = SizeTraffic(parsed.base.request, parsed.traffic, parsed.cards);
  return json_io::DumpEnvelope(
      {{"ok", true}, {"result", json_io::TrafficToJson(parsed, r, impl_->catalog.version)}});
}

std::string Engine::Catalog(CatalogPart part) const {
  if (!CatalogOk()) return json_io::DumpEnvelope(json_io::ErrorEnvelope(impl_->catalog_errors));
  json_io::Json out = {{"version", impl_->catalog.version}};
  if (part == CatalogPart::kFigures) {
    out["figures"] = json_io::FigureTableJson();
    return json_io::DumpEnvelope({{"ok", true}, {"result", out}});
  }
  if (part == CatalogPart::kStacks) {
    // The profiles as the engine holds them, each policy value with its source.
    Diagnostics errors;
    const auto stacks = json_io::ParseJson(json_io::EmbeddedStacksJson(), "stacks.json", &errors);
    out["stacks"] = stacks ? stacks->at("stacks") : json_io::Json::array();
    return json_io::DumpEnvelope({{"ok", true}, {"result", out}});
  }
  if (part != CatalogPart::kModels) out["gpus"] = impl_->catalog.gpus_json;
  if (part != CatalogPart::kGpus) out["models"] = impl_->catalog.models_json;
  return json_io::DumpEnvelope({{"ok", true}, {"result", out}});
}

std::string_view Version() { return kEngineVersion; }

}  // namespace gpuplan
