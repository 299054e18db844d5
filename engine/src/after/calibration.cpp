// SPDX-License-Identifier: MIT
#include "after/calibration.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

#include "after/remedies.h"
#include "core/format.h"
#include "physics/estimate.h"
#include "physics/perf_model.h"

namespace gpuplan {
namespace {

using text::D;
using text::Fmt;

// Bounds on a derived factor: beyond them the measurement says something other than an
// efficiency (a wrong card, a throttled clock, another setup), and the note says so.
constexpr double kMinFactor = 0.05;
constexpr double kMaxMemoryFactor = 10;
// Weight of the pull toward interconnect x1: a 1% speed-up misfit (1e-4) outweighs moving
// the factor from 1 to 0.05 (1e-6 x 9).
constexpr double kTiePull = 1e-6;

struct Solved {
  double value = 1;
  bool reached = false;  ///< false: the target lies outside what [lo, hi] can give
  bool flat = false;     ///< f does not depend on the factor here
};

// Solves f(s) = target for a monotone f over [lo, hi], bisecting on log s.
Solved Solve(const std::function<double(double)>& f, double target, double lo, double hi) {
  const double flo = f(lo);
  const double fhi = f(hi);
  if (std::fabs(fhi - flo) <= 1e-9 * std::max(std::fabs(flo), std::fabs(fhi))) {
    return {1, false, true};
  }
  const bool increasing = fhi > flo;
  if (increasing ? target <= flo : target >= flo) return {lo, false, false};
  if (increasing ? target >= fhi : target <= fhi) return {hi, false, false};
  double a = std::log(lo);
  double b = std::log(hi);
  for (int i = 0; i < 60; ++i) {
    const double mid = (a + b) / 2;
    if ((f(std::exp(mid)) < target) == increasing) {
      a = mid;
    } else {
      b = mid;
    }
  }
  return {std::exp((a + b) / 2), true, false};
}

// The request at another card count, same per-GPU batch: the weak scaling a 1/2/4-card
// measurement does. A count the model-parallel layout does not divide runs as pure data parallel.
Request At(const Request& r, int64_t gpus) {
  Request q = r;
  Parallel& p = q.parallel;
  p.gpus = gpus;
  if (gpus % (p.tp * p.pp * p.cp) != 0) {
    p.tp = p.pp = p.cp = p.ep = 1;
  }
  if (p.ShardGroup() <= 1) p.zero = 0;
  q.workload.global_batch = 0;
  return q;
}

double TrainingRate(const Request& r) {
  return EstimateTraining(r, CountParams(r.model)).tokens_per_s;
}

InferencePerf Serving(const Request& r) { return EstimateSetup(r, false).serving.at_request; }

struct Point {
  int64_t gpus;
  double tokens_per_s;
};

class Calibrator {
 public:
  Calibrator(const Request& r, const Measurement& m)
      : r_(r), m_(m), base_(r), eff_(DefaultEfficiencies(r.gpu)) {
    // Derived factors are absolute: relative to the uncalibrated model, not to the request's.
    base_.calibration = CalibrationFactors{};
    out_.factors = r.calibration;
    out_.factors.measured_on = r.gpu.id;
  }

  CalibrationResult Run() {
    const Estimate before = EstimateSetup(r_, false);
    FitMemory();
    FitSlack();
    if (r_.workload.IsTraining()) {
      FitTraining();
    } else {
      FitServing();
    }
    Snap(&out_.factors);
    Request after = r_;
    after.calibration = out_.factors;
    const Estimate calibrated = EstimateSetup(after, false);
    Compare(before, calibrated, after);
    Yardstick();
    Diagnose(after, calibrated);
    return std::move(out_);
  }

 private:
  // Within 0.1% of no correction is no correction: a bisection's last digits are not a finding.
  static void Snap(CalibrationFactors* f) {
    for (double* v : {&f->compute, &f->bandwidth, &f->memory, &f->interconnect}) {
      if (std::fabs(*v - 1) < 1e-3) *v = 1;
    }
  }

  Request With(const CalibrationFactors& f) const {
    Request q = base_;
    q.calibration = f;
    return q;
  }

