// SPDX-License-Identifier: MIT
// The answer's figures, one row each: where a figure sits (its JSON pointer, also the key of
// its band and its explanation), what it measures, how it is read from an estimate, which
// answers carry it and which error band ranges it. The full and lean writers (json/), the
// bands (error_bands.cpp) and the page's units (web/figures.js, generated from this table)
// all walk it, so adding a figure is adding a row.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "physics/estimate.h"

namespace gpuplan {

/// What a figure measures: how the page formats it.
enum class Unit : uint8_t {
  kBytes,
  kSeconds,
  kMilliseconds,
  kTokensPerSecond,
  kTokens,
  kFlops,         ///< floating-point operations (per token)
  kTflopsPerGpu,  ///< 10^12 operations per second
  kFraction,      ///< 0..1
  kGpuHours,
  kWatts,
  kUsd,
  kUsdPerHour,
  kUsdPerMillionTokens,
  kPrice,  ///< an offer's price in its own currency
  kCount,  ///< a whole number: sequences, nodes, cards
  kText,
  kFlag,
};

/// How a row is written: the same value, as the answer's form for it.
enum class Write : uint8_t {
  kFigure,  ///< a measured double: the lean answer rounds it to six significant digits
  kBytes,   ///< whole bytes
  kInt,
  kBool,
  kText,
};

/// Where a row is written.
enum class Form : uint8_t {
  kBoth,      ///< the full answer and the lean plan's rows
  kFullOnly,  ///< the full answer only (the lean rows leave out what no column shows)
};

/// A figure's value on one estimate. Not `present`: the lean answer leaves it out, the full
/// answer writes null where `null_in_full` (a figure the contract always names), else nothing.
struct FigureValue {
  double number = 0;
  std::string_view text;
  bool present = true;
  bool null_in_full = false;
};

struct FigureRow {
  const char* pointer;
  Unit unit;
  Write write;
  Form form;
  FigureValue (*get)(const Estimate& e);
  /// The error band's kind (error_bands.h) that ranges this figure; null: none.
  const char* band = nullptr;
  /// The band's ratio divides (a rate: estimated / measured > 1 means the truth is lower).
  bool band_rate = false;
  /// A headline figure: its band travels in the lean plan's rows.
  bool headline = false;
};

/// Every row, sorted by pointer key by key (the order nlohmann keeps an object's keys in).
const std::vector<FigureRow>& FigureTable();

/// The rows under `prefix` ("/performance/inference/"), in that order.
std::vector<const FigureRow*> FiguresUnder(std::string_view prefix);

/// The row at `pointer`; null when the table has none.
const FigureRow* FindFigure(std::string_view pointer);

/// The unit's name as web/figures.js gives it ("bytes", "tokens_per_s").
const char* UnitName(Unit u);

}  // namespace gpuplan
