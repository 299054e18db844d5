// SPDX-License-Identifier: MIT
// Caveats about whether a setup can be had and run, beside the physics: the card in the
// request's market (an export SKU of another market, a card restricted from this one), its end
// of life, and stacks whose support on the card is recent or a vendor's plugin.
#include <cstdlib>

#include "physics/estimate_parts.h"

namespace gpuplan {
namespace {

// "2023-11" as {year, month}, for the page's own words.
std::map<std::string, double> Since(const std::string& date) {
  if (date.size() < 7) return {};
  return {{"since_year", std::atof(date.substr(0, 4).c_str())},
          {"since_month", std::atof(date.substr(5, 2).c_str())}};
}

}  // namespace

void AddSupplyWarnings(const Setup& r, Estimate* e) {
  const GpuSpec& g = r.gpu;
  const auto warn = [e](std::string code, std::map<std::string, double> params, std::string msg,
                        std::string path) {
    e->warnings.push_back(
        Note{std::move(code), std::move(params), std::move(msg), std::move(path)});
  };
  const std::string& market = r.pricing.market.market;
  if (g.supply) {
    const CardSupply& s = *g.supply;
    if (g.market_status == MarketStatus::kOtherMarketSku) {
      warn("card_not_sold_in_market", {},
           g.name + " is made for the " + s.sold_only_in +
               " market only (an export SKU): it is "
               "not sold in the " +
               market +
               " market, so it is neither priced nor "
               "recommended before the cards sold there",
           "/pricing/market");
    }
    for (const MarketRestriction& m : s.restricted) {
      if (m.market != market) continue;
      warn("card_restricted_in_market", Since(m.since),
           g.name + " may not be sold into the " + market + " market since " + m.since + " (" +
               m.rule + ")" +
               (g.market_status == MarketStatus::kOffered
                    ? ": the offer priced here is a rental of cards already there"
                    : ": no offer there, so it is ranked after the cards sold there"),
           "/pricing/market");
    }
    if (!s.end_of_life_since.empty()) {
      warn("end_of_life_card", Since(s.end_of_life_since),
           g.name + " is end of life since " + s.end_of_life_since + ": " + s.end_of_life_reason,
           "/gpu");
    }
  }
  const StackProfile& stack = (*r.stack);
  const uint8_t backend = BackendOf(g);
  const auto note = [&](const StackSupport& s) {
    if (backend == kRocm && s.rocm_note != nullptr) {
      warn(s.rocm_note_code, {}, s.rocm_note, "/framework");
    }
    if ((backend == kGaudi || backend == kAscend) && s.plugin_note != nullptr) {
      warn(s.plugin_note_code, {}, s.plugin_note, "/framework");
    }
  };
  note(stack.support);
  if (NeedsBitsandbytes(r)) note(BitsandbytesSupport());
}

}  // namespace gpuplan