  void Derived(const std::string& factor, double value, const std::string& how) {
    out_.notes.push_back(Note{"factor_derived",
                              {{"value", value}},
                              factor + " x" + Fmt("%.3g", value) + " " + how,
                              "/calibration/" + factor});
  }
  void NotDerived(const std::string& factor, const std::string& why) {
    out_.notes.push_back(
        Note{"factor_not_derived", {}, factor + " kept: " + why, "/calibration/" + factor});
  }
  void AtBound(const std::string& factor, double value, const std::string& what) {
    out_.notes.push_back(Note{"factor_at_bound",
                              {{"value", value}},
                              factor + " x" + Fmt("%.3g", value) + " is the limit of the model: " +
                                  what + "; check the card, its clocks and the setup",
                              "/calibration/" + factor});
  }

  void FitMemory() {
    if (m_.peak_allocated_bytes <= 0) return;
    // Uncalibrated parts: weights, gradients, optimizer states and KV cache are exact counts.
    const Estimate plain = EstimateSetup(base_, false);
    const MemoryBreakdown& b = plain.memory.per_gpu;
    const double modelled = b.activations + b.buffers;
    const double exact = b.Allocated() - modelled;
    if (modelled < 0.01 * b.Allocated()) {
      NotDerived("memory",
                 "activations and buffers are under 1% of the estimate: the "
                 "difference is not theirs to explain");
      return;
    }
    const double s = (m_.peak_allocated_bytes - exact) / modelled;
    const double clamped = std::clamp(s, kMinFactor, kMaxMemoryFactor);
    out_.factors.memory = clamped;
    if (clamped != s) {
      AtBound("memory", clamped,
              "the measured peak is outside what activations and buffers can account for");
    } else {
      Derived("memory", s,
              "from the measured peak allocated: (peak - weights - gradients - optimizer "
              "states - KV cache) / (activations + buffers)");
    }
  }

  void FitSlack() {
    if (m_.peak_allocated_bytes <= 0 || m_.peak_reserved_bytes <= 0) return;
    const double slack = m_.peak_reserved_bytes / m_.peak_allocated_bytes - 1;
    out_.factors.allocator_slack = std::clamp(slack, 0.0, 1.0);
    if (slack < 0 || slack > 1) {
      AtBound("allocator_slack", out_.factors.allocator_slack,
              "reserved should lie between 1x and 2x allocated");
    } else {
      Derived("allocator_slack", slack, "= peak reserved / peak allocated - 1");
    }
  }

  void FitTraining() {
    std::vector<Point> points;
    if (m_.tokens_per_s > 0) points.push_back({r_.parallel.gpus, m_.tokens_per_s});
    for (const ScalingPoint& s : m_.scaling) {
      if (std::none_of(points.begin(), points.end(),
                       [&](const Point& p) { return p.gpus == s.gpus; })) {
        points.push_back({s.gpus, s.tokens_per_s});
      }
    }
    if (points.empty()) return;
    std::sort(points.begin(), points.end(),
              [](const Point& a, const Point& b) { return a.gpus < b.gpus; });
    points_ = points;
    const Point base = points.front();
    // The factor's range keeps the achieved efficiency at or below 1 of the peak the matmuls
    // run at (fp8 starts from a lower fraction of its higher peak).
    const double efficiency = EstimateTraining(base_, CountParams(base_.model)).efficiency;
    const double hi = 1 / efficiency;
    // Two rounds: the base point's rate depends on the interconnect when it has several cards.
    for (int round = 0; round < 2; ++round) {
      CalibrationFactors f = out_.factors;
      const Solved c = Solve(
          [&](double s) {
            f.compute = s;
            return TrainingRate(At(With(f), base.gpus));
          },
          base.tokens_per_s, kMinFactor, hi);
      if (!c.flat) out_.factors.compute = c.value;
      if (round == 1) {
        if (c.flat) {
          NotDerived("compute", "the model's throughput here does not depend on compute");
        } else if (c.reached) {
          Derived("compute", c.value,
                  "from " + Fmt("%.0f", base.tokens_per_s) + " tokens/s measured on " +
                      std::to_string(base.gpus) + " GPU(s)");
        } else {
          AtBound("compute", c.value,
                  "the measured throughput needs an efficiency outside " +
                      Fmt("%.2f", kMinFactor * efficiency) + "-1");
        }
      }
      if (points.size() > 1) FitInterconnect(round == 1);
    }
  }

