// SPDX-License-Identifier: MIT
// The training factors measured throughput fixes: compute from the rate at the smallest card
// count, the interconnect from the speed-up over the larger ones.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "after/calibration_steps.h"
#include "core/format.h"
#include "physics/perf_model.h"

namespace gpuplan::calibration {
namespace {

using text::Fmt;

// Weight of the pull toward interconnect x1: a 1% speed-up misfit (1e-4) outweighs moving
// the factor from 1 to 0.05 (1e-6 x 9).
constexpr double kTiePull = 1e-6;
// Steps of the log-spaced grid the interconnect factor is first scanned over.
constexpr int kGrid = 60;

// The job's own rate first: a scaling point at the same card count does not replace it.
std::vector<Point> ThroughputPoints(const Setup& r, const Measurement& m) {
  std::vector<Point> points;
  if (m.tokens_per_s > 0) points.push_back({r.parallel.gpus, m.tokens_per_s});
  for (const ScalingPoint& s : m.scaling) {
    if (std::none_of(points.begin(), points.end(),
                     [&](const Point& p) { return p.gpus == s.gpus; })) {
      points.push_back({s.gpus, s.tokens_per_s});
    }
  }
  std::sort(points.begin(), points.end(),
            [](const Point& a, const Point& b) { return a.gpus < b.gpus; });
  return points;
}

// The compute factor that reproduces the rate at the smallest card count, at the current
// interconnect factor.
Solved SolveCompute(const Context& c, double hi) {
  const Point base = c.points.front();
  CalibrationFactors f = c.out.factors;
  return Solve(
      [&](double s) {
        f.compute = s;
        return TrainingRate(At(c.With(f), base.gpus));
      },
      base.tokens_per_s, kMinFactor, hi);
}

void NoteCompute(const Solved& s, double efficiency, Context* c) {
  const Point base = c->points.front();
  if (s.flat) {
    c->NotDerived("compute", "the model's throughput here does not depend on compute");
  } else if (s.reached) {
    c->Derived("compute", s.value,
               "from " + Fmt("%.0f", base.tokens_per_s) + " tokens/s measured on " +
                   std::to_string(base.gpus) + " GPU(s)");
  } else {
    c->AtBound("compute", s.value,
               "the measured throughput needs an efficiency outside " +
                   Fmt("%.2f", kMinFactor * efficiency) + "-1");
  }
}

// Sum of the squared log misfits of the speed-up over the smallest card count, at
// interconnect factor `s`.
double SpeedupMisfit(const Context& c, double s) {
  const Point base = c.points.front();
  CalibrationFactors f = c.out.factors;
  f.interconnect = s;
  const Setup q = c.With(f);
  const double base_rate = TrainingRate(At(q, base.gpus));
  double sum = 0;
  for (size_t i = 1; i < c.points.size(); ++i) {
    const double est = TrainingRate(At(q, c.points[i].gpus)) / base_rate;
    const double meas = c.points[i].tokens_per_s / base.tokens_per_s;
    sum += std::pow(std::log(est / meas), 2);
  }
  return sum;
}

// The misfit with the faint pull toward 1 that settles ties.
double SpeedupError(const Context& c, double s) {
  return SpeedupMisfit(c, s) + kTiePull * std::pow(std::log(s), 2);
}

struct GridScan {
  int best = 0;        ///< the grid step of the least error
  double lowest = 0;   ///< the least misfit over the grid
  double highest = 0;  ///< the greatest
};

// The grid runs over log factors lo_log + step x i, i = 0..kGrid.
GridScan ScanGrid(const Context& c, double lo_log, double step) {
  GridScan g;
  std::vector<double> grid(kGrid + 1);
  for (int i = 0; i <= kGrid; ++i) {
    const double s = std::exp(lo_log + step * i);
    const double m = SpeedupMisfit(c, s);
    g.lowest = i == 0 ? m : std::min(g.lowest, m);
    g.highest = i == 0 ? m : std::max(g.highest, m);
    grid[i] = m + kTiePull * std::pow(std::log(s), 2);
    if (grid[i] < grid[g.best]) g.best = i;
  }
  return g;
}

// Golden-section search for the least error between log factors a and b: the factor.
double GoldenSection(const Context& c, double a, double b) {
  const double phi = (std::sqrt(5.0) - 1) / 2;
  for (int i = 0; i < 40; ++i) {
    const double x1 = b - phi * (b - a);
    const double x2 = a + phi * (b - a);
    if (SpeedupError(c, std::exp(x1)) <= SpeedupError(c, std::exp(x2))) {
      b = x2;
    } else {
      a = x1;
    }
  }
  return std::exp((a + b) / 2);
}

void NoteInterconnect(double s, int best, Context* c) {
  if (best == kGrid || best == 0) {
    c->AtBound("interconnect", s,
               best == kGrid ? "the measured speed-up beats the model's at full link bandwidth"
                             : "the measured speed-up is below what any link bandwidth explains");
  } else {
    c->Derived("interconnect", s,
               "fitted on the measured speed-up over " + std::to_string(c->points.size()) +
                   " card counts (least squares on log speed-up)");
  }
}

// Least squares on log speed-up over the points beyond the smallest: a grid, then golden
// section around the best grid value. A faint pull toward 1 settles ties (a curve that any
// fast enough link reproduces) at no correction rather than at the slowest such link.
void FitInterconnect(bool report, Context* c) {
  const double hi = 1 / kLinkEfficiency;
  const double lo_log = std::log(kMinFactor / 2.5);
  const double step = (std::log(hi) - lo_log) / kGrid;
  const GridScan g = ScanGrid(*c, lo_log, step);
  // The misfit alone decides whether the link matters at all (the pull always varies).
  if (g.highest - g.lowest <= 1e-12 * std::max(1.0, g.highest)) {
    if (report) {
      c->NotDerived("interconnect",
                    "the model's speed-up over these card counts does not depend "
                    "on the interconnect (no data-parallel traffic)");
    }
    return;
  }
  const double s = GoldenSection(*c, lo_log + step * std::max(0, g.best - 1),
                                 lo_log + step * std::min(kGrid, g.best + 1));
  c->out.factors.interconnect = s;
  if (report) NoteInterconnect(s, g.best, c);
}

}  // namespace

void FitTraining(Context* c) {
  std::vector<Point> points = ThroughputPoints(c->request, c->measured);
  if (points.empty()) return;
  c->points = std::move(points);
  // The factor's range keeps the achieved efficiency at or below 1 of the peak the matmuls
  // run at (fp8 starts from a lower fraction of its higher peak).
  const double efficiency =
      EstimateTraining(c->uncalibrated, CountParams(c->uncalibrated.model)).efficiency;
  const double hi = 1 / efficiency;
  // Two rounds: the base point's rate depends on the interconnect when it has several cards.
  for (int round = 0; round < 2; ++round) {
    const Solved s = SolveCompute(*c, hi);
    if (!s.flat) c->out.factors.compute = s.value;
    if (round == 1) NoteCompute(s, efficiency, c);
    if (c->points.size() > 1) FitInterconnect(round == 1, c);
  }
}

}  // namespace gpuplan::calibration
