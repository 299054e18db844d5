// SPDX-License-Identifier: MIT
#include "json/result_io.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/version.h"
#include "json/calibration_io.h"
#include "json/figure_writer.h"
#include "plan/wait_or_switch.h"

namespace gpuplan::json_io {
namespace {

// Sizes are whole bytes. Anything beyond 2^53 (9 PB) cannot be an integer in a JavaScript
// number, and anything non-finite is a bug: both become NaN, which DumpEnvelope refuses.
constexpr double kMaxBytes = 9007199254740992.0;

// Too large for an exact integer: +infinity (reported as out of range). Not a number: NaN,
// which only a bug produces (reported as an internal error, so fuzzing and tests catch it).
Json Bytes(double v) {
  if (std::isnan(v)) return std::numeric_limits<double>::quiet_NaN();
  if (!std::isfinite(v) || std::fabs(v) > kMaxBytes) return std::numeric_limits<double>::infinity();
  return static_cast<int64_t>(std::llround(v));
}

Json Levers(const std::vector<Lever>& levers) {
  Json out = Json::array();
  for (const auto& l : levers) {
    out.push_back({{"code", l.code},
                   {"change", {{"path", l.path}, {"value", ParseValue(l.value)}}},
                   {"total_bytes", Bytes(l.total_bytes)},
                   {"total_with_headroom_bytes", Bytes(l.total_with_headroom_bytes)},
                   {"saved_bytes", Bytes(l.saved_bytes)},
                   {"fits", l.fits},
                   {"cost", l.cost},
                   {"time_factor", l.time_factor}});
  }
  return out;
}

// Levers applied together, each with its change; the figures are the combination's.
Json LeverCombinationsJson(const std::vector<LeverCombination>& combos) {
  Json out = Json::array();
  for (const auto& c : combos) {
    Json levers = Json::array();
    for (const Lever& l : c.levers) {
      levers.push_back({{"code", l.code},
                        {"change", {{"path", l.path}, {"value", ParseValue(l.value)}}},
                        {"cost", l.cost}});
    }
    out.push_back({{"levers", levers},
                   {"total_bytes", Bytes(c.total_bytes)},
                   {"total_with_headroom_bytes", Bytes(c.total_with_headroom_bytes)},
                   {"saved_bytes", Bytes(c.saved_bytes)},
                   {"fits", true},
                   {"time_factor", c.time_factor}});
  }
  return out;
}

std::string AttentionKind(const ModelSpec& m) {
  if (m.IsMla()) return "mla";
  if (m.kv_heads == 1 && m.heads > 1) return "mqa";
  if (m.kv_heads < m.heads) return "gqa";
  return "mha";
}

Json ModelJson(const Setup& r, const std::string& preset, const ParamCounts& c) {
  const ModelSpec& m = r.model;
  Json j = {{"name", m.name},
            {"family", m.family},
            {"params_total", c.total},
            {"params_active", c.active},
            {"layers", m.layers},
            {"hidden", m.hidden},
            {"intermediate", m.intermediate},
            {"heads", m.heads},
            {"kv_heads", m.kv_heads},
            {"head_dim", m.head_dim},
            {"vocab", m.vocab},
            {"tied_embeddings", m.tied_embeddings},
            {"attention", AttentionKind(m)},
            {"mlp", m.mlp == MlpKind::kGated ? "gated" : "plain"}};
  if (!preset.empty()) j["preset"] = preset;
  if (m.IsMoe()) {
    j["moe"] = {{"experts", m.moe.experts},
                {"experts_per_token", m.moe.experts_per_token},
                {"expert_intermediate", m.moe.expert_intermediate},
                {"shared_experts", m.moe.shared_experts},
                {"moe_layers", c.moe_layers}};
  }
  return j;
}

// Each banded figure's likely range: {pointer: {low, high, basis}}.
Json BandsJson(const Estimate& e) {
  Json out = Json::object();
  for (const auto& [ptr, b] : e.bands) {
    out[ptr] = {{"low", b.low}, {"high", b.high}, {"basis", std::string(b.basis)}};
  }
  return out;
}

}  // namespace

int Finiteness(const Json& j) {
  if (j.is_number_float()) {
    const double v = j.get<double>();
    return std::isnan(v) ? 2 : (std::isinf(v) ? 1 : 0);
  }
  int worst = 0;
  if (j.is_structured()) {
    for (const auto& v : j) worst = std::max(worst, Finiteness(v));
  }
  return worst;
}

namespace {

Json WaitJson(const WaitOrSwitch& w) {
  Json options = Json::array();
  for (const WaitOption& o : w.options) {
    options.push_back({{"gpu", o.gpu_id},
                       {"count", o.count},
                       {"wait_s", o.wait_s},
                       {"run_s", o.run_s},
                       {"finish_s", o.finish_s},
                       {"finish_high_s", o.finish_high_s},
                       {"usd_total", o.usd_total >= 0 ? Json(o.usd_total) : Json(nullptr)},
                       {"misses_deadline", o.misses_deadline},
                       {"break_even_tokens", o.break_even_tokens}});
  }
  Json verdict = Notes({w.verdict})[0];
  return {{"options", options},
          {"first_to_finish",
           w.options.empty() ? Json(nullptr) : Json(w.options[w.first_finisher].gpu_id)},
          {"chosen", w.options.empty() ? Json(nullptr) : Json(w.options[w.chosen].gpu_id)},
          {"verdict", verdict}};
}

}  // namespace

Json Notes(const std::vector<Note>& notes) {
  Json out = Json::array();
  for (const auto& n : notes) {
    Json params = Json::object();
    for (const auto& [k, v] : n.params) params[k] = v;
    Json note = {{"code", n.code}, {"params", params}, {"message", n.message}};
    if (!n.path.empty()) note["path"] = n.path;
    out.push_back(std::move(note));
  }
  return out;
}

std::array<std::pair<const char*, double>, 7> MemoryParts(const MemoryBreakdown& b) {
  return {{{"activations", b.activations},
           {"buffers", b.buffers},
           {"gradients", b.gradients},
           {"kv_cache", b.kv_cache},
           {"optimizer_states", b.optimizer_states},
           {"runtime", b.runtime},
           {"weights", b.weights}}};
}

namespace {

// The seven parts, each rounded to whole bytes; `total` gets their sum, so a total is exactly
// the sum of the parts shown.
Json RoundedParts(const MemoryBreakdown& b, double* total) {
  Json parts = Json::object();
  for (const auto& [name, bytes] : MemoryParts(b)) {
    parts[name] = Bytes(bytes);
    *total += static_cast<double>(RoundBytes(bytes));
  }
  return parts;
}

}  // namespace

Json EstimateBody(const Setup& r, const std::string& preset, const Estimate& e,
                  const std::vector<Diagnosis>& diagnosis, const std::vector<Note>& request_notes) {
  const MemoryBreakdown& b = e.memory.per_gpu;
  Json detail = Json::object();
  for (const auto& [k, v] : e.memory.detail) detail[k] = Bytes(v);
  const double gpus = static_cast<double>(r.parallel.gpus);
  double total = 0;
  Json parts = RoundedParts(b, &total);
  const double runtime = static_cast<double>(RoundBytes(b.runtime));
  Json memory = {{"per_gpu_bytes", parts},
                 {"total_bytes", Bytes(total)},
                 {"allocated_bytes", Bytes(total - runtime)},
                 {"total_with_headroom_bytes", Bytes(total * (1 + r.headroom))},
                 {"capacity_bytes", Bytes(e.capacity_bytes)},
                 {"headroom", r.headroom},
                 {"fits", e.fits},
                 {"host_ram_bytes", Bytes(e.host_ram_bytes)},
                 {"offloaded_bytes_per_gpu", Bytes(e.memory.offloaded_bytes_per_gpu)},
                 {"pipeline_stage", e.memory.stage},
                 // The rule-of-thumb sanity line: all memory of the job per model parameter.
                 {"bytes_per_parameter",
                  e.total_bytes * gpus / static_cast<double>(std::max<int64_t>(1, e.params.total))},
                 {"detail", detail}};
  Json explain = Json::object();
  for (const auto& [ptr, x] : e.explain) {
    Json inputs = Json::object();
    for (const auto& [k, v] : x.inputs) inputs[k] = v;
    explain[ptr] = {{"formula", x.formula}, {"inputs", inputs}, {"assumptions", x.assumptions}};
  }
  std::vector<Note> warnings = request_notes;
  warnings.insert(warnings.end(), e.warnings.begin(), e.warnings.end());
  return {
      {"model", ModelJson(r, preset, e.params)},
      {"gpu", {{"id", r.gpu.id}, {"name", r.gpu.name}, {"generation", r.gpu.generation}}},
      {"memory", memory},
      {"performance", FiguresJson(e, "/performance/")},
      {"cost", FiguresJson(e, "/cost/")},
      {"reliability", e.has_training ? FiguresJson(e, "/reliability/") : Json(nullptr)},
      {"power", FiguresJson(e, "/power/")},
      {"levers", Levers(e.levers)},
      {"lever_combinations", LeverCombinationsJson(e.lever_combinations)},
      {"diagnosis", DiagnosisJson(diagnosis)},
      {"calibration", {{"applied", r.calibration.Any()}, {"factors", FactorsJson(r.calibration)}}},
      {"framework", e.framework.id.empty() ? Json(nullptr) : FiguresJson(e, "/framework/")},
      {"bands", BandsJson(e)},
      {"infeasible", Notes(e.infeasible)},
      {"warnings", Notes(warnings)},
      {"explain", explain}};
}

Json EstimateToJson(const ParsedRequest& pr, const Estimate& e,
                    const std::string& catalog_version) {
  Json out = EstimateBody(pr.request.setup, pr.request.model_preset, e,
                          DiagnoseEstimate(pr.request.setup, e), pr.warnings);
  out["request_normalized"] = pr.normalized;
  out["defaults_applied"] = pr.defaults_applied;
  out["catalog_version"] = catalog_version;
  out["engine_version"] = std::string(kEngineVersion);
  return out;
}

namespace {

Json SetupJson(const Setup& q) {
  const Parallel& p = q.parallel;
  return {{"gpus", p.gpus},
          {"tp", p.tp},
          {"pp", p.pp},
          {"zero", p.zero},
          {"micro_batch", q.workload.micro_batch},
          {"grad_accum", q.workload.grad_accum},
          {"recompute", std::string(Name(q.techniques.recompute))}};
}

Json AlmostFitJson(const Boxed<AlmostFit>& a) {
  if (!a) return nullptr;
  return {{"count", a->count},
          {"setup", SetupJson(a->setup)},
          {"total_bytes", Bytes(a->total_bytes)},
          {"total_with_headroom_bytes", Bytes(a->total_with_headroom_bytes)},
          {"capacity_bytes", Bytes(a->capacity_bytes)},
          {"short_by_bytes", Bytes(a->total_with_headroom_bytes - a->capacity_bytes)},
          {"levers", Levers(a->levers)}};
}

Json FewestJson(const Boxed<FewestCards>& f) {
  if (!f) return nullptr;
  return {{"count", f->count},
          {"parallel", SetupJson(f->setup)},
          {"time_s", f->time_s},
          {"usd_total", f->usd_total < 0 ? Json(nullptr) : Json(f->usd_total)}};
}

}  // namespace

// Six significant digits: what a table shows is three or four, and the bands span tens of
// percent; the 17 digits of a shortest round-trip double are most of a lean plan's bytes.
// A whole number is written as one (no ".0"), and a member that is null is left out.
void RoundFigures(Json* j) {
  if (j->is_number_float()) {
    const double v = SixSignificantDigits(j->get<double>());
    constexpr double kExact = 9007199254740992.0;  // 2^53
    if (std::floor(v) == v && std::fabs(v) < kExact) {
      *j = static_cast<int64_t>(v);
    } else {
      *j = v;
    }
  } else if (j->is_object()) {
    for (auto it = j->begin(); it != j->end();) {
      if (it->is_null()) {
        it = j->erase(it);
      } else {
        RoundFigures(&*it);
        ++it;
      }
    }
  } else if (j->is_array()) {
    for (Json& child : *j) RoundFigures(&child);
  }
}

Json PlanToJson(const ParsedRequest& pr, const PlanResult& plan,
                const std::string& catalog_version) {
  Json recs = Json::array();
  for (const PlanChoice& c : plan.recommendations) {
    const Setup& q = c.request;
    // The plan already chose (no levers).
    const Estimate e = EstimateSetup(q, /*with_levers=*/false, Description::kFull);
    const Parallel& p = q.parallel;
    recs.push_back(
        {{"gpu", q.gpu.id},
         {"count", c.count},
         {"replicas", c.replicas},
         {"parallel",
          {{"gpus", p.gpus},
           {"tp", p.tp},
           {"pp", p.pp},
           {"cp", p.cp},
           {"ep", p.ep},
           {"zero", p.zero},
           {"sequence_parallel", p.sequence_parallel}}},
         {"memory_techniques",
          {{"recompute", std::string(Name(q.techniques.recompute))},
           {"flash_attention", q.techniques.flash_attention},
           {"chunked_loss", q.techniques.chunked_loss}}},
         {"micro_batch", q.workload.IsTraining() ? Json(q.workload.micro_batch) : Json(nullptr)},
         {"grad_accum", q.workload.IsTraining() ? Json(q.workload.grad_accum) : Json(nullptr)},
         {"concurrency_per_replica",
          q.workload.IsTraining() ? Json(nullptr) : Json(q.workload.concurrency)},
         {"precision",
          {{"weights", std::string(Name(q.precision.weights))},
           {"kv_cache", std::string(Name(q.precision.kv_cache))}}},
         {"estimate", EstimateBody(q, pr.request.model_preset, e, DiagnoseEstimate(q, e), {})},
         {"rank_code", c.rank_code},
         {"rank_reason", c.rank_reason},
         {"almost_fits", AlmostFitJson(c.almost_fits)},
         {"fewest_cards", FewestJson(c.fewest_cards)}});
    if (q.serving.gpu_layers >= 0) recs.back()["serving"]["n_gpu_layers"] = q.serving.gpu_layers;
    if (q.serving.cpu_moe_layers >= 0)
      recs.back()["serving"]["n_cpu_moe"] = q.serving.cpu_moe_layers;
  }
  Json out = PlanHead(pr, plan, catalog_version, /*full=*/true);
  out["recommendations"] = std::move(recs);
  return out;
}

Json PlanHead(const ParsedRequest& pr, const PlanResult& plan, const std::string& catalog_version,
              bool full, bool with_rejected) {
  Json normalized = pr.normalized;
  if (plan.global_batch > 0) normalized["workload"]["global_batch"] = plan.global_batch;
  Json out = {
      {"request_normalized", normalized},          {"defaults_applied", pr.defaults_applied},
      {"catalog_version", catalog_version},        {"engine_version", std::string(kEngineVersion)},
      {"answer", full ? "full" : "lean"},          {"advice", Notes(plan.advice)},
      {"setups_evaluated", plan.setups_evaluated}, {"warnings", Notes(pr.warnings)}};
  if (with_rejected) {
    Json rejected = Json::array();
    for (const auto& r : plan.rejected) {
      Json one = {{"gpu", r.gpu_id}, {"code", r.code}, {"reason", r.reason}, {"params", r.params}};
      if (!r.path.empty()) one["path"] = r.path;
      rejected.push_back(std::move(one));
    }
    out["rejected"] = std::move(rejected);
  }
  if (!pr.request.constraints.wait_s.empty() && pr.request.setup.workload.IsTraining()) {
    out["wait_or_switch"] = WaitJson(DecideWaitOrSwitch(pr.request, plan));
  }
  return out;
}

Json ErrorEnvelope(const Diagnostics& errors) {
  Json list = Json::array();
  for (const auto& d : errors) {
    list.push_back({{"code", d.code}, {"path", d.path}, {"message", d.message}});
  }
  return {{"ok", false}, {"errors", list}};
}

std::string RefusedEnvelope(int finiteness) {
  if (finiteness == 2) {
    return ErrorEnvelope({{"internal_not_a_number", "",
                           "the engine computed a figure that is not a number: a bug, please "
                           "report the request"}})
        .dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  if (finiteness == 1) {
    return ErrorEnvelope({{"result_out_of_range", "",
                           "the estimate exceeds 2^53 bytes (9 PB) or overflows: check the "
                           "request's batch, sequence, concurrency and dataset sizes"}})
        .dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  return {};
}

std::string DumpEnvelope(const Json& envelope) {
  const int finiteness = Finiteness(envelope);
  if (finiteness != 0) return RefusedEnvelope(finiteness);
  return envelope.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace gpuplan::json_io
