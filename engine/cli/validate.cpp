// SPDX-License-Identifier: MIT
#include "validate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

namespace gpuplan::cli {
namespace {

using Json = nlohmann::json;

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The case file is user input too: read each member only when it has the expected type.
std::string Text(const Json& o, const char* key, const char* fallback) {
  const auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string(fallback);
}

double Number(const Json& o, const char* key) {
  const auto it = o.find(key);
  return it != o.end() && it->is_number() ? it->get<double>() : 0.0;
}

// GiB for memory sizes, bytes for per-token figures.
std::string Size(double bytes) {
  char buf[32];
  if (bytes < 1048576) {
    std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f", bytes / 1073741824.0);
  }
  return std::string(buf);
}

// The result's figure a case compares with: a named memory figure, or a JSON pointer.
double Predicted(Json& result, const std::string& compare) {
  const Json& mem = result["memory"];
  double pred = Number(mem, "allocated_bytes");
  if (compare == "weights") pred = Number(mem["per_gpu_bytes"], "weights");
  if (compare == "kv_cache_per_token") pred = Number(mem["detail"], "kv_cache.bytes_per_token");
  if (compare == "total") pred = Number(mem, "total_bytes");
  if (!compare.empty() && compare.front() == '/') {
    const Json::json_pointer at(compare);
    pred = result.contains(at) && result[at].is_number() ? result[at].get<double>() : 0.0;
  }
  return pred;
}

std::string KindOf(const std::string& compare) {
  return compare.rfind("/performance/training", 0) == 0    ? "training"
         : compare.rfind("/performance/inference", 0) == 0 ? "decode"
         : compare == "weights"                            ? "weights"
         : compare == "kv_cache_per_token"                 ? "kv_cache"
                                                           : "memory";
}

// Runs one case through the estimate and prints its line. The case as run, when the estimate
// gave its figure.
std::optional<CaseResult> RunCase(const Engine& engine, const Json& c, const std::string& where) {
  const std::string id = Text(c, "id", where.c_str());
  const std::string compare = Text(c, "compare", "allocated");
  // Memory cases give bytes and name a memory figure; the others give a value and the JSON
  // pointer of the result figure it corresponds to.
  const bool sizes = c.contains("measured_bytes");
  const double measured = Number(c, sizes ? "measured_bytes" : "measured_value");
  const std::string env = engine.Estimate(c["request"].dump());
  Json out = Json::parse(env, nullptr, false);
  if (out.is_discarded() || !out.value("ok", false) || measured <= 0) {
    std::printf("%-58s request rejected: %s\n", id.c_str(), env.substr(0, 200).c_str());
    return std::nullopt;
  }
  const double pred = Predicted(out["result"], compare);
  const auto scored_it = c.find("scored");
  const bool scored =
      !(scored_it != c.end() && scored_it->is_boolean() && !scored_it->get<bool>()) &&
      Text(c, "confidence", "high") != "low" && compare != "upper_bound";
  const std::string shown = compare.size() > 18 ? compare.substr(compare.rfind('/') + 1) : compare;
  const auto value = [&](double v) {
    if (sizes) return Size(v);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return std::string(buf);
  };
  std::printf("%-58s %-18s %10s %10s %+7.1f%%%s\n", id.c_str(), shown.substr(0, 18).c_str(),
              value(pred).c_str(), value(measured).c_str(), 100 * (pred / measured - 1),
              scored ? "" : " (not scored)");
  if (pred <= 0) return std::nullopt;
  CaseResult row;
  row.id = id;
  row.group = Text(c, "group", "?");
  row.source = Text(c, "source", "");
  row.framework = c["request"].is_object() ? Text(c["request"], "framework", "") : "";
  row.kind = Text(c, "kind", KindOf(compare).c_str());
  const Json& gpu = out["result"]["gpu"];
  row.generation = gpu.is_object() ? Text(gpu, "generation", "") : "";
  row.what = shown;
  row.notes = Text(c, "notes", "");
  row.predicted = pred;
  row.measured = measured;
  row.scored = scored;
  return row;
}

// Time kinds refit within their kind; every memory kind is one family (no constant fitted).
std::string Family(const std::string& kind) {
  return kind == "training" || kind == "decode" ? kind : "memory";
}

// The scored cases' log ratios, by group and by framework.
struct Errors {
  void Add(const CaseResult& row) {
    const double log_ratio = std::log(row.predicted / row.measured);
    by_group[row.group].push_back(std::fabs(log_ratio));
    signed_by_group[row.group] = Family(row.kind);
    signed_logs[row.group].push_back(log_ratio);
    by_framework[row.framework.empty() ? "(none)" : row.framework].push_back(log_ratio);
  }

