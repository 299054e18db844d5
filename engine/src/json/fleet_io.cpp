// SPDX-License-Identifier: MIT
#include "json/fleet_io.h"

#include <algorithm>
#include <iterator>

#include "core/version.h"
#include "json/request_io.h"
#include "json/result_io.h"

namespace gpuplan::json_io {
namespace {

constexpr size_t kMaxWorkloads = 16;

// Each workload's request is an ordinary plan request, read by the same reader; its errors are
// re-rooted under /workloads/<i>/request.
bool ReadWorkload(const Json& v, size_t i, const LoadedCatalog& catalog, const ReadContext& ctx,
                  FleetWorkload* w, Json* norm) {
  const std::string at = "/workloads/" + std::to_string(i);
  Fields r(&v, at, ctx, norm);
  if (!r.ok()) return false;
  w->name = r.String("name", 100).value_or("workload " + std::to_string(i + 1));
  (*norm)["name"] = w->name;
  const Json* request = r.Raw("request");
  if (request == nullptr) {
    ctx.Error("missing_field", at + "/request", "each workload needs a plan request");
    r.RejectUnknown();
    return false;
  }
  ParsedRequest parsed;
  Diagnostics errors;
  if (!ParseRequest(request->dump(), catalog, /*require_gpu=*/false, &parsed, &errors)) {
    for (const Diagnostic& d : errors) ctx.Error(d.code, at + "/request" + d.path, d.message);
    r.RejectUnknown();
    return false;
  }
  w->request = parsed.request;
  (*norm)["request"] = parsed.normalized;
  const Workload& wl = w->request.setup.workload;
  w->online = !wl.IsTraining() && wl.mode == InferenceMode::kOnline;
  if (w->online) {
    if (const Json* curve = r.Raw("concurrency_by_hour")) {
      bool good = curve->is_array() && curve->size() == 24;
      for (size_t h = 0; good && h < 24; ++h) {
        good = (*curve)[h].is_number() && (*curve)[h].get<double>() >= 0 &&
               (*curve)[h].get<double>() <= 1e7;
        if (good) w->concurrency_by_hour[h] = (*curve)[h].get<double>();
      }
      if (!good) {
        ctx.Error("out_of_range", at + "/concurrency_by_hour",
                  "must be 24 numbers from 0 to 10^7: the concurrent requests in each hour");
      }
      (*norm)["concurrency_by_hour"] = *curve;
    } else {
      // No curve: the request's concurrency all day.
      w->concurrency_by_hour.fill(static_cast<double>(wl.concurrency));
      r.Default("concurrency_by_hour",
                Json(std::vector<double>(24, static_cast<double>(wl.concurrency))));
    }
  } else {
    w->every_days = r.NumberOr("every_days", 1, 0.01, 3650);
    if (!wl.IsTraining()) {
      const auto n = r.Number("requests_per_run", 1, 1e12);
      if (!n) {
        ctx.Error("missing_field", at + "/requests_per_run",
                  "an offline inference workload needs the sequences each run generates");
      }
      w->requests_per_run = n.value_or(0);
    }
  }
  r.RejectUnknown();
  return true;
}

Json ShareJson(const FleetShare& s) {
  Json out = {{"name", s.name},
              {"online", s.online},
              {"setup", s.setup},
              {"cards_at_peak", s.cards_at_peak},
              {"card_hours_per_day", s.card_hours_per_day},
              {"jobs_per_card", s.jobs_per_card}};
  if (s.online) {
    out["cards_by_hour"] = s.cards_by_hour;
  } else {
    out["run_s"] = s.run_s;
  }
  return out;
}

void ReadWorkloads(Fields* top, const LoadedCatalog& catalog, const ReadContext& ctx,
                   ParsedFleet* out) {
  const Json* list = top->Raw("workloads");
  if (list == nullptr || !list->is_array() || list->empty() || list->size() > kMaxWorkloads) {
    ctx.Error(list == nullptr ? "missing_field" : "out_of_range", "/workloads",
              "must be a list of 1 to 16 workloads, each {name, request, every_days | "
              "requests_per_run | concurrency_by_hour}");
    return;
  }
  Json& norm = out->normalized["workloads"] = Json::array();
  for (size_t i = 0; i < list->size(); ++i) {
    FleetWorkload w;
    Json one = Json::object();
    if (ReadWorkload((*list)[i], i, catalog, ctx, &w, &one)) out->fleet.workloads.push_back(w);
    norm.push_back(one);
  }
}

// Money: the user's currency and exchange rate, and their own price list.
void ReadMoney(Fields* top, const LoadedCatalog& catalog, const ReadContext& ctx,
               ParsedFleet* out) {
  FleetMoney& money = out->fleet.money;
  if (const Json* c = top->Raw("currency")) {
    Fields cur(c, "/currency", ctx, &out->normalized["currency"]);
    money.currency = cur.String("code", 8).value_or("USD");
    money.per_usd = cur.NumberOr("per_usd", 1, 1e-6, 1e6);
    cur.RejectUnknown();
  }
  if (const Json* prices = top->Raw("prices")) {
    if (!prices->is_object()) {
      ctx.Error("wrong_type", "/prices", "must be an object of card id -> price per card-hour");
    } else {
      ReadCardNumbers(*prices, "/prices", catalog, ctx, 1e7, "a price per card-hour from 0 to 10^7",
                      &money.hourly);
      out->normalized["prices"] = *prices;
    }
  }
}

// Buying the cards. Returns the one purchase price given for every card, -1 when none was (a
// price per card id is read into the ownership).
double ReadOwnership(const Json& own, const LoadedCatalog& catalog, const ReadContext& ctx,
                     ParsedFleet* out) {
  double purchase_for_all = -1;
  Fields o(&own, "/ownership", ctx, &out->normalized["ownership"]);
  FleetOwnership& w = out->fleet.ownership;
  // One price for one card type, or {card id: price} for several: one figure for an L4 and a
  // B200 alike would rank nothing.
  const Json* price = o.Raw("purchase_per_card");
  const std::string at = "/ownership/purchase_per_card";
  auto good = [](const Json& v) {
    return v.is_number() && v.get<double>() >= 0 && v.get<double>() <= 1e9;
  };
  if (price == nullptr) {
    ctx.Error("missing_field", at, "is needed to price owning");
  } else if (price->is_object()) {
    ReadCardNumbers(*price, at, catalog, ctx, 1e9, "a price from 0 to 10^9", &w.purchase);
  } else if (good(*price)) {
    purchase_for_all = price->get<double>();
  } else {
    ctx.Error("out_of_range", at,
              "must be a price from 0 to 10^9, or {card id: price}, got " + Show(*price));
  }
  out->normalized["ownership"]["purchase_per_card"] = price != nullptr ? *price : Json(nullptr);
  w.given = price != nullptr;
  w.years = o.NumberOr("years", 3, 0.25, 30);
  w.power_per_kwh = o.NumberOr("power_per_kwh", 0, 0, 1e4);
  w.pue = o.NumberOr("pue", 1.4, 1, 5);
  o.RejectUnknown();
  return purchase_for_all;
}

// The cards to consider, and one card cap for every workload of the fleet.
void ReadConstraints(const Json& c, const LoadedCatalog& catalog, const ReadContext& ctx,
                     ParsedFleet* out) {
  Fields cons(&c, "/constraints", ctx, &out->normalized["constraints"]);
  if (const Json* gpus = cons.Raw("gpus")) {
    if (!gpus->is_array() || gpus->empty() || gpus->size() > 4096) {
      ctx.Error("wrong_type", "/constraints/gpus", "must be a list of catalog card ids");
    } else {
      for (size_t i = 0; i < gpus->size(); ++i) {
        const Json& id = (*gpus)[i];
        const GpuSpec* g = id.is_string() ? catalog.FindGpu(id.get<std::string>()) : nullptr;
        if (g == nullptr) {
          ctx.Error("unknown_gpu", "/constraints/gpus/" + std::to_string(i),
                    "is not a card in catalog " + catalog.version + ", got " + Show(id));
        } else {
          out->cards.push_back(*g);
        }
      }
      out->normalized["constraints"]["gpus"] = *gpus;
    }
  }
  if (const auto max = cons.Int("max_gpus", 1, 65536)) {
    for (FleetWorkload& w : out->fleet.workloads) w.request.constraints.max_gpus = *max;
  }
  cons.RejectUnknown();
}

}  // namespace

bool ParseFleet(std::string_view text, const LoadedCatalog& catalog, ParsedFleet* out,
                Diagnostics* errors) {
  const size_t before = errors->size();
  auto doc = ParseJson(text, "the fleet request", errors);
  if (!doc) return false;
  const ReadContext ctx{errors, nullptr};
  Fields top(&*doc, "", ctx, &out->normalized);
  if (!top.ok()) return false;
  ReadWorkloads(&top, catalog, ctx, out);
  out->fleet.growth = top.NumberOr("growth", 1, 0.01, 100);
  ReadMoney(&top, catalog, ctx, out);
  double purchase_for_all = -1;
  if (const Json* own = top.Raw("ownership"))
    purchase_for_all = ReadOwnership(*own, catalog, ctx, out);
  if (const Json* c = top.Raw("constraints")) ReadConstraints(*c, catalog, ctx, out);
  if (out->cards.empty()) out->cards = catalog.gpus;
  if (purchase_for_all >= 0) {
    if (out->cards.size() != 1) {
      ctx.Error(
          "ambiguous", "/ownership/purchase_per_card",
          "one price fits one card type: give constraints.gpus one card, or {card id: price}");
    } else {
      out->fleet.ownership.purchase[out->cards.front().id] = purchase_for_all;
    }
  }
  top.RejectUnknown();
  return errors->size() == before;
}

Json FleetToJson(const ParsedFleet& pf, const FleetResult& r, const std::string& catalog_version) {
  Json options = Json::array();
  for (const FleetOption& o : r.options) {
    Json shares = Json::array();
    std::transform(o.shares.begin(), o.shares.end(), std::back_inserter(shares), ShareJson);
    Json cost = nullptr;
    if (o.priced || o.tco) {
      cost = {{"currency", pf.fleet.money.currency},
              {"own_per_month", o.own_per_month},
              {"own_basis", o.tco ? "ownership" : "rental_price"},
              {"rent_per_month", o.priced ? Json(o.rent_per_month) : Json(nullptr)}};
      if (o.tco) {
        cost["purchase_per_month"] = o.purchase_per_month;
        cost["power_per_month"] = o.power_per_month;
      }
    }
    options.push_back({{"gpu", o.gpu.id},
                       {"name", o.gpu.name},
                       {"workloads", shares},
                       {"serving_pool",
                        {{"peak_cards", o.serving_peak_cards},
                         {"min_cards", o.serving_min_cards},
                         {"burst_cards", o.serving_peak_cards - o.serving_min_cards},
                         {"card_hours_per_day", o.serving_card_hours_per_day},
                         {"utilization", o.serving_utilization}}},
                       {"batch_pool",
                        {{"cards", o.batch_cards},
                         {"card_hours_per_day", o.batch_card_hours_per_day},
                         {"utilization", o.batch_utilization},
                         {"idle_hours_per_card_per_day",
                          o.batch_cards > 0 ? 24 * (1 - o.batch_utilization) : 0}}},
                       {"owned_cards", o.owned_cards},
                       {"share_pools", Notes({o.share_verdict})[0]},
                       {"cost", cost}});
  }
  Json rejected = Json::array();
  std::transform(r.rejected.begin(), r.rejected.end(), std::back_inserter(rejected),
                 [](const FleetRejection& x) -> Json {
                   return {{"gpu", x.gpu_id}, {"workload", x.workload}, {"reason", x.reason}};
                 });
  return {{"request_normalized", pf.normalized},
          {"catalog_version", catalog_version},
          {"engine_version", std::string(kEngineVersion)},
          {"options", options},
          {"rejected", rejected},
          {"advice", Notes(r.advice)}};
}

}  // namespace gpuplan::json_io