  // Least squares on log speed-up over the points beyond the smallest: a grid, then golden
  // section around the best grid value. A faint pull toward 1 settles ties (a curve that any
  // fast enough link reproduces) at no correction rather than at the slowest such link.
  void FitInterconnect(bool report) {
    const Point base = points_.front();
    const double hi = 1 / kLinkEfficiency;
    auto misfit = [&](double s) {
      CalibrationFactors f = out_.factors;
      f.interconnect = s;
      const Request q = With(f);
      const double base_rate = TrainingRate(At(q, base.gpus));
      double sum = 0;
      for (size_t i = 1; i < points_.size(); ++i) {
        const double est = TrainingRate(At(q, points_[i].gpus)) / base_rate;
        const double meas = points_[i].tokens_per_s / base.tokens_per_s;
        sum += std::pow(std::log(est / meas), 2);
      }
      return sum;
    };
    auto error = [&](double s) { return misfit(s) + kTiePull * std::pow(std::log(s), 2); };
    constexpr int kGrid = 60;
    const double lo_log = std::log(kMinFactor / 2.5);
    const double step = (std::log(hi) - lo_log) / kGrid;
    int best = 0;
    std::vector<double> grid(kGrid + 1);
    double lowest = 0;
    double highest = 0;
    for (int i = 0; i <= kGrid; ++i) {
      const double s = std::exp(lo_log + step * i);
      const double m = misfit(s);
      lowest = i == 0 ? m : std::min(lowest, m);
      highest = i == 0 ? m : std::max(highest, m);
      grid[i] = m + kTiePull * std::pow(std::log(s), 2);
      if (grid[i] < grid[best]) best = i;
    }
    // The misfit alone decides whether the link matters at all (the pull always varies).
    if (highest - lowest <= 1e-12 * std::max(1.0, highest)) {
      if (report) {
        NotDerived("interconnect",
                   "the model's speed-up over these card counts does not depend "
                   "on the interconnect (no data-parallel traffic)");
      }
      return;
    }
    double a = lo_log + step * std::max(0, best - 1);
    double b = lo_log + step * std::min(kGrid, best + 1);
    const double phi = (std::sqrt(5.0) - 1) / 2;
    for (int i = 0; i < 40; ++i) {
      const double x1 = b - phi * (b - a);
      const double x2 = a + phi * (b - a);
      if (error(std::exp(x1)) <= error(std::exp(x2))) {
        b = x2;
      } else {
        a = x1;
      }
    }
    const double s = std::exp((a + b) / 2);
    out_.factors.interconnect = s;
    if (!report) return;
    if (best == kGrid || best == 0) {
      AtBound("interconnect", s,
              best == kGrid ? "the measured speed-up beats the model's at full link bandwidth"
                            : "the measured speed-up is below what any link bandwidth explains");
    } else {
      Derived("interconnect", s,
              "fitted on the measured speed-up over " + std::to_string(points_.size()) +
                  " card counts (least squares on log speed-up)");
    }
  }

  void FitServing() {
    if (m_.tpot_ms <= 0 && m_.ttft_ms <= 0) return;
    Solved bw;
    Solved cp;
    for (int round = 0; round < 2; ++round) {
      CalibrationFactors f = out_.factors;
      if (m_.tpot_ms > 0) {
        bw = Solve(
            [&](double s) {
              f.bandwidth = s;
              return Serving(With(f)).tpot_s * 1e3;
            },
            m_.tpot_ms, kMinFactor, 1 / eff_.decode_bandwidth);
        if (!bw.flat) out_.factors.bandwidth = f.bandwidth = bw.value;
      }
      if (m_.ttft_ms > 0) {
        cp = Solve(
            [&](double s) {
              f.compute = s;
              return Serving(With(f)).ttft_s * 1e3;
            },
            m_.ttft_ms, kMinFactor, 1 / eff_.prefill_compute);
        if (!cp.flat) out_.factors.compute = f.compute = cp.value;
      }
    }
    if (m_.tpot_ms > 0) {
      if (bw.flat) {
        NotDerived("bandwidth", "TPOT is compute-bound in the estimate at this concurrency");
      } else if (bw.reached) {
        Derived("bandwidth", bw.value, "from the measured TPOT " + Fmt("%.3g", m_.tpot_ms) + " ms");
      } else {
        AtBound("bandwidth", bw.value,
                "the measured TPOT needs a bandwidth efficiency outside " +
                    Fmt("%.2f", kMinFactor * eff_.decode_bandwidth) + "-1");
      }
    }
    if (m_.ttft_ms > 0) {
      if (cp.flat) {
        NotDerived("compute", "TTFT is bound by reading the weights in the estimate");
      } else if (cp.reached) {
        Derived("compute", cp.value, "from the measured TTFT " + Fmt("%.3g", m_.ttft_ms) + " ms");
      } else {
        AtBound("compute", cp.value,
                "the measured TTFT needs a prefill efficiency outside " +
                    Fmt("%.2f", kMinFactor * eff_.prefill_compute) + "-1");
      }
    }
  }

