// SPDX-License-Identifier: MIT
#include "json/traffic_io.h"

#include <algorithm>
#include <iterator>

#include "core/version.h"

namespace gpuplan::json_io {
namespace {

void ReadLengths(Fields* t, const char* key, const ReadContext& ctx, LengthDistribution* d,
                 Json* norm) {
  const Json* v = t->Raw(key);
  if (v == nullptr) {
    ctx.Error("missing_field", t->PathOf(key), "is required: {\"mean\": tokens, \"p95\": tokens}");
    return;
  }
  Fields f(v, t->PathOf(key), ctx, &(*norm)[key]);
  if (!f.ok()) return;
  const auto mean = f.Number("mean", 1, 1 << 22);
  if (!f.Has("mean")) ctx.Error("missing_field", f.PathOf("mean"), "is required (tokens)");
  d->mean = mean.value_or(0);
  d->p95 = f.NumberOr("p95", d->mean, 1, 1 << 22);
  if (mean && d->p95 < d->mean) {
    ctx.Error("inconsistent", f.PathOf("p95"), "must be at least the mean");
  }
  f.RejectUnknown();
}

}  // namespace

bool ParseTraffic(std::string_view text, const LoadedCatalog& catalog, ParsedTraffic* out,
                  Diagnostics* errors) {
  const size_t before = errors->size();
  auto doc = ParseJson(text, "the request", errors);
  if (!doc) return false;
  if (!doc->is_object() || !doc->contains("traffic")) {
    const ReadContext ctx{errors, nullptr};
    ctx.Error("missing_field", "/traffic",
              "is required: {\"requests_per_s\", \"prompt_tokens\", \"output_tokens\", ...}");
    return false;
  }
  const Json traffic = (*doc)["traffic"];
  doc->erase("traffic");
  if (!ParseRequest(doc->dump(), catalog, /*require_gpu=*/false, &out->base, errors)) return false;
  const ReadContext ctx{errors, &out->base.defaults_applied};
  if (out->base.request.setup.workload.IsTraining()) {
    ctx.Error("invalid_combination", "/workload/kind", "traffic sizing is for inference");
  }
  Fields t(&traffic, "/traffic", ctx, &out->traffic_normalized);
  if (t.ok()) {
    Traffic& tr = out->traffic;
    const auto rps = t.Number("requests_per_s", 1e-6, 1e7);
    if (!t.Has("requests_per_s")) {
      ctx.Error("missing_field", "/traffic/requests_per_s", "is required (requests per second)");
    }
    tr.requests_per_s = rps.value_or(0);
    ReadLengths(&t, "prompt_tokens", ctx, &tr.prompt, &out->traffic_normalized);
    ReadLengths(&t, "output_tokens", ctx, &tr.output, &out->traffic_normalized);
    tr.prefix_cache_hit = t.NumberOr("prefix_cache_hit", 0, 0, 0.99);
    t.RejectUnknown();
  }
  out->cards = CardsToSearch(out->base.request, catalog);
  return errors->size() == before;
}

Json TrafficToJson(const ParsedTraffic& p, const TrafficResult& r,
                   const std::string& catalog_version) {
  const auto money = [](double v) { return v >= 0 ? Json(v) : Json(nullptr); };
  Json options = Json::array();
  for (const TrafficOption& o : r.options) {
    const Parallel& par = o.replica.parallel;
    options.push_back({{"gpu", o.gpu_id},
                       {"name", o.gpu_name},
                       {"replicas", o.replicas},
                       {"gpus_per_replica", o.gpus_per_replica},
                       {"cards", o.cards},
                       {"replica",
                        {{"tp", par.tp},
                         {"pp", par.pp},
                         {"weights", std::string(Name(o.replica.precision.weights))}}},
                       {"concurrency_per_replica", o.concurrency_per_replica},
                       {"requests_per_s_per_replica", o.requests_per_s_per_replica},
                       {"ttft_mean_ms", o.ttft_mean_s * 1e3},
                       {"ttft_p95_ms", o.ttft_p95_s * 1e3},
                       {"tpot_ms", o.tpot_s * 1e3},
                       {"prefill_share", o.prefill_share},
                       {"usd_per_hour", money(o.usd_per_hour)},
                       {"usd_per_million_output_tokens", money(o.usd_per_million_output_tokens)},
                       {"usd_per_million_tokens", money(o.usd_per_million_tokens)}});
  }
  Json rejected = Json::array();
  std::transform(r.rejected.begin(), r.rejected.end(), std::back_inserter(rejected),
                 [](const TrafficRejection& x) {
                   return Json{{"gpu", x.gpu_id}, {"reason", x.reason}};
                 });
  return {{"options", options},
          {"rejected", rejected},
          {"traffic", p.traffic_normalized},
          {"assumptions",
           {"each replica is the plan's for the mean prompt and output; a p95-length sequence "
            "must fit it alone",
            "a replica holding c sequences serves c / (TTFT + output x TPOT') requests per "
            "second (Little's law); TPOT' is the decode step divided by (1 - the share of time "
            "spent prefilling), prefills interleaved as chunked prefill does",
            "the prefix-cache hit rate removes that share of each prompt's prefill; the KV "
            "cache is counted whole (shared prefix blocks would save more)",
            "TTFT is the p95 prompt's prefill without queueing: arrivals in bursts add waiting "
            "time the targets should leave room for"}},
          {"request_normalized", p.base.normalized},
          {"catalog_version", catalog_version},
          {"engine_version", std::string(kEngineVersion)}};
}

}  // namespace gpuplan::json_io