  std::map<std::string, std::vector<double>> by_group;
  std::map<std::string, std::string> signed_by_group;  // group -> kind
  std::map<std::string, std::vector<double>> signed_logs;
  std::map<std::string, std::vector<double>> by_framework;  // request.framework -> log ratios
};

// Prints each group's median error; the mean over groups.
double PrintGroups(const Errors& e) {
  std::printf("\n%-40s %6s %22s\n", "group", "cases", "median |log(pred/meas)|");
  double sum = 0;
  for (const auto& [g, errs] : e.by_group) {
    const double med = Median(errs);
    sum += med;
    std::printf("%-40s %6zu %21.1f%%\n", g.c_str(), errs.size(), 100 * med);
  }
  const double mean = e.by_group.empty() ? 0 : sum / static_cast<double>(e.by_group.size());
  std::printf("\nmean over groups: %.1f%%\n", 100 * mean);
  return mean;
}

// Per framework profile: the signed median says whether the engine runs faster or slower
// than the generic model (no profile carries a fitted speed factor).
void PrintFrameworks(const Errors& e) {
  if (e.by_framework.size() <= 1) return;
  std::printf("\n%-40s %6s %22s %14s\n", "framework (request)", "cases", "median |log(pred/meas)|",
              "median bias");
  for (const auto& [f, logs] : e.by_framework) {
    std::vector<double> abs_logs(logs.size());
    std::transform(logs.begin(), logs.end(), abs_logs.begin(),
                   [](double l) { return std::fabs(l); });
    std::printf("%-40s %6zu %21.1f%% %+13.1f%%\n", f.c_str(), logs.size(), 100 * Median(abs_logs),
                100 * std::expm1(Median(logs)));
  }
}

// The fit's scale had `group` not been in it: the median signed log ratio of the other groups of
// its family (each group is one family: training, decode or memory).
double ShiftWithout(const std::map<std::string, std::vector<double>>& logs,
                    const std::map<std::string, std::string>& family, const std::string& group) {
  std::vector<double> others;
  for (const auto& [h, other_logs] : logs) {
    if (h != group && family.at(h) == family.at(group)) {
      others.insert(others.end(), other_logs.begin(), other_logs.end());
    }
  }
  return Median(others);
}

void PrintLeaveOneGroupOut(Errors* e) {
  std::printf("\n%-40s %22s\n", "group (left out)", "median |log| after refit");
  double logo_sum = 0;
  for (const auto& [g, logs] : e->signed_logs) {
    const double shift = ShiftWithout(e->signed_logs, e->signed_by_group, g);
    std::vector<double> errs;
    for (double r : logs) errs.push_back(std::fabs(r - shift));
    const double med = Median(errs);
    logo_sum += med;
    std::printf("%-40s %21.1f%%\n", g.c_str(), 100 * med);
  }
  std::printf("\nleave-one-group-out mean: %.1f%%\n",
              100 * logo_sum / static_cast<double>(std::max<size_t>(1, e->signed_logs.size())));
}

}  // namespace

// Accuracy report. Memory has no constant fitted on its cases, so its leave-one-group-out error
// equals the in-sample one. The time model's efficiencies are fitted on the performance cases
// (the file says "fitted": true); they scale throughput, so each group's leave-one-group-out
// error is measured after rescaling by the median log ratio of the other groups of the same
// kind (training or inference): what the group's error would be had it not been in the fit.
namespace {

// A file of serving engines' start-up logs (tests/reference/engine_logs.json): each log with a
// request is one case per logged figure it checks, grouped by engine. KV tokens are their own
// kind; the engine's memory figures (weights, profile peak, graphs, llama.cpp's buffers) are
// another, apart from the training peaks.
Json CasesFromLogs(const Json& logs) {
  Json cases = Json::array();
  for (const Json& log : logs) {
    if (!log.is_object() || !log.contains("request") || !log.contains("checks")) continue;
    const std::string engine = Text(log, "engine", "?");
    for (const Json& check : log["checks"]) {
      const std::string compare = Text(check, "compare", "");
      const bool tokens = compare == "/framework/kv_pool_tokens";
      Json c = {{"id", Text(log, "id", "?") + " " + Text(check, "what", "")},
                {"group", engine + "-start-up-logs"},
                {"source", Text(log, "source", "")},
                {"notes", Text(log, "assumed", "")},
                {"compare", compare},
                {"kind", tokens ? "kv_pool" : "engine_memory"},
                {"request", log["request"]}};
      c[tokens ? "measured_value" : "measured_bytes"] = Number(check, "measured");
      cases.push_back(c);
    }
  }
  return cases;
}

}  // namespace

int Validate(const Engine& engine, const std::string& path, const std::string& contents,
             std::vector<CaseResult>* all) {
  Json doc = Json::parse(contents, nullptr, false);
  if (!doc.is_discarded() && doc.contains("logs") && doc["logs"].is_array()) {
    doc["cases"] = CasesFromLogs(doc["logs"]);
  }
  if (doc.is_discarded() || !doc.contains("cases") || !doc["cases"].is_array()) {
    std::fprintf(stderr, "%s: expected {\"cases\": [...]}\n", path.c_str());
    return 2;
  }
  const auto fitted_it = doc.find("fitted");
  const bool fitted = fitted_it != doc.end() && fitted_it->is_boolean() && fitted_it->get<bool>();
  Errors errors;
  std::printf("%-58s %-18s %10s %10s %8s\n", "case", "compare", "predicted", "measured", "error");
  size_t index = 0;
  for (const auto& c : doc["cases"]) {
    const std::string where = path + " case " + std::to_string(index++);
    if (!c.is_object() || !c.contains("request")) {
      std::printf("%-58s not a case object with a request\n", where.c_str());
      continue;
    }
    if (std::optional<CaseResult> row = RunCase(engine, c, where)) {
      row->fitted = fitted;
      all->push_back(*row);
      if (row->scored) errors.Add(*row);
    }
  }
  const double mean = PrintGroups(errors);
  PrintFrameworks(errors);
  if (!fitted) {
    std::printf("leave-one-group-out mean: %.1f%% (no constant is fitted on these cases)\n",
                100 * mean);
    return 0;
  }
  PrintLeaveOneGroupOut(&errors);
  return 0;
}

namespace {

// Each case's log(predicted / measured) had its own source not been in the fit: for the fitted
// time cases the fit's scale moves by the median log ratio of the other sources of the same
// kind (as the leave-one-group-out report above); memory has nothing fitted.
std::vector<double> LeaveOneSourceOut(const std::vector<const CaseResult*>& rows) {
  // A source with cases of two families (training and decode) is one group in each.
  const auto key = [](const CaseResult* r) { return Family(r->kind) + '\n' + r->group; };
  std::map<std::string, std::vector<double>> logs;  // family and group -> signed log ratios
  std::map<std::string, std::string> family;        // family and group -> family
  for (const CaseResult* r : rows) {
    logs[key(r)].push_back(std::log(r->predicted / r->measured));
    family[key(r)] = Family(r->kind);
  }
  std::vector<double> out;
  for (const CaseResult* r : rows) {
    const double own = std::log(r->predicted / r->measured);
    out.push_back(r->fitted ? own - ShiftWithout(logs, family, key(r)) : own);
  }
  return out;
}

// The 5th and 95th percentiles of ratios (nearest rank), or the extremes under 20.
std::pair<double, double> Ends(std::vector<double> ratios) {
  if (ratios.empty()) return {1, 1};
  std::sort(ratios.begin(), ratios.end());
  const size_t n = ratios.size();
  if (n < 20) return {ratios.front(), ratios.back()};
  return {ratios[static_cast<size_t>(std::floor(0.05 * static_cast<double>(n - 1)))],
          ratios[static_cast<size_t>(std::ceil(0.95 * static_cast<double>(n - 1)))]};
}

// Whether a band, widened to contain the figure as the estimate widens it, holds a case whose
// prediction / measurement is `ratio`: measured = predicted / ratio in [v / hi, v / lo].
bool Holds(std::pair<double, double> band, double ratio) {
  return ratio >= std::min(band.first, 1.0) && ratio <= std::max(band.second, 1.0);
}

// A band of one kind (and framework) from its cases' leave-one-source-out ratios, and how
// often it holds them: in sample, and with each source's band built from the others.
Band BandOf(const std::string& kind, const std::string& framework,
            const std::vector<const CaseResult*>& rows, const std::vector<double>& loso,
            const std::string& generation = "") {
  Band b;
  b.kind = kind;
  b.framework = framework;
  b.generation = generation;
  std::vector<double> ratios;
  std::vector<double> abs_logs;
  std::set<std::string> groups;
  for (size_t i = 0; i < rows.size(); ++i) {
    ratios.push_back(std::exp(loso[i]));
    abs_logs.push_back(std::fabs(loso[i]));
    groups.insert(rows[i]->group);
  }
  b.cases = static_cast<int>(rows.size());
  b.groups = static_cast<int>(groups.size());
  std::tie(b.low, b.high) = Ends(ratios);
  b.median_abs = Median(abs_logs);
  const auto in_band = std::count_if(rows.begin(), rows.end(), [&b](const CaseResult* r) {
    return Holds({b.low, b.high}, r->predicted / r->measured);
  });
  b.in_sample = rows.empty() ? 0 : static_cast<double>(in_band) / static_cast<double>(rows.size());
  if (groups.size() < 2) return b;
  int held = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    std::vector<double> others;
    for (size_t j = 0; j < rows.size(); ++j) {
      if (rows[j]->group != rows[i]->group) others.push_back(ratios[j]);
    }
    held += Holds(Ends(others), ratios[i]) ? 1 : 0;
  }
  b.held_out = static_cast<double>(held) / static_cast<double>(rows.size());
  return b;
}

std::string Escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string Pct(double ratio) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100 * (ratio - 1));
  return buf;
}