  void Add(const std::string& quantity, const std::string& path, double est, double meas,
           double cal) {
    Comparison c;
    c.quantity = quantity;
    c.estimate_path = path;
    c.estimated = est;
    c.measured = meas;
    c.error = (est - meas) / meas;
    c.within = std::fabs(c.error) <= kSuccessLine;
    c.calibrated = cal;
    c.calibrated_error = (cal - meas) / meas;
    out_.comparisons.push_back(c);
  }

  void Compare(const Estimate& before, const Estimate& after, const Request& calibrated) {
    const MemoryBreakdown& b = before.memory.per_gpu;
    const MemoryBreakdown& a = after.memory.per_gpu;
    if (m_.peak_allocated_bytes > 0) {
      Add("peak_allocated_bytes", "/memory/allocated_bytes", b.Allocated(), m_.peak_allocated_bytes,
          a.Allocated());
    }
    if (m_.peak_reserved_bytes > 0) {
      // The caching allocator's reserve: the tensors plus its slack (no CUDA context).
      const double before_slack = r_.calibration.allocator_slack >= 0
                                      ? r_.calibration.allocator_slack
                                      : r_.runtime.allocator_slack;
      const double after_slack = out_.factors.allocator_slack >= 0 ? out_.factors.allocator_slack
                                                                   : r_.runtime.allocator_slack;
      Add("peak_reserved_bytes", "/memory/allocated_bytes", b.Allocated() * (1 + before_slack),
          m_.peak_reserved_bytes, a.Allocated() * (1 + after_slack));
    }
    if (r_.workload.IsTraining()) {
      // Speed-up over the smallest measured count: seed 000's curve, estimate against measured.
      if (points_.size() > 1) {
        const Point base = points_.front();
        const double est_base = TrainingRate(At(r_, base.gpus));
        const double cal_base = TrainingRate(At(calibrated, base.gpus));
        for (size_t i = 1; i < points_.size(); ++i) {
          const Point& p = points_[i];
          Add("speedup@" + std::to_string(p.gpus), "/performance/training/tokens_per_s",
              TrainingRate(At(r_, p.gpus)) / est_base, p.tokens_per_s / base.tokens_per_s,
              TrainingRate(At(calibrated, p.gpus)) / cal_base);
        }
      }
      for (const Point& p : points_) {
        const bool own = p.gpus == r_.parallel.gpus;
        const double est = own ? before.training.tokens_per_s : TrainingRate(At(r_, p.gpus));
        const double cal = own ? after.training.tokens_per_s : TrainingRate(At(calibrated, p.gpus));
        Add("tokens_per_s@" + std::to_string(p.gpus), "/performance/training/tokens_per_s", est,
            p.tokens_per_s, cal);
      }
    } else {
      if (m_.ttft_ms > 0) {
        Add("ttft_ms", "/performance/inference/ttft_ms", before.serving.at_request.ttft_s * 1e3,
            m_.ttft_ms, after.serving.at_request.ttft_s * 1e3);
      }
      if (m_.tpot_ms > 0) {
        Add("tpot_ms", "/performance/inference/tpot_ms", before.serving.at_request.tpot_s * 1e3,
            m_.tpot_ms, after.serving.at_request.tpot_s * 1e3);
      }
    }
  }

  double MemoryShare() const {
    if (m_.gpu_memory_share >= 0) return m_.gpu_memory_share;
    if (m_.peak_reserved_bytes > 0 && r_.gpu.memory_bytes > 0) {
      return m_.peak_reserved_bytes / r_.gpu.memory_bytes;
    }
    return -1;
  }

