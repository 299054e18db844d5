// SPDX-License-Identifier: MIT
// `gpuplan validate`: the accuracy report against published measurements, the error bands the
// estimate reports (engine/src/error_bands.cpp holds them), and the site's accuracy page.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/api.h"

namespace gpuplan::cli {

/// One case as run: the estimate's figure next to the published one.
struct CaseResult {
  std::string id, group, source, kind, framework, what, notes;
  std::string generation;  ///< the card's (catalog `generation`)
  double predicted = 0;
  double measured = 0;
  bool scored = false;
  bool fitted = false;  ///< its file's cases are the ones the time model's constants fit
};

/// Prints one case file's report; appends its cases to `all`. 0, or 2 when malformed.
int Validate(const Engine& engine, const std::string& path, const std::string& contents,
             std::vector<CaseResult>* all);

/// Error bands over every scored case: predicted / measured per kind (memory, weights,
/// training, decode), per framework and, for time, per card generation where it has 5 cases
/// or more, from each case's
/// leave-one-source-out ratio (its prediction had its own source not been in the fit), with
/// how often a band holds the measurement.
struct Band {
  std::string kind, framework;  ///< framework "" = all
  std::string generation;       ///< a card generation's own band ("" = every generation)
  int cases = 0;
  int groups = 0;
  double low = 1, high = 1;  ///< predicted / measured, leave-one-source-out
  double median_abs = 0;     ///< median |log(predicted / measured)|, leave-one-source-out
  double in_sample = 0;      ///< share of the cases whose measurement this band holds
  /// The same with each source's band built from the other sources only: what a band holds
  /// on data it has not seen. -1 when the kind has one source.
  double held_out = -1;
};
std::vector<Band> Bands(const std::vector<CaseResult>& all);
void PrintBands(const std::vector<CaseResult>& all);

/// The accuracy page: bands, then each group's cases with their sources. Static HTML.
std::string AccuracyPage(const std::vector<CaseResult>& all, std::string_view engine_version,
                         const std::string& catalog_version);

}  // namespace gpuplan::cli