// Memory figures in GiB, per-token sizes in bytes, the rest as published.
std::string Num(const CaseResult& r, double v) {
  char buf[48];
  if (r.kind == "memory" || r.kind == "weights") {
    std::snprintf(buf, sizeof buf, "%.2f GiB", v / 1073741824.0);
  } else {
    std::snprintf(buf, sizeof buf, "%.4g", v);
  }
  return buf;
}

// The cases bands and the every-source summary are built from: scored, with both figures,
// and not per-token KV sizes (exact counts, not a figure a band goes around).
std::vector<const CaseResult*> BandCases(const std::vector<CaseResult>& all) {
  std::vector<const CaseResult*> scored;
  for (const CaseResult& r : all) {
    if (r.scored && r.predicted > 0 && r.measured > 0 && r.kind != "kv_cache") scored.push_back(&r);
  }
  return scored;
}

}  // namespace

std::vector<Band> Bands(const std::vector<CaseResult>& all) {
  const std::vector<const CaseResult*> scored = BandCases(all);
  const std::vector<double> loso = LeaveOneSourceOut(scored);
  using Rows = std::pair<std::vector<const CaseResult*>, std::vector<double>>;
  std::map<std::string, Rows> by_kind;
  std::map<std::pair<std::string, std::string>, Rows> by_framework;
  std::map<std::pair<std::string, std::string>, Rows> by_generation;
  for (size_t i = 0; i < scored.size(); ++i) {
    const CaseResult& r = *scored[i];
    by_kind[r.kind].first.push_back(&r);
    by_kind[r.kind].second.push_back(loso[i]);
    // Time depends on the card's generation (its kernels' rates): each has its own band.
    if ((r.kind == "training" || r.kind == "decode") && !r.generation.empty()) {
      by_generation[{r.kind, r.generation}].first.push_back(&r);
      by_generation[{r.kind, r.generation}].second.push_back(loso[i]);
    }
    if (r.framework.empty()) continue;
    by_framework[{r.kind, r.framework}].first.push_back(&r);
    by_framework[{r.kind, r.framework}].second.push_back(loso[i]);
  }
  std::vector<Band> out;
  out.reserve(by_kind.size() + by_framework.size());
  for (const auto& [kind, rows] : by_kind) out.push_back(BandOf(kind, "", rows.first, rows.second));
  for (const auto& [key, rows] : by_framework) {
    if (rows.first.size() >= 5) {
      out.push_back(BandOf(key.first, key.second, rows.first, rows.second));
    }
  }
  for (const auto& [key, rows] : by_generation) {
    if (rows.first.size() >= 5) {
      out.push_back(BandOf(key.first, "", rows.first, rows.second, key.second));
    }
  }
  return out;
}

