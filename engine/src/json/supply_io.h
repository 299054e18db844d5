// SPDX-License-Identifier: MIT
#pragma once

#include <memory>
#include <string>

#include "json/reader.h"
#include "model/market.h"

namespace gpuplan::json_io {

/// A card's `offers`, `markets`, `end_of_life` and legacy `price` (read from `r`, which
/// accepts them), or null when it has none of them.
std::shared_ptr<const CardSupply> SupplyFromJson(Fields* r, const ReadContext& ctx);

/// The catalog's `exchange_rates` (null: USD only).
ExchangeRates RatesFromJson(const Json* v, const ReadContext& ctx);

/// Each offer's currency has a rate; an error at the offer's path otherwise.
void CheckCurrencies(const CardSupply& s, const ExchangeRates& rates, const std::string& path,
                     const ReadContext& ctx);

}  // namespace gpuplan::json_io
