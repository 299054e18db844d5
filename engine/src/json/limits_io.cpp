// SPDX-License-Identifier: MIT
#include "json/limits_io.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "core/version.h"
#include "plan/planner.h"

namespace gpuplan::json_io {
namespace {

bool Training(const std::string& kind) { return kind != "inference"; }

// The request for one purpose and model: the asking request's settings that apply to it.
Json PurposeRequest(const ParsedRequest& pr, const std::string& kind) {
  const Json& n = pr.normalized;
  const bool same_class = Training(kind) == pr.request.setup.workload.IsTraining();
  Json q = {{"workload", {{"kind", kind}}}};
  if (same_class && n.contains("workload")) {
    for (const char* key :
         {"seq_len", "micro_batch", "prompt_tokens", "output_tokens", "concurrency", "mode"}) {
      if (n["workload"].contains(key)) q["workload"][key] = n["workload"][key];
    }
    if (n.contains("framework")) q["framework"] = n["framework"];
    if (n.contains("constraints")) {
      for (const char* key : {"ttft_ms", "tpot_ms"}) {
        if (n["constraints"].contains(key)) q["constraints"][key] = n["constraints"][key];
      }
    }
  }
  // The asking request's number formats when the purpose is its own (qlora keeps its 4 bits).
  if (kind == std::string(Name(pr.request.setup.workload.kind)) && n.contains("precision")) {
    q["precision"] = n["precision"];
  }
  return q;
}

}  // namespace

Json LargestModels(const LoadedCatalog& catalog, const ParsedRequest& pr) {
  const Setup& r = pr.request.setup;
  std::vector<std::pair<double, const ModelPreset*>> order(catalog.models.size());
  std::transform(catalog.models.begin(), catalog.models.end(), order.begin(),
                 [](const ModelPreset& m) {
                   return std::make_pair(static_cast<double>(CountParams(m.spec).total), &m);
                 });
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  Json out = Json::array();
  for (const char* kind : {"pretrain", "full_finetune", "lora", "qlora", "inference"}) {
    Json q = PurposeRequest(pr, kind);
    Json found = nullptr;
    for (const auto& [params, m] : order) {
      q["model"] = {{"preset", m->id}};
      ParsedRequest p;
      Diagnostics errors;
      if (!ParseRequest(q.dump(), catalog, /*require_gpu=*/false, &p, &errors)) continue;
      p.request.constraints.max_gpus = r.parallel.gpus;
      p.request.constraints.gpus.clear();
      const PlanResult plan = Plan(p.request, {r.gpu});
      if (plan.recommendations.empty()) continue;
      const PlanChoice& c = plan.recommendations.front();
      found = {{"kind", kind},
               {"model", m->id},
               {"name", m->name},
               {"params", params},
               {"count", c.count},
               {"parallel",
                {{"tp", c.request.parallel.tp},
                 {"pp", c.request.parallel.pp},
                 {"zero", c.request.parallel.zero}}},
               {"weights", std::string(Name(c.request.precision.weights))}};
      break;
    }
    out.push_back(found.is_null() ? Json{{"kind", kind}, {"model", nullptr}} : found);
  }
  return out;
}

Json LimitsToJson(const ParsedRequest& pr, const Limits& l, const Json& models,
                  const std::string& catalog_version) {
  const Setup& r = pr.request.setup;
  Json own = Json::object();
  Json explain = Json::object();
  if (r.workload.IsTraining()) {
    own["max_micro_batch"] = l.max_micro_batch;
    own["max_seq_len"] = l.max_seq_len;
    own["seq_len_at_model_limit"] = l.seq_len_at_model_limit;
    explain["max_micro_batch"] =
        "largest micro-batch whose memory fits with the headroom, at the request's seq_len";
    explain["max_seq_len"] =
        "largest sequence length that fits with the headroom, at the request's micro-batch "
        "(at most the model's context)";
  } else {
    own["max_concurrency"] = l.max_concurrency;
    own["max_context_tokens"] = l.max_context_tokens;
    own["context_at_model_limit"] = l.context_at_model_limit;
    own["max_context_alone"] = l.max_context_alone;
    own["context_alone_at_model_limit"] = l.context_alone_at_model_limit;
    explain["max_concurrency"] =
        "largest number of sequences that fits with the headroom and meets the TTFT/TPOT targets";
    explain["max_context_tokens"] =
        "largest prompt + output per sequence (the output held) at the request's concurrency "
        "that fits and meets the targets (at most the model's context)";
    explain["max_context_alone"] = "the same for one sequence";
  }
  return {{"gpu", {{"id", r.gpu.id}, {"name", r.gpu.name}}},
          {"gpus", r.parallel.gpus},
          {"limits", own},
          {"largest_models", models},
          {"explain", explain},
          {"request_normalized", pr.normalized},
          {"catalog_version", catalog_version},
          {"engine_version", std::string(kEngineVersion)}};
}

}  // namespace gpuplan::json_io