// Every file together, per kind: the mean over sources of each source's median error, in
// sample and leave-one-source-out (the figures docs/accuracy.md states its aims in).
struct Overall {
  std::string kind;
  size_t cases = 0;
  size_t groups = 0;
  double in_sample = 0;  ///< mean over sources of their median |log(pred/meas)|
  double held_out = 0;   ///< the same, each case's ratio leave-one-source-out
};

std::vector<Overall> OverallByKind(const std::vector<CaseResult>& all) {
  const std::vector<const CaseResult*> scored = BandCases(all);
  const std::vector<double> loso = LeaveOneSourceOut(scored);
  // kind -> group -> (|log| in sample, |log| leave-one-source-out)
  std::map<std::string, std::map<std::string, std::pair<std::vector<double>, std::vector<double>>>>
      by_kind;
  for (size_t i = 0; i < scored.size(); ++i) {
    const CaseResult& r = *scored[i];
    auto& g = by_kind[r.kind][r.group];
    g.first.push_back(std::fabs(std::log(r.predicted / r.measured)));
    g.second.push_back(std::fabs(loso[i]));
  }
  std::vector<Overall> out;
  for (const auto& [kind, groups] : by_kind) {
    Overall o;
    o.kind = kind;
    o.groups = groups.size();
    for (const auto& [group, logs] : groups) {
      o.in_sample += Median(logs.first) / static_cast<double>(groups.size());
      o.held_out += Median(logs.second) / static_cast<double>(groups.size());
      o.cases += logs.first.size();
    }
    out.push_back(o);
  }
  return out;
}

