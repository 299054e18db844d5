// SPDX-License-Identifier: MIT
// A card's offers, the markets it is sold in and its end of life (catalog `offers`, `markets`,
// `end_of_life`, and the legacy single `price`), and the catalog's exchange rates.
#include "json/supply_io.h"

#include <algorithm>

namespace gpuplan::json_io {
namespace {

bool IsMarketId(const std::string& s) {
  return s.size() >= 2 && s.size() <= 12 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= 'a' && c <= 'z'; });
}

// YYYY-MM or YYYY-MM-DD: the date a price or a rule is stated for. By hand: std::regex
// would add tens of kilobytes to the page's module.
bool IsMonth(const std::string& s) {
  if (s.size() != 7 && s.size() != 10) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const bool dash = i == 4 || i == 7;
    if (dash != (s[i] == '-') || (!dash && (s[i] < '0' || s[i] > '9'))) return false;
  }
  const int month = (s[5] - '0') * 10 + (s[6] - '0');
  const int day = s.size() == 10 ? (s[8] - '0') * 10 + (s[9] - '0') : 1;
  return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

std::string Market(Fields* f, const char* key, const ReadContext& ctx) {
  std::string m = f->String(key, 12).value_or("");
  if (f->Has(key) && !IsMarketId(m) && m != "any") {
    ctx.Error(
        "invalid_value", f->PathOf(key),
        "must be a market id of 2-12 lower-case letters (global, cn, eu, ...), got '" + m + "'");
  }
  return m;
}

std::string Date(Fields* f, const char* key, const ReadContext& ctx, bool required) {
  std::string d = f->String(key, 10).value_or("");
  if (required && !f->Has(key)) {
    ctx.Error("missing_field", f->PathOf(key), "is required: the date the source states");
  } else if (f->Has(key) && !IsMonth(d)) {
    ctx.Error("invalid_value", f->PathOf(key),
              "must be a date YYYY-MM or YYYY-MM-DD, got '" + d + "'");
  }
  return d;
}

std::string Source(Fields* f, const ReadContext& ctx) {
  if (!f->Has("source"))
    ctx.Error("missing_field", f->PathOf("source"), "is required: where the figure is stated");
  return f->String("source", 2000).value_or("");
}

std::optional<Offer> OfferFromJson(const Json& v, const std::string& path, const ReadContext& ctx) {
  Fields f(&v, path, ctx, nullptr);
  if (!f.ok()) return std::nullopt;
  Offer o;
  for (const char* key : {"market", "provider_class", "price", "currency", "unit"}) {
    if (!f.Has(key)) ctx.Error("missing_field", f.PathOf(key), "is required for an offer");
  }
  o.market = Market(&f, "market", ctx);
  o.provider = f.String("provider", 80).value_or("");
  o.provider_class = f.Enum("provider_class", {"hyperscaler_on_demand", "specialty_cloud",
                                               "marketplace", "purchase", "own"})
                         .value_or("");
  o.price = f.Number("price", 0, 1e8).value_or(0);
  o.currency = f.Enum("currency", {"USD", "CNY", "EUR"}).value_or("USD");
  const std::string unit = f.Enum("unit", {"gpu_hour", "card"}).value_or("gpu_hour");
  o.purchase = unit == "card";
  if (o.purchase != (o.provider_class == "purchase") && f.Has("provider_class") && f.Has("unit")) {
    ctx.Error("inconsistent", f.PathOf("unit"),
              "a purchase is priced per card and a rental per gpu_hour");
  }
  o.as_of = Date(&f, "as_of", ctx, true);
  o.source = Source(&f, ctx);
  f.Bool("indicative");
  f.Accept("note");
  f.RejectUnknown();
  return o;
}

}  // namespace

