// SPDX-License-Identifier: MIT
#include "physics/error_bands.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "physics/figures.h"

namespace gpuplan {

// The table itself, ErrorBands(), is data: catalog/bands.json, compiled in by
// cmake/EmbedBands.cmake.

namespace {

// Per kind of time figure, the band a card of an unmeasured generation gets: the kind's band
// widened to the lowest low and highest high of every generation's own band. Built once.
const std::vector<ErrorBand>& Envelopes() {
  static const std::vector<ErrorBand> out = [] {
    std::vector<ErrorBand> v;
    for (const ErrorBand& b : ErrorBands()) {
      if (b.framework[0] != '\0' || b.generation[0] != '\0') continue;
      ErrorBand e = b;
      bool any = false;
      for (const ErrorBand& g : ErrorBands()) {
        if (std::strcmp(g.kind, b.kind) != 0 || g.generation[0] == '\0' || g.groups < 2) continue;
        e.low = std::min(e.low, g.low);
        e.high = std::max(e.high, g.high);
        any = true;
      }
      if (any) v.push_back(e);
    }
    return v;
  }();
  return out;
}

}  // namespace

const ErrorBand* BandFor(std::string_view kind, std::string_view framework,
                         std::string_view generation) {
  const ErrorBand* general = nullptr;
  const ErrorBand* own_framework = nullptr;
  const ErrorBand* own_generation = nullptr;
  bool generations = false;  // the kind has bands per generation
  for (const ErrorBand& b : ErrorBands()) {
    if (kind != b.kind) continue;
    // A framework's or generation's own band needs two sources: with one, leaving its source
    // out leaves nothing, and its cases all share one lab's setup (one side of the estimate,
    // the figure at the band's edge).
    if (b.generation[0] != '\0') {
      generations = true;
      if (generation == b.generation && b.groups >= 2) own_generation = &b;
      continue;
    }
    if (framework == b.framework && !framework.empty() && b.groups >= 2) own_framework = &b;
    if (b.framework[0] == '\0') general = &b;
  }
  if (own_framework != nullptr) return own_framework;
  if (own_generation != nullptr) return own_generation;
  // A generation the suite has too few measurements of: as wide as the widest measured one.
  if (generations && !generation.empty()) {
    for (const ErrorBand& e : Envelopes()) {
      if (kind == e.kind) return &e;
    }
  }
  return general;
}

namespace {

std::string BasisText(const ErrorBand& b, bool envelope) {
  char basis[420];
  std::snprintf(basis, sizeof basis,
                "%d published measurements of %s in %d source%s%s%s%s%s: the estimate, each "
                "source left out of the fit in turn, was %+.0f%% to %+.0f%% off the measured "
                "value (%s); median error %.0f%%%s",
                b.cases, b.kind, b.groups, b.groups == 1 ? "" : "s",
                std::strlen(b.framework) > 0 ? ", on " : "", b.framework,
                std::strlen(b.generation) > 0 ? ", on cards of generation " : "", b.generation,
                100 * (b.low - 1), 100 * (b.high - 1),
                b.cases >= 20 ? "5th to 95th percentile" : "all of them",
                100 * (std::exp(b.median_abs) - 1),
                envelope ? "; few or no measurements of this card's generation: widened to the "
                           "widest band of any measured generation"
                         : "");
  return basis;
}

// A band's basis in words, written once per band: every row of a plan carries several.
const std::string& BasisOf(const ErrorBand& b) {
  static const std::vector<std::string> texts = [] {
    std::vector<std::string> out;
    for (const ErrorBand& band : ErrorBands()) out.push_back(BasisText(band, false));
    return out;
  }();
  static const std::vector<std::string> envelopes = [] {
    std::vector<std::string> out;
    for (const ErrorBand& band : Envelopes()) out.push_back(BasisText(band, true));
    return out;
  }();
  const std::vector<ErrorBand>& wide = Envelopes();
  for (size_t i = 0; i < wide.size(); ++i) {
    if (&wide[i] == &b) return envelopes[i];
  }
  return texts[static_cast<size_t>(&b - ErrorBands().data())];
}

}  // namespace

void AddBands(const Setup& r, Estimate* e) {
  const std::string_view framework = std::string_view(r.stack->id);
  const std::string_view generation = r.gpu.generation;
  const auto put = [&](const char* kind, const char* ptr, double v, bool rate) {
    const ErrorBand* b = BandFor(kind, framework, generation);
    if (b == nullptr || !(v > 0)) return;
    const std::string& basis = BasisOf(*b);
    // measured = predicted / (predicted / measured). A suite whose every case came out on one
    // side of the estimate (the engines' KV pools: 1.01 to 1.78) would put the band beside the
    // figure;
    // the figure itself stays inside it (the contract: low <= value <= high).
    const double lo = std::min(b->low, 1.0);
    const double hi = std::max(b->high, 1.0);
    e->bands[ptr] = rate ? FigureBand{v / hi, v / lo, basis} : FigureBand{v * lo, v * hi, basis};
  };
  // The memory cases measured what PyTorch's allocator saw (the total less the runtime): the
  // band moves that part, and the runtime is added back as estimated.
  const double runtime = e->memory.per_gpu.runtime;
  put("memory", "/memory/total_bytes", e->total_bytes - runtime, true);
  if (e->bands.count("/memory/total_bytes") > 0) {
    e->bands["/memory/total_bytes"].low += runtime;
    e->bands["/memory/total_bytes"].high += runtime;
  }
  // A run of this very setup on this card is the range: what it held.
  if (e->measured_spare_bytes >= 0) {
    static const std::string kMeasured =
        "the run measured with this setup on this card (calibration.measured_peak_bytes)";
    const double held = e->capacity_bytes - e->measured_spare_bytes;
    e->bands["/memory/total_bytes"] = {std::min(held, e->total_bytes),
                                       std::max(held, e->total_bytes), kMeasured};
  }
  // "Fits" is judged with the headroom; where the likely range still reaches past the card, the
  // answer says so: measure a small run, then calibrate.
  const auto memory = e->bands.find("/memory/total_bytes");
  if (e->fits && memory != e->bands.end() && memory->second.high > e->capacity_bytes) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "fits with the headroom, but the likely range of memory reaches %.1f GiB, above "
                  "the card's %.1f GiB: measure a small run before committing",
                  memory->second.high / 1073741824.0, e->capacity_bytes / 1073741824.0);
    e->warnings.push_back(
        Note{"memory_range_above_capacity",
             {{"high_bytes", memory->second.high}, {"capacity_bytes", e->capacity_bytes}},
             buf});
  }
  // Every other banded figure of the table (figures.h), by its band's kind.
  for (const FigureRow& row : FigureTable()) {
    if (row.band == nullptr || std::strcmp(row.pointer, "/memory/total_bytes") == 0) continue;
    const FigureValue v = row.get(*e);
    if (v.present) put(row.band, row.pointer, v.number, row.band_rate);
  }
}

}  // namespace gpuplan