void PrintOverall(const std::vector<CaseResult>& all) {
  std::printf("\n%-10s %6s %7s %24s %28s\n", "all files", "cases", "groups",
              "mean of group medians", "leave-one-source-out mean");
  for (const Overall& o : OverallByKind(all)) {
    std::printf("%-10s %6zu %7zu %23.1f%% %27.1f%%\n", o.kind.c_str(), o.cases, o.groups,
                100 * o.in_sample, 100 * o.held_out);
  }
}

// Time kinds per card generation: in sample and each source left out, the mean over the
// generation's sources of their median |log(pred/meas)|.
void PrintGenerations(const std::vector<CaseResult>& all) {
  const std::vector<const CaseResult*> scored = BandCases(all);
  const std::vector<double> loso = LeaveOneSourceOut(scored);
  std::map<std::pair<std::string, std::string>,
           std::map<std::string, std::pair<std::vector<double>, std::vector<double>>>>
      by;
  for (size_t i = 0; i < scored.size(); ++i) {
    const CaseResult& r = *scored[i];
    if (Family(r.kind) == "memory") continue;
    auto& g = by[{r.kind, r.generation.empty() ? "?" : r.generation}][r.group];
    g.first.push_back(std::fabs(std::log(r.predicted / r.measured)));
    g.second.push_back(std::fabs(loso[i]));
  }
  std::printf("\n%-10s %-12s %6s %7s %24s %28s\n", "time", "generation", "cases", "groups",
              "mean of group medians", "leave-one-source-out mean");
  for (const auto& [key, groups] : by) {
    double in = 0;
    double out = 0;
    size_t cases = 0;
    for (const auto& [group, logs] : groups) {
      in += Median(logs.first) / static_cast<double>(groups.size());
      out += Median(logs.second) / static_cast<double>(groups.size());
      cases += logs.first.size();
    }
    std::printf("%-10s %-12s %6zu %7zu %23.1f%% %27.1f%%\n", key.first.c_str(), key.second.c_str(),
                cases, groups.size(), 100 * in, 100 * out);
  }
}