std::shared_ptr<const CardSupply> SupplyFromJson(Fields* r, const ReadContext& ctx) {
  auto s = std::make_shared<CardSupply>();
  bool any = false;
  if (const Json* offers = r->Raw("offers")) {
    any = true;
    const std::string at = r->PathOf("offers");
    if (!offers->is_array()) {
      ctx.Error("wrong_type", at, "must be a list of offers");
    } else {
      for (size_t i = 0; i < offers->size(); ++i) {
        if (auto o = OfferFromJson((*offers)[i], at + "/" + std::to_string(i), ctx)) {
          s->offers.push_back(std::move(*o));
        }
      }
    }
  }
  // The single indicative price of earlier catalogs (and a team's own card): one USD rental
  // that holds in any market.
  if (const Json* price = r->Raw("price"); price != nullptr && !price->is_null()) {
    any = true;
    Fields p(price, r->PathOf("price"), ctx, nullptr);
    Offer o;
    o.market = "any";
    o.provider_class = "own";
    o.currency = "USD";
    o.price = p.Number("usd_per_hour", 0, 10000).value_or(-1);
    o.as_of = p.String("as_of", 40).value_or("");
    o.source = p.String("source", 2000).value_or("");
    p.Bool("indicative");
    p.RejectUnknown();
    if (o.price >= 0) s->offers.push_back(std::move(o));
  }
  if (const Json* m = r->Raw("markets")) {
    any = true;
    Fields f(m, r->PathOf("markets"), ctx, nullptr);
    s->sold_only_in = Market(&f, "sold_only_in", ctx);
    if (const Json* list = f.Raw("restricted")) {
      const std::string at = f.PathOf("restricted");
      if (!list->is_array()) {
        ctx.Error("wrong_type", at, "must be a list of {market, since, rule, source}");
      } else {
        for (size_t i = 0; i < list->size(); ++i) {
          Fields x(&(*list)[i], at + "/" + std::to_string(i), ctx, nullptr);
          if (!x.ok()) continue;
          MarketRestriction mr;
          mr.market = Market(&x, "market", ctx);
          mr.since = Date(&x, "since", ctx, true);
          mr.rule = x.String("rule", 400).value_or("");
          mr.source = Source(&x, ctx);
          x.RejectUnknown();
          s->restricted.push_back(std::move(mr));
        }
      }
    }
    f.Accept("source");
    f.Accept("note");
    f.RejectUnknown();
  }
  if (const Json* e = r->Raw("end_of_life")) {
    any = true;
    Fields f(e, r->PathOf("end_of_life"), ctx, nullptr);
    s->end_of_life_since = Date(&f, "since", ctx, true);
    s->end_of_life_reason = f.String("reason", 400).value_or("");
    s->end_of_life_source = Source(&f, ctx);
    f.RejectUnknown();
  }
  return any ? s : nullptr;
}

ExchangeRates RatesFromJson(const Json* v, const ReadContext& ctx) {
  ExchangeRates rates;
  if (v == nullptr) return rates;
  Fields f(v, "/exchange_rates", ctx, nullptr);
  if (!f.ok()) return rates;
  rates.as_of = Date(&f, "as_of", ctx, true);
  rates.source = Source(&f, ctx);
  if (const Json* per = f.Raw("usd_per_unit")) {
    Fields u(per, "/exchange_rates/usd_per_unit", ctx, nullptr);
    for (const char* c : {"CNY", "EUR"}) {
      if (auto x = u.Number(c, 1e-4, 1e4)) rates.usd_per_unit[c] = *x;
    }
    u.RejectUnknown();
  } else {
    ctx.Error("missing_field", "/exchange_rates/usd_per_unit",
              "is required: {currency: USD per unit}");
  }
  f.RejectUnknown();
  return rates;
}

void CheckCurrencies(const CardSupply& s, const ExchangeRates& rates, const std::string& path,
                     const ReadContext& ctx) {
  for (size_t i = 0; i < s.offers.size(); ++i) {
    if (rates.ToUsd(1, s.offers[i].currency) < 0) {
      ctx.Error(
          "missing_field", path + "/offers/" + std::to_string(i) + "/currency",
          "has no exchange rate in the catalog's exchange_rates (" + s.offers[i].currency + ")");
    }
  }
}

}  // namespace gpuplan::json_io
