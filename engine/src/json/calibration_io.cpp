// SPDX-License-Identifier: MIT
#include "json/calibration_io.h"

#include <algorithm>
#include <iterator>

#include "core/version.h"
#include "json/result_io.h"

namespace gpuplan::json_io {

void ReadCalibration(const Json* v, const ReadContext& ctx, ParsedRequest* out) {
  if (v == nullptr) return;
  CalibrationFactors& c = out->request.setup.calibration;
  Fields r(v, "/calibration", ctx, &out->normalized["calibration"]);
  // The bounds calibrate itself keeps to (calibration.cpp), with room for hand-set values.
  c.compute = r.NumberOr("compute", 1, 0.01, 20);
  c.bandwidth = r.NumberOr("bandwidth", 1, 0.01, 20);
  c.memory = r.NumberOr("memory", 1, 0.01, 20);
  c.interconnect = r.NumberOr("interconnect", 1, 0.01, 20);
  c.allocator_slack = r.Number("allocator_slack", 0, 1).value_or(-1);
  c.measured_on = r.String("measured_on", 100).value_or("");
  c.measured_peak_bytes = r.Number("measured_peak_bytes", 1, 1e16).value_or(0);
  c.measured_setup = r.String("measured_setup", 40).value_or("");
  r.RejectUnknown();
}

void ReadMeasured(const Json* v, const ReadContext& ctx, ParsedRequest* out) {
  if (v == nullptr) return;
  out->has_measured = true;
  Measurement& m = out->measured;
  Fields r(v, "/measured", ctx, &out->normalized["measured"]);
  m.peak_allocated_bytes = r.Number("peak_allocated_bytes", 1, 1e16).value_or(0);
  m.peak_reserved_bytes = r.Number("peak_reserved_bytes", 1, 1e16).value_or(0);
  m.out_of_memory = r.Bool("out_of_memory").value_or(false);
  m.tokens_per_s = r.Number("tokens_per_s", 1e-6, 1e15).value_or(0);
  m.ttft_ms = r.Number("ttft_ms", 1e-6, 1e9).value_or(0);
  m.tpot_ms = r.Number("tpot_ms", 1e-6, 1e9).value_or(0);
  m.gpu_utilization = r.Number("gpu_utilization", 0, 1).value_or(-1);
  m.gpu_memory_share = r.Number("gpu_memory_share", 0, 1).value_or(-1);
  m.host_ram_share = r.Number("host_ram_share", 0, 1).value_or(-1);
  if (const Json* list = r.Raw("scaling")) {
    if (!list->is_array() || list->size() > 64) {
      ctx.Error("wrong_type", "/measured/scaling",
                "must be an array of at most 64 {gpus, tokens_per_s} points");
    } else {
      Json& norm = out->normalized["measured"]["scaling"] = Json::array();
      for (size_t i = 0; i < list->size(); ++i) {
        Json point = Json::object();
        Fields p(&(*list)[i], "/measured/scaling/" + std::to_string(i), ctx, &point);
        const auto gpus = p.Int("gpus", 1, 65536);
        const auto rate = p.Number("tokens_per_s", 1e-6, 1e15);
        if (!p.Has("gpus") || !p.Has("tokens_per_s")) {
          ctx.Error("missing_field", "/measured/scaling/" + std::to_string(i),
                    "needs both gpus and tokens_per_s");
        }
        p.RejectUnknown();
        if (gpus && rate) m.scaling.push_back({*gpus, *rate});
        norm.push_back(point);
      }
    }
  }
  r.RejectUnknown();
  const bool training = out->request.setup.workload.IsTraining();
  const bool any = m.peak_allocated_bytes > 0 || m.peak_reserved_bytes > 0 || m.out_of_memory ||
                   m.tokens_per_s > 0 || !m.scaling.empty() || m.ttft_ms > 0 || m.tpot_ms > 0 ||
                   m.gpu_utilization >= 0 || m.gpu_memory_share >= 0 || m.host_ram_share >= 0;
  if (!any) {
    ctx.Error("missing_field", "/measured",
              "gives no measurement: add peak_allocated_bytes, "
              "tokens_per_s, ttft_ms, tpot_ms or scaling");
  }
  if (training && (m.ttft_ms > 0 || m.tpot_ms > 0)) {
    ctx.Error("not_applicable", m.ttft_ms > 0 ? "/measured/ttft_ms" : "/measured/tpot_ms",
              "is a serving measurement, but the workload is training");
  }
  if (!training && (m.tokens_per_s > 0 || !m.scaling.empty())) {
    ctx.Error("not_applicable", m.tokens_per_s > 0 ? "/measured/tokens_per_s" : "/measured/scaling",
              "is a training measurement, but the workload is inference (give ttft_ms and "
              "tpot_ms)");
  }
}

Json FactorsJson(const CalibrationFactors& f) {
  Json out = {{"compute", f.compute},
              {"bandwidth", f.bandwidth},
              {"memory", f.memory},
              {"interconnect", f.interconnect}};
  // Absent rather than null or "" when not known, so the object feeds back as a request field.
  if (f.allocator_slack >= 0) out["allocator_slack"] = f.allocator_slack;
  if (!f.measured_on.empty()) out["measured_on"] = f.measured_on;
  if (f.measured_peak_bytes > 0) out["measured_peak_bytes"] = f.measured_peak_bytes;
  if (!f.measured_setup.empty()) out["measured_setup"] = f.measured_setup;
  return out;
}

Json DiagnosisJson(const std::vector<Diagnosis>& list) {
  Json out = Json::array();
  for (const Diagnosis& d : list) {
    Json params = Json::object();
    for (const auto& [k, v] : d.params) params[k] = v;
    Json remedies = Json::array();
    for (const Remedy& r : d.remedies) {
      Json one = {{"code", r.code}, {"message", r.message}};
      if (!r.changes.empty()) {
        Json changes = Json::array();
        std::transform(r.changes.begin(), r.changes.end(), std::back_inserter(changes),
                       [](const Remedy::Change& c) -> Json {
                         return {{"path", c.path}, {"value", ParseValue(c.value)}};
                       });
        one["changes"] = changes;
      }
      if (r.fits >= 0) one["fits"] = r.fits == 1;
      remedies.push_back(std::move(one));
    }
    out.push_back({{"code", d.code},
                   {"basis", d.basis},
                   {"params", params},
                   {"message", d.message},
                   {"remedies", remedies}});
  }
  return out;
}

Json CalibrationToJson(const ParsedRequest& pr, const CalibrationResult& c,
                       const std::string& catalog_version) {
  Json comparisons = Json::array();
  std::transform(c.comparisons.begin(), c.comparisons.end(), std::back_inserter(comparisons),
                 [](const Comparison& x) -> Json {
                   return {{"quantity", x.quantity},     {"estimate_path", x.estimate_path},
                           {"estimated", x.estimated},   {"measured", x.measured},
                           {"error", x.error},           {"within_success_line", x.within},
                           {"calibrated", x.calibrated}, {"calibrated_error", x.calibrated_error}};
                 });
  return {{"request_normalized", pr.normalized},   {"defaults_applied", pr.defaults_applied},
          {"catalog_version", catalog_version},    {"engine_version", std::string(kEngineVersion)},
          {"success_line", kSuccessLine},          {"comparisons", comparisons},
          {"calibration", FactorsJson(c.factors)}, {"notes", Notes(c.notes)},
          {"yardstick", Notes(c.yardstick)},       {"diagnosis", DiagnosisJson(c.diagnosis)},
          {"warnings", Notes(pr.warnings)}};
}

}  // namespace gpuplan::json_io