void PrintBands(const std::vector<CaseResult>& all) {
  PrintOverall(all);
  PrintGenerations(all);
  std::printf("\n%-10s %-14s %-12s %6s %7s %12s %12s %14s %10s %10s\n", "band", "framework",
              "generation", "cases", "groups", "pred/meas lo", "pred/meas hi", "median |log|",
              "holds", "held out");
  for (const Band& b : Bands(all)) {
    char held_out[16] = "n/a";
    if (b.held_out >= 0) std::snprintf(held_out, sizeof held_out, "%.0f%%", 100 * b.held_out);
    std::printf("%-10s %-14s %-12s %6d %7d %12.4f %12.4f %13.1f%% %9.0f%% %10s\n", b.kind.c_str(),
                b.framework.empty() ? "(all)" : b.framework.c_str(),
                b.generation.empty() ? "(all)" : b.generation.c_str(), b.cases, b.groups, b.low,
                b.high, 100 * b.median_abs, 100 * b.in_sample, held_out);
  }
  std::printf(
      "(bands from each case's leave-one-source-out ratio; \"holds\": the share of "
      "cases whose measurement the band holds; \"held out\": the same with each "
      "source's band built from the other sources only)\n");
}

std::string AccuracyPage(const std::vector<CaseResult>& all, std::string_view engine_version,
                         const std::string& catalog_version) {
  std::ostringstream h;
  h << "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    << "<title>gpuplan accuracy</title><link rel=\"stylesheet\" href=\"style.css\"></head>\n"
    << "<body><main>\n<h1>How close gpuplan's estimates are to published measurements</h1>\n"
    << "<p>Written by <code>gpuplan validate tests/reference/memory_cases.json "
       "tests/reference/perf_cases.json tests/reference/cases/*.json --html "
       "web/accuracy.html</code> with engine "
    << Escape(std::string(engine_version)) << " and catalog " << Escape(catalog_version)
    << ". Each case is a published measurement (its source is given) run through the "
       "estimate with the setup the source describes. <a href=\"./\">Back to the planner</a>.</p>\n"
    << "<h2>Every source together</h2>\n<p>Per kind of figure: the mean over sources of each "
       "source's median error, in sample and with each case leave-one-source-out (the fitted "
       "time constants refit without its source; memory has nothing fitted).</p>\n"
    << "<div class=\"table-wrap\"><table><thead><tr><th>figure</th><th>scored cases</th>"
       "<th>sources</th><th>in sample</th><th>leave-one-source-out</th></tr></thead><tbody>\n";
  for (const Overall& o : OverallByKind(all)) {
    h << "<tr><td>" << Escape(o.kind) << "</td><td>" << o.cases << "</td><td>" << o.groups
      << "</td><td>" << Pct(std::exp(o.in_sample)) << "</td><td>" << Pct(std::exp(o.held_out))
      << "</td></tr>\n";
  }
  h << "</tbody></table></div>\n"
    << "<h2>Error bands</h2>\n<p>The range the planner shows around a figure: the predicted / "
       "measured ratios of that kind of figure, 5th to 95th percentile (the extremes below 20 "
       "cases), each case's ratio taken leave-one-source-out (as if its source had not been in "
       "the fit). A framework with 5 cases or more has its own, and so, for time, does a card "
       "generation. <em>Holds</em>: the share of the "
       "cases whose measurement the band holds; <em>claims</em>: what a 5th-to-95th percentile "
       "band should hold (90%; all of them below 20 cases); <em>held out</em>: the share it "
       "holds when each source's band is built from the other sources only, what a band holds "
       "on data it has not seen, to read against the claim.</p>\n"
    << "<div class=\"table-wrap\"><table><thead><tr><th>figure</th><th>framework</th>"
       "<th>generation</th><th>cases</th><th>groups</th><th>low</th><th>high</th><th>median "
       "|error|</th>"
       "<th>holds</th><th>claims</th><th>held out</th></tr></thead><tbody>\n";
  for (const Band& b : Bands(all)) {
    h << "<tr><td>" << Escape(b.kind) << "</td><td>"
      << Escape(b.framework.empty() ? "all" : b.framework) << "</td><td>"
      << Escape(b.generation.empty() ? "all" : b.generation) << "</td><td>" << b.cases
      << "</td><td>" << b.groups << "</td><td>" << Pct(b.low) << "</td><td>" << Pct(b.high)
      << "</td><td>" << Pct(std::exp(b.median_abs)) << "</td><td>" << std::lround(100 * b.in_sample)
      << "%</td><td>" << (b.cases >= 20 ? "90%" : "100%") << "</td><td>"
      << (b.held_out < 0 ? std::string("n/a") : std::to_string(std::lround(100 * b.held_out)) + "%")
      << "</td></tr>\n";
  }
  h << "</tbody></table></div>\n";
  std::map<std::string, std::vector<const CaseResult*>> groups;
  for (const CaseResult& r : all) groups[r.group].push_back(&r);
  for (const auto& [group, rows] : groups) {
    std::vector<double> logs;
    for (const CaseResult* r : rows) {
      if (r->scored) logs.push_back(std::fabs(std::log(r->predicted / r->measured)));
    }
    h << "<h2>" << Escape(group) << "</h2>\n<p>" << rows.size() << " cases; "
      << (logs.empty() ? std::string("none scored")
                       : "median |error| " + Pct(std::exp(Median(logs))))
      << ". Source: " << Escape(rows.front()->source)
      << "</p>\n<div class=\"table-wrap\"><table><thead><tr><th>case</th><th>figure</th>"
         "<th>estimate</th><th>measured</th><th>error</th></tr></thead><tbody>\n";
    for (const CaseResult* r : rows) {
      h << "<tr><td title=\"" << Escape(r->notes) << "\">" << Escape(r->id) << "</td><td>"
        << Escape(r->what) << "</td><td>" << Num(*r, r->predicted) << "</td><td>"
        << Num(*r, r->measured) << "</td><td>" << Pct(r->predicted / r->measured)
        << (r->scored ? "" : " (not scored)") << "</td></tr>\n";
    }
    h << "</tbody></table></div>\n";
  }
  h << "</main></body></html>\n";
  return h.str();
}

}  // namespace gpuplan::cli