  void Yardstick() {
    auto add = [this](const char* code, double value, double target, bool met,
                      const std::string& text) {
      out_.yardstick.push_back(
          Note{code, {{"value", value}, {"target", target}, {"met", met ? 1.0 : 0.0}}, text});
    };
    const double share = MemoryShare();
    if (share >= 0) {
      add("memory_share", share, kTargetMemoryShare, share >= kTargetMemoryShare,
          "GPU memory at peak " + Fmt("%.0f%%", share * 100) +
              " (target 85%+: below it, a "
              "larger batch or a smaller card would serve)");
    }
    if (m_.gpu_utilization >= 0) {
      add("gpu_utilization", m_.gpu_utilization, kTargetUtilization,
          m_.gpu_utilization >= kTargetUtilization,
          "GPU utilisation " + Fmt("%.0f%%", m_.gpu_utilization * 100) +
              " (target 90%+: below it, the card waits for data or communication)");
    }
    if (m_.host_ram_share >= 0) {
      add("host_ram_share", m_.host_ram_share, kHostRamHigh, m_.host_ram_share <= kHostRamHigh,
          "host RAM " + Fmt("%.0f%%", m_.host_ram_share * 100) +
              " (target 70-80%: above it, loaders and the page cache start to swap)");
    }
  }

  void Diagnose(const Request& calibrated, const Estimate& after) {
    const double cap = r_.gpu.memory_bytes;
    // The measured tensors plus the runtime part the estimate adds (context, NCCL, slack).
    const double need =
        (m_.peak_allocated_bytes + after.memory.per_gpu.runtime) * (1 + r_.headroom);
    const double share = MemoryShare();
    const bool short_of_memory =
        m_.out_of_memory || (m_.peak_allocated_bytes > 0 && need > cap) || share > 0.95;
    if (short_of_memory) {
      // A measured peak says how far short; an out-of-memory run without one, the estimate.
      const double need_bytes =
          m_.peak_allocated_bytes > 0 ? need : after.total_with_headroom_bytes;
      const double over = need_bytes / cap - 1;
      const bool just = over <= remedies::kJustShort;
      const std::string headroom = Fmt("%.0f%%", r_.headroom * 100);
      out_.diagnosis.push_back(
          {just ? "memory_just_short" : "memory_short",
           "measurement",
           {{"over_fraction", over}, {"need_bytes", need_bytes}, {"capacity_bytes", cap}},
           (m_.out_of_memory ? std::string("the run ran out of memory")
                             : "the measured peak leaves less than the " + headroom + " headroom") +
               (just ? ": cheap levers first, a bigger card last"
                     : ": too far for the cheap levers alone; a bigger card or more cards") +
               " (each remedy checked with the calibrated memory)",
           remedies::Memory(calibrated, need_bytes)});
    } else if (share >= 0 && share < kTargetMemoryShare) {
      bool slow = m_.gpu_utilization >= 0 && m_.gpu_utilization < kTargetUtilization;
      for (const Comparison& c : out_.comparisons) {
        const bool rate = c.quantity.rfind("tokens_per_s", 0) == 0;
        const bool latency = c.quantity == "tpot_ms" || c.quantity == "ttft_ms";
        if ((rate && c.error > kSuccessLine) || (latency && c.error < -kSuccessLine)) slow = true;
      }
      if (slow) {
        out_.diagnosis.push_back(
            {"throughput_low",
             "measurement",
             {{"memory_share", share}, {"gpu_utilization", m_.gpu_utilization}},
             "memory is plentiful (" + Fmt("%.0f%%", share * 100) +
                 ") but throughput is low: the bottleneck is reading or communication; check "
                 "the data pipeline first",
             remedies::Throughput(calibrated, after)});
      }
    }
    if (points_.size() > 1) {
      const Point base = points_.front();
      double worst = 1;
      int64_t at = base.gpus;
      for (size_t i = 1; i < points_.size(); ++i) {
        const double eff =
            (points_[i].tokens_per_s / base.tokens_per_s) / (D(points_[i].gpus) / D(base.gpus));
        if (eff < worst) {
          worst = eff;
          at = points_[i].gpus;
        }
      }
      if (worst < remedies::kLowScaling) {
        const Request q = At(calibrated, at);
        out_.diagnosis.push_back(
            {"speedup_low",
             "measurement",
             {{"scaling_efficiency", worst}, {"gpus", D(at)}},
             "the measured speed-up on " + std::to_string(at) + " cards is " +
                 Fmt("%.0f%%", worst * 100) +
                 " of linear: most likely the interconnect or the sharding; measure again on "
                 "fewer cards",
             remedies::Speedup(q, EstimateSetup(q, false))});
      }
    }
  }

  const Request& r_;
  const Measurement& m_;
  Request base_;
  Efficiencies eff_;
  std::vector<Point> points_;
  CalibrationResult out_;
};

}  // namespace

CalibrationResult Calibrate(const Request& r, const Measurement& m) {
  return Calibrator(r, m).Run();
}

}  // namespace gpuplan
