// SPDX-License-Identifier: MIT
// Error bands: how far published measurements have been from the estimate, per
// kind of figure and framework, and the range that puts around each reported figure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "physics/estimate.h"
#include "physics/setup.h"

namespace gpuplan {

/// Predicted / measured over the validation suite's scored cases of one kind: the 5th and 95th
/// percentiles (the extremes under 20 cases).
struct ErrorBand {
  const char* kind;        ///< memory, weights, training, decode
  const char* framework;   ///< "" = every case of the kind
  const char* generation;  ///< a card generation's own band ("" = every generation)
  int cases;
  int groups;
  double low;         ///< predicted / measured, low end
  double high;        ///< predicted / measured, high end
  double median_abs;  ///< median |log(predicted / measured)|
};

/// Every band, as `gpuplan validate` last computed them (catalog/bands.json says when).
const std::vector<ErrorBand>& ErrorBands();
/// The framework's own band of this kind when it has one, else the card generation's; a
/// generation without a band of its own (no or few measurements) gets the kind's band widened
/// to the widest any measured generation has, where the kind has generation bands; else the
/// kind's. Null when the kind has none.
const ErrorBand* BandFor(std::string_view kind, std::string_view framework,
                         std::string_view generation = "");

/// Puts the range of each figure with a band on `e` (whose figures are final): measured =
/// predicted / ratio, so a rate spans [v / high, v / low] and a duration [v x low, v x high].
void AddBands(const Setup& r, Estimate* e);

}  // namespace gpuplan
