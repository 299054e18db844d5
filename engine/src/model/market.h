// SPDX-License-Identifier: MIT
// Where a card can be had and at what price, market by market. A price is a fact about one
// market on one date: a Chinese community cloud's CNY rate and a US price index answer
// different buyers, so a card carries a list of offers, each with its market, currency, date and
// source, and a request picks the market it plans for (pricing.market). Export-control SKUs
// (made for one market) and cards restricted from a market are recorded beside the offers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gpuplan {

/// One way to pay for a card (catalog `offers`): a rental per GPU-hour or a purchase per card.
struct Offer {
  /// "global", "cn", ...; "any" for a card's single legacy `price` and a team's own figure,
  /// which hold in whatever market the request names.
  std::string market;
  std::string provider;
  /// hyperscaler_on_demand, specialty_cloud, marketplace, purchase, own
  std::string provider_class;
  std::string currency;  ///< ISO 4217: USD, CNY, EUR
  double price = 0;      ///< per GPU-hour (rental) or per card (purchase), in `currency`
  bool purchase = false;
  std::string as_of;
  std::string source;
};

/// A market the card may not be sold into, and since when, by which rule.
struct MarketRestriction {
  std::string market;
  std::string since;  ///< YYYY-MM
  std::string rule;
  std::string source;
};

/// What the catalog says of where and how a card is had, beyond its physics. Shared between
/// the copies of a card (every Request holds one), so a copy costs no string copies.
struct CardSupply {
  std::vector<Offer> offers;
  std::string sold_only_in;  ///< an export SKU's market ("cn"); empty: no such limit
  std::vector<MarketRestriction> restricted;
  /// End of life: the vendor's toolkits or the stacks no longer support the card.
  std::string end_of_life_since;  ///< YYYY-MM; empty: supported
  std::string end_of_life_reason;
  std::string end_of_life_source;
};

/// USD per unit of each currency, one dated source (catalog `exchange_rates`).
struct ExchangeRates {
  std::map<std::string, double> usd_per_unit = {{"USD", 1.0}};
  std::string as_of;
  std::string source;
  /// USD for `amount` in `currency`; negative when the currency has no rate.
  double ToUsd(double amount, const std::string& currency) const {
    const auto it = usd_per_unit.find(currency);
    return it == usd_per_unit.end() ? -1 : amount * it->second;
  }
};

/// The market a request plans for (pricing.market, pricing.provider_class).
struct MarketChoice {
  std::string market = "global";
  std::string provider_class;  ///< empty: any class
};

/// How a card stands in the chosen market.
enum class MarketStatus : uint8_t {
  kOffered,         ///< sold there, and an offer prices it
  kNoOffer,         ///< sold there, but the catalog has no price for it there
  kOtherMarketSku,  ///< made for another market only (H800, H20: China-market export SKUs)
  kRestricted,      ///< may not be sold into this market (export controls)
};

struct GpuSpec;

/// Prices `g` for `choice`: its usd_per_hour, offer and market_status. Every card a request
/// reads or a plan searches passes through here once, so the physics reads one plain price.
void ApplyMarket(const MarketChoice& choice, const ExchangeRates& rates, GpuSpec* g);

}  // namespace gpuplan
