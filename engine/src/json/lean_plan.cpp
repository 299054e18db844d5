// SPDX-License-Identifier: MIT
// The lean plan answer (docs/contract.md) written straight to text: a row's figures
// go from the estimate to the string with no nlohmann object in between, which was most of a
// re-plan's time (the page re-plans on every keystroke). Keys are written in sorted order, the
// order nlohmann's std::map objects have, so the text is exactly what DumpEnvelope made of the
// same answer built as objects (tests/unit/json/lean_plan_test.cpp holds it to that round trip).
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "json/calibration_io.h"
#include "json/figure_writer.h"
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

// The headline figures a row of options leads with (the table's `headline`); their bands
// travel in the lean plan, the others' in `estimate`.
bool IsHeadline(const std::string& ptr) {
  static const std::vector<std::string> headline = [] {
    std::vector<std::string> out;
    for (const FigureRow& r : FigureTable()) {
      if (r.headline) out.emplace_back(r.pointer);
    }
    return out;
  }();
  return std::find(headline.begin(), headline.end(), ptr) != headline.end();
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
  TextSink sink(w);
  w->Key("cost");
  WriteFigures(&sink, e, "/cost/", Answer::kLean);
  if (!e.framework.id.empty() && e.framework.kv_pool_bytes > 0) {
    w->Key("framework");
    WriteFigures(&sink, e, "/framework/", Answer::kLean);
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
  if (!WriteFigures(&sink, e, "/performance/", Answer::kLean)) {
    w->BeginObject();
    w->EndObject();
  }
  w->Key("power");
  WriteFigures(&sink, e, "/power/", Answer::kLean);
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
