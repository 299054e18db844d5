// SPDX-License-Identifier: MIT
#include "model/market.h"

#include "model/hardware.h"

namespace gpuplan {

void ApplyMarket(const MarketChoice& choice, const ExchangeRates& rates, GpuSpec* g) {
  g->usd_per_hour.reset();
  g->offer = -1;
  g->market_status = MarketStatus::kNoOffer;
  if (!g->supply) return;
  const CardSupply& s = *g->supply;
  // A card made for another market only is not offered here, whatever a listing says: it
  // stays unpriced, and the plan says why (plan_reasons.cpp).
  if (!s.sold_only_in.empty() && s.sold_only_in != choice.market) {
    g->market_status = MarketStatus::kOtherMarketSku;
    return;
  }
  // The lowest rental in the market (of the requested provider class): what a buyer there
  // would pay; the row names the offer, so its class is never hidden.
  double best = -1;
  for (size_t i = 0; i < s.offers.size(); ++i) {
    const Offer& o = s.offers[i];
    if (o.purchase || (o.market != choice.market && o.market != "any")) continue;
    if (!choice.provider_class.empty() && o.provider_class != choice.provider_class &&
        o.market != "any") {
      continue;
    }
    const double usd = rates.ToUsd(o.price, o.currency);
    if (usd < 0 || (best >= 0 && usd >= best)) continue;
    best = usd;
    g->offer = static_cast<int>(i);
  }
  if (best >= 0) {
    // Sold there, or restricted from sale there but rented out of stock already in the market
    // (cloud fleets of A800s, H800s and RTX 4090s in China): a buyer can sign that offer, and
    // the row says the card is restricted (supply_warnings.cpp).
    g->usd_per_hour = best;
    g->market_status = MarketStatus::kOffered;
    return;
  }
  for (const MarketRestriction& r : s.restricted) {
    if (r.market == choice.market) g->market_status = MarketStatus::kRestricted;
  }
}

}  // namespace gpuplan
