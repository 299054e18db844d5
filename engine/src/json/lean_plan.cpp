// SPDX-License-Identifier: MIT
// The lean plan answer (docs/contract.md) written straight to text: a row's figures
// go from the estimate to the string with no nlohmann object in between, which was most of a
// re-plan's time (the page re-plans on every keystroke). Keys are written in sorted order, the
// order nlohmann's std::map objects have, so the text is exactly what DumpEnvelope made of the
// same answer built as objects (tests/unit/json/lean_plan_test.cpp holds it to that round trip).
#include <algorithm>
#include <iterator>
#include <map>

#include "json/calibration_io.h"
#include "json/result_io.h"
#include "json/text_writer.h"

namespace gpuplan::json_io {
namespace {

using Basis = std::map<std::string, std::string>;

// A value built as nlohmann JSON (rare: calibration factors, a lever's new value), rounded as
// a row's figures are.
void WriteRounded(TextWriter* w, Json value) {
  RoundFigures(&value);
  w->NoteFiniteness(Finiteness(value));
  w->Raw(value.dump(-1, ' ', false, Json::error_handler_t::replace));
}

void WriteNotes(TextWriter* w, const std::vector<Note>& notes) {
  w->BeginArray();
  for (const Note& n : notes) {
    w->BeginObject();
    w->Key("code");
    w->String(n.code);
    w->Key("message");
    w->String(n.message);
    w->Key("params");
    w->BeginObject();
    for (const auto& [k, v] : n.params) {
      w->Key(k);
      w->Figure(v);
    }
    w->EndObject();
    if (!n.path.empty()) {
      w->Key("path");
      w->String(n.path);
    }
    w->EndObject();
  }
  w->EndArray();
}

// The headline figures a row of options leads with; their bands travel in the lean plan, the
// others' in `estimate`.
bool IsHeadline(const std::string& ptr) {
  static const char* const kHeadline[] = {"/memory/total_bytes",
                                          "/performance/training/time_s",
                                          "/performance/inference/decode_tokens_per_s_total",
                                          "/performance/inference/max_throughput_tokens_per_s",
                                          "/cost/usd_total",
                                          "/cost/usd_per_million_tokens"};
  return std::any_of(std::begin(kHeadline), std::end(kHeadline),
                     [&ptr](const char* h) { return ptr == h; });
}

// Each band's basis is the same text on every row of a plan, so it is given once (`basis`); a
// row whose basis differs keeps its own.
void WriteBands(TextWriter* w, const Estimate& e, Basis* basis) {
  w->BeginObject();
  for (const auto& [ptr, b] : e.bands) {
    if (!IsHeadline(ptr)) continue;
    w->Key(ptr);
    w->BeginObject();
    const auto known = basis->find(ptr);
    if (known == basis->end()) {
      basis->emplace(ptr, std::string(b.basis));
    } else if (known->second != b.basis) {
      w->Key("basis");
      w->String(b.basis);
    }
    w->Key("high");
    w->Figure(b.high);
    w->Key("low");
    w->Figure(b.low);
    w->EndObject();
  }
  w->EndObject();
}

// Without a price the cost figures are null, so left out.
void WriteCost(TextWriter* w, const Estimate& e) {
  const CostEstimate& c = e.cost;
  w->BeginObject();
  w->Key("market");
  w->String(c.market);
  if (c.priced) {
    w->Key("offer");
    w->BeginObject();
    if (!c.supply || c.offer < 0) {
      w->Key("provider_class");
      w->String("request");
    } else {
      const Offer& o = c.supply->offers[static_cast<size_t>(c.offer)];
      w->Key("as_of");
      w->String(o.as_of);
      w->Key("currency");
      w->String(o.currency);
      w->Key("market");
      w->String(o.market);
      w->Key("price");
      w->Figure(o.price);
      w->Key("provider");
      w->String(o.provider);
      w->Key("provider_class");
      w->String(o.provider_class);
      // The source stays in the full answer and the catalog: a sentence or two on every row
      // was a sixth of the page default's answer.
    }
    w->EndObject();
    w->Key("usd_per_gpu_hour");
    w->Figure(c.usd_per_gpu_hour);
    w->Key("usd_per_hour");
    w->Figure(c.usd_per_hour);
    if (c.usd_per_million_tokens >= 0) {
      w->Key("usd_per_million_tokens");
      w->Figure(c.usd_per_million_tokens);
    }
    if (e.has_training) {
      w->Key("usd_total");
      w->Figure(c.usd_total);
    }
  }
  w->EndObject();
}

// A serving engine's pool (FrameworkJson's figures).
void WriteFramework(TextWriter* w, const FrameworkEstimate& f) {
  const bool serving = f.max_batched_tokens > 0;
  w->BeginObject();
  if (serving) {
    w->Key("engine_bytes");
    w->Figure(f.engine_bytes);
  }
  w->Key("id");
  w->String(f.id);
  if (serving) {
    w->Key("kv_pool_bytes");
    w->Figure(f.kv_pool_bytes);
    w->Key("kv_pool_sequences");
    w->Figure(f.kv_pool_sequences);
    w->Key("kv_pool_tokens");
    w->Figure(f.kv_pool_tokens);
    w->Key("max_batched_tokens");
    w->Int(f.max_batched_tokens);
    if (f.max_seqs > 0) {
      w->Key("max_seqs");
      w->Int(f.max_seqs);
    }
  }
  w->Key("name");
  w->String(f.name);
  w->EndObject();
}

// The seven parts, each in whole bytes, and the totals made of the rounded parts (as
// EstimateBody's).
void WriteMemory(TextWriter* w, const Setup& r, const Estimate& e) {
  double total = 0;
  w->BeginObject();
  w->Key("capacity_bytes");
  w->Bytes(e.capacity_bytes);
  w->Key("fits");
  w->Bool(e.fits);
  w->Key("per_gpu_bytes");
  w->BeginObject();
  for (const auto& [name, bytes] : MemoryParts(e.memory.per_gpu)) {
    w->Key(name);
    w->Bytes(bytes);
    total += static_cast<double>(RoundBytes(bytes));
  }
  w->EndObject();
  w->Key("total_bytes");
  w->Bytes(total);
  w->Key("total_with_headroom_bytes");
  w->Bytes(total * (1 + r.headroom));
  w->EndObject();
}

// The contract's figures; training without the ones that are the same on every row or the
// sheet's only (hardware FLOPs, achieved TFLOPS, the run's tokens).
void WritePerformance(TextWriter* w, const Estimate& e) {
  w->BeginObject();
  if (e.has_serving) {
    const ServingEstimate& s = e.serving;
    const InferencePerf& p = s.at_request;
    w->Key("inference");
    w->BeginObject();
    w->Key("bound");
    w->String(p.compute_bound ? "compute" : "memory");
    w->Key("decode_tokens_per_s_per_seq");
    w->Figure(p.decode_tokens_per_s_per_seq);
    w->Key("decode_tokens_per_s_total");
    w->Figure(p.decode_tokens_per_s_total);
    w->Key("engine_concurrency");
    w->Int(s.engine_concurrency);
    if (s.makespan_s > 0) {
      w->Key("makespan_s");
      w->Figure(s.makespan_s);
    }
    w->Key("max_concurrency");
    w->Int(s.max_concurrency);
    w->Key("max_throughput_tokens_per_s");
    w->Figure(s.max_throughput_tokens_per_s);
    w->Key("meets_targets");
    w->Bool(s.meets_targets);
    w->Key("prefill_tokens_per_s");
    w->Figure(p.prefill_tokens_per_s);
    w->Key("tpot_ms");
    w->Figure(p.tpot_s * 1e3);
    w->Key("ttft_ms");
    w->Figure(p.ttft_s * 1e3);
    w->EndObject();
  }
  if (e.has_training) {
    const TrainingPerf& t = e.training;
    w->Key("training");
    w->BeginObject();
    w->Key("flops_per_token");
    w->Figure(t.flops.model_per_token);
    w->Key("gpu_hours");
    w->Figure(t.gpu_hours);
    w->Key("mfu");
    w->Figure(t.mfu);
    w->Key("scaling_efficiency");
    w->Figure(t.scaling_efficiency);
    w->Key("step_s");
    w->Figure(t.step_s);
    w->Key("time_s");
    w->Figure(t.time_s);
    w->Key("tokens_per_s");
    w->Figure(t.tokens_per_s);
    w->Key("tokens_per_s_per_gpu");
    w->Figure(t.tokens_per_s_per_gpu);
    w->EndObject();
  }
  w->EndObject();
}

// One recommendation's estimate as the lean plan carries it.
void WriteEstimate(TextWriter* w, const Setup& r, const Estimate& e, Basis* basis) {
  w->BeginObject();
  w->Key("bands");
  WriteBands(w, e, basis);
  if (r.calibration.Any()) {
    w->Key("calibration");
    w->BeginObject();
    w->Key("applied");
    w->Bool(true);
    w->Key("factors");
    WriteRounded(w, FactorsJson(r.calibration));
    w->EndObject();
  }
  w->Key("cost");
  WriteCost(w, e);
  if (!e.framework.id.empty() && e.framework.kv_pool_bytes > 0) {
    w->Key("framework");
    WriteFramework(w, e.framework);
  }
  w->Key("gpu");
  w->BeginObject();
  w->Key("name");
  w->String(r.gpu.name);
  w->EndObject();
  if (!e.infeasible.empty()) {
    w->Key("infeasible");
    WriteNotes(w, e.infeasible);
  }
  w->Key("memory");
  WriteMemory(w, r, e);
  w->Key("performance");
  WritePerformance(w, e);
  w->Key("power");
  w->BeginObject();
  w->Key("gpu_watts");
  w->Figure(e.power.gpu_watts);
  w->Key("node_watts");
  w->Figure(e.power.node_watts);
  w->Key("total_watts");
  w->Figure(e.power.total_watts);
  w->EndObject();
  w->Key("warnings");
  WriteNotes(w, e.warnings);
  w->EndObject();
}

// A setup in brief: an almost-fit's or the fewest-cards alternative's.
void WriteSetup(TextWriter* w, const Setup& q) {
  const Parallel& p = q.parallel;
  w->BeginObject();
  w->Key("gpus");
  w->Int(p.gpus);
  w->Key("grad_accum");
  w->Int(q.workload.grad_accum);
  w->Key("micro_batch");
  w->Int(q.workload.micro_batch);
  w->Key("pp");
  w->Int(p.pp);
  w->Key("recompute");
  w->String(Name(q.techniques.recompute));
  w->Key("tp");
  w->Int(p.tp);
  w->Key("zero");
  w->Int(p.zero);
  w->EndObject();
}

void WriteLevers(TextWriter* w, const std::vector<Lever>& levers) {
  w->BeginArray();
  for (const Lever& l : levers) {
    w->BeginObject();
    w->Key("change");
    Json change = {{"path", l.path}, {"value", ParseValue(l.value)}};
    WriteRounded(w, std::move(change));
    w->Key("code");
    w->String(l.code);
    w->Key("cost");
    w->String(l.cost);
    w->Key("fits");
    w->Bool(l.fits);
    w->Key("saved_bytes");
    w->Bytes(l.saved_bytes);
    w->Key("time_factor");
    w->Figure(l.time_factor);
    w->Key("total_bytes");
    w->Bytes(l.total_bytes);
    w->Key("total_with_headroom_bytes");
    w->Bytes(l.total_with_headroom_bytes);
    w->EndObject();
  }
  w->EndArray();
}

void WriteAlmostFit(TextWriter* w, const AlmostFit& a) {
  w->BeginObject();
  w->Key("capacity_bytes");
  w->Bytes(a.capacity_bytes);
  w->Key("count");
  w->Int(a.count);
  w->Key("levers");
  WriteLevers(w, a.levers);
  w->Key("setup");
  WriteSetup(w, a.setup);
  w->Key("short_by_bytes");
  w->Bytes(a.total_with_headroom_bytes - a.capacity_bytes);
  w->Key("total_bytes");
  w->Bytes(a.total_bytes);
  w->Key("total_with_headroom_bytes");
  w->Bytes(a.total_with_headroom_bytes);
  w->EndObject();
}

void WriteFewest(TextWriter* w, const FewestCards& f) {
  w->BeginObject();
  w->Key("count");
  w->Int(f.count);
  w->Key("parallel");
  WriteSetup(w, f.setup);
  w->Key("time_s");
  w->Figure(f.time_s);
  if (f.usd_total >= 0) {
    w->Key("usd_total");
    w->Figure(f.usd_total);
  }
  w->EndObject();
}

void WriteRow(TextWriter* w, const PlanChoice& c, Basis* basis) {
  const Setup& q = c.request;
  const bool training = q.workload.IsTraining();
  // The plan already chose (no levers); a lean row carries no formulas.
  const Estimate e = EstimateSetup(q, /*with_levers=*/false, Description::kNotes);
  const Parallel& p = q.parallel;
  w->BeginObject();
  if (c.almost_fits) {
    w->Key("almost_fits");
    WriteAlmostFit(w, *c.almost_fits);
  }
  if (!training) {
    w->Key("concurrency_per_replica");
    w->Int(q.workload.concurrency);
  }
  w->Key("count");
  w->Int(c.count);
  w->Key("estimate");
  WriteEstimate(w, q, e, basis);
  if (c.fewest_cards) {
    w->Key("fewest_cards");
    WriteFewest(w, *c.fewest_cards);
  }
  w->Key("gpu");
  w->String(q.gpu.id);
  if (training) {
    w->Key("grad_accum");
    w->Int(q.workload.grad_accum);
  }
  w->Key("memory_techniques");
  w->BeginObject();
  w->Key("chunked_loss");
  w->Bool(q.techniques.chunked_loss);
  w->Key("flash_attention");
  w->Bool(q.techniques.flash_attention);
  w->Key("recompute");
  w->String(Name(q.techniques.recompute));
  w->EndObject();
  if (training) {
    w->Key("micro_batch");
    w->Int(q.workload.micro_batch);
  }
  w->Key("parallel");
  w->BeginObject();
  w->Key("cp");
  w->Int(p.cp);
  w->Key("ep");
  w->Int(p.ep);
  w->Key("gpus");
  w->Int(p.gpus);
  w->Key("pp");
  w->Int(p.pp);
  w->Key("sequence_parallel");
  w->Bool(p.sequence_parallel);
  w->Key("tp");
  w->Int(p.tp);
  w->Key("zero");
  w->Int(p.zero);
  w->EndObject();
  w->Key("precision");
  w->BeginObject();
  w->Key("kv_cache");
  w->String(Name(q.precision.kv_cache));
  w->Key("weights");
  w->String(Name(q.precision.weights));
  w->EndObject();
  w->Key("rank_code");
  w->String(c.rank_code);
  w->Key("rank_reason");
  w->String(c.rank_reason);
  w->Key("replicas");
  w->Int(c.replicas);
  if (q.serving.gpu_layers >= 0 || q.serving.cpu_moe_layers >= 0) {
    // What the plan kept in host memory when the whole model did not fit on the cards.
    w->Key("serving");
    w->BeginObject();
    if (q.serving.cpu_moe_layers >= 0) {
      w->Key("n_cpu_moe");
      w->Int(q.serving.cpu_moe_layers);
    }
    if (q.serving.gpu_layers >= 0) {
      w->Key("n_gpu_layers");
      w->Int(q.serving.gpu_layers);
    }
    w->EndObject();
  }
  w->EndObject();
}

// The rejections as PlanHead builds them (keys sorted; params unrounded): a serving plan over
// the catalog rejects most cards, and building them as objects to dump was a tenth of its time.
void WriteRejected(TextWriter* w, const std::vector<PlanRejection>& rejected) {
  w->BeginArray();
  for (const PlanRejection& r : rejected) {
    w->BeginObject();
    w->Key("code");
    w->String(r.code);
    w->Key("gpu");
    w->String(r.gpu_id);
    w->Key("params");
    w->BeginObject();
    for (const auto& [name, value] : r.params) {
      w->Key(name);
      w->Double(value);
    }
    w->EndObject();
    if (!r.path.empty()) {
      w->Key("path");
      w->String(r.path);
    }
    w->Key("reason");
    w->String(r.reason);
    w->EndObject();
  }
  w->EndArray();
}

}  // namespace

std::string LeanPlanEnvelope(const ParsedRequest& pr, const PlanResult& plan,
                             const std::string& catalog_version) {
  // The rows first: they give band_basis, which comes before them in key order.
  std::string rows;
  rows.reserve(1600 * plan.recommendations.size() + 16);
  TextWriter rw(&rows);
  Basis basis;
  rw.BeginArray();
  for (const PlanChoice& c : plan.recommendations) WriteRow(&rw, c, &basis);
  rw.EndArray();

  std::string rejected;
  TextWriter jw(&rejected);
  WriteRejected(&jw, plan.rejected);

  const Json head = PlanHead(pr, plan, catalog_version, /*full=*/false, /*with_rejected=*/false);
  const int finiteness = std::max({rw.Finiteness(), jw.Finiteness(), Finiteness(head)});
  if (finiteness != 0) return RefusedEnvelope(finiteness);

  std::string out;
  out.reserve(rows.size() + 8192);
  TextWriter w(&out);
  w.BeginObject();
  w.Key("ok");
  w.Bool(true);
  w.Key("result");
  w.BeginObject();
  // The head's members in their (sorted) order; band_basis, the rows and the rejections where
  // theirs falls.
  bool basis_written = false;
  bool rows_written = false;
  bool rejected_written = false;
  const auto place = [&](const std::string& next) {
    if (!basis_written && next > "band_basis") {
      w.Key("band_basis");
      w.BeginObject();
      for (const auto& [ptr, text] : basis) {
        w.Key(ptr);
        w.String(text);
      }
      w.EndObject();
      basis_written = true;
    }
    if (!rows_written && next > "recommendations") {
      w.Key("recommendations");
      w.Raw(rows);
      rows_written = true;
    }
    if (!rejected_written && next > "rejected") {
      w.Key("rejected");
      w.Raw(rejected);
      rejected_written = true;
    }
  };
  for (const auto& [key, value] : head.items()) {
    place(key);
    w.Key(key);
    w.Raw(value.dump(-1, ' ', false, Json::error_handler_t::replace));
  }
  place("~");  // after every key
  w.EndObject();
  w.EndObject();
  return out;
}

}  // namespace gpuplan::json_io
