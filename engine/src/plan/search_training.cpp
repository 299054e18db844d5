// SPDX-License-Identifier: MIT
// The training search of one card: counts x tensor x pipeline x ZeRO x recomputation x
// micro-batch, the global batch held fixed. Memory is the hard filter (a setup that does not
// fit cannot run at all); the ranking picks among what fits. Pruning is exact: a branch is
// skipped only when a bound shows nothing in it can fit or beat the best found so far
// (PlanPruning compares it with the full search).
#include <array>
#include <cmath>
#include <initializer_list>
#include <iterator>
#include <set>
#include <tuple>

#include "plan/search.h"

namespace gpuplan::plan_search {
namespace {

struct TrainingSetup {
  int64_t tp, pp, zero, micro_batch, grad_accum;
  Recompute recompute;
};

// Sets a candidate's layout on a setup that already holds the card: candidates are tried by
// the thousand, so the setup (strings and all) is reused rather than copied.
void ApplySetup(Setup* r, int64_t n, const TrainingSetup& s) {
  Setup& q = *r;
  q.parallel = Parallel{};
  q.parallel.gpus = n;
  q.parallel.tp = s.tp;
  q.parallel.pp = s.pp;
  q.parallel.zero = static_cast<int>(s.zero);
  q.parallel.sequence_parallel = s.tp > 1;
  q.workload.micro_batch = s.micro_batch;
  q.workload.grad_accum = s.grad_accum;
  q.techniques.recompute = s.recompute;
  // Offloading is left to `estimate`: the time model does not price its PCIe traffic yet.
  q.techniques.offload_optimizer = q.techniques.offload_params = false;
  q.techniques.offload_activations = false;
}

// Micro-batch / accumulation pairs that make up the global batch on dp ranks, smallest
// micro-batch first. A batch the request gave, and a fine-tuning recipe's (tuned with its
// learning rate), are kept exactly: a count they do not divide is not tried. Pretraining's
// default is a token budget that published runs vary (Llama 3 went from 4M to 16M tokens), so
// it rounds to the nearest whole number of sequences per rank: 24 nodes of 8 run 960 or 1,152
// sequences rather than being skipped.
bool Flexible(const Workload& w) { return !w.batch_given && w.kind == WorkloadKind::kPretrain; }

// A list of at most N values in place: the search builds a few per shape, thousands a plan,
// and on the heap they were nine allocations in ten of a pretraining plan.
template <class T, size_t N>
class FixedList {
 public:
  FixedList() = default;
  FixedList(std::initializer_list<T> values) {
    for (const T& v : values) push_back(v);
  }
  void push_back(const T& v) {
    if (size_ < N) items_[size_++] = v;
  }
  template <class Drop>
  void remove_if(const Drop& drop) {
    size_ = static_cast<size_t>(std::remove_if(begin(), end(), drop) - begin());
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T& operator[](size_t i) const { return items_[i]; }
  const T& front() const { return items_[0]; }
  const T& back() const { return items_[size_ - 1]; }
  T* begin() { return items_.data(); }
  T* end() { return items_.data() + size_; }
  const T* begin() const { return items_.data(); }
  const T* end() const { return items_.data() + size_; }
  std::reverse_iterator<const T*> rbegin() const { return std::reverse_iterator<const T*>(end()); }
  std::reverse_iterator<const T*> rend() const { return std::reverse_iterator<const T*>(begin()); }

 private:
  std::array<T, N> items_{};
  size_t size_ = 0;
};

// Micro-batches double from 1 up to the sequences per rank: at most 63 of them in an int64_t.
using Batches = FixedList<std::pair<int64_t, int64_t>, 64>;

Batches BatchOptions(const Workload& w, int64_t dp) {
  Batches out;
  const int64_t per_rank = !Flexible(w)
                               ? (w.global_batch % dp == 0 ? w.global_batch / dp : 0)
                               : static_cast<int64_t>(std::llround(D(w.global_batch) / D(dp)));
  for (int64_t mb = 1; mb <= per_rank; mb *= 2) {
    if (per_rank % mb == 0) out.push_back({mb, per_rank / mb});
  }
  return out;
}

// The index of the batch option that does not accumulate (grad_accum 1), or the option count
// when there is none. Its micro-batch is the largest, yet it can need less memory than the
// smaller ones: nothing accumulates, so no gradients are alive at the end of forward and no
// buckets are kept (memory_model.cpp, TrainingStepPeak). Memory grows with the micro-batch
// only among the options that accumulate.
size_t Unaccumulated(const Batches& batches) {
  return !batches.empty() && batches.back().second == 1 ? batches.size() - 1 : batches.size();
}

double CostOf(const Setup& q, const TrainingPerf& t) {
  const double price = PricePerGpuHour(q);
  return price < 0 ? kInf : price * D(q.parallel.gpus) * t.time_s / 3600;
}

// A ranking key, lower first, in fixed storage: one is built for every setup tried.
struct Key {
  std::array<double, 4> v{};
  size_t size = 0;
  Key(std::initializer_list<double> values) : size(std::min(values.size(), v.size())) {
    std::copy_n(values.begin(), size, v.begin());
  }
  bool Before(const std::vector<double>& other) const {
    return std::lexicographical_compare(v.begin(), v.begin() + size, other.begin(), other.end());
  }
  std::vector<double> Vector() const { return {v.begin(), v.begin() + size}; }
};

Key KeyOf(Ranking k, const Setup& q, int64_t n, const TrainingPerf& t, double cost) {
  switch (k) {
    case Ranking::kFewestMeetingDeadline:
      return {D(n), cost, t.time_s};
    case Ranking::kFastestAboveKnee:
      // Below the knee, more cards are not worth buying: such setups rank after every one
      // above it, and among themselves by count.
      if (t.scaling_efficiency < kScalingKnee) return {1, D(n), t.time_s};
      return {0, t.time_s, D(n)};
    case Ranking::kFewestThenCheapest:
    case Ranking::kCheapestPerToken:
      // Fine-tuning fits on the fewest cards; among those the cheapest run, and unpriced
      // setups after every priced one.
      if (std::isinf(cost)) return {D(n), 1, t.time_s};
      return {D(n), 0, cost, t.time_s};
    case Ranking::kTime:
      return {t.time_s, D(n)};
    case Ranking::kCost:
      return {cost, t.time_s};
    case Ranking::kPower:
      return {D(n) * q.gpu.board_power_w, t.time_s};
    case Ranking::kCount:
      break;
  }
  return {D(n), t.time_s};
}

// Keys led by the count are met first by the smallest count that works: search upwards and
// stop there.
bool CountFirst(Ranking k) {
  return k == Ranking::kFewestMeetingDeadline || k == Ranking::kFewestThenCheapest ||
         k == Ranking::kCount || k == Ranking::kPower;
}

// A setup of a count kept as numbers while the search runs; a request is built from it only
// for the few that are kept (copying the request, strings and all, for every new closest miss
// was most of the search's allocations).
struct SetupAt {
  int64_t n = 0;
  TrainingSetup s{};
};

struct MissAt {
  double need = kInf;
  double total = 0;
  SetupAt at;  ///< at.n: the count
};

// Which of two setups that need the same memory a record keeps, whatever order a search met
// them in: setups often tie when the optimizer step binds, since it holds no activation. The
// smaller micro-batch (the pruned search probes the smallest first), then the lighter
// recomputation, then the rest of the setup in a fixed order.
bool KeptOnTie(const TrainingSetup& a, const TrainingSetup& b) {
  const auto key = [](const TrainingSetup& s) {
    return std::make_tuple(s.micro_batch, static_cast<int>(s.recompute), s.zero, s.tp, s.pp,
                           s.grad_accum);
  };
  return key(a) < key(b);
}

// A larger micro-batch of the same count and layout as the best so far, whose run is less than
// 5% faster: its gain is below what the estimate resolves (the training band's median error is
// about 11%) and it costs activation memory; memory comes first (seed 003), so the smaller one
// stays. The pruned search meets the smaller micro-batches of a shape first.
bool MarginalLargerBatch(const PlanChoice& best, const Setup& q, int64_t n, const TrainingPerf& t) {
  const Setup& b = best.request;
  return best.count == n && b.parallel.tp == q.parallel.tp && b.parallel.pp == q.parallel.pp &&
         q.workload.micro_batch > b.workload.micro_batch && t.time_s > 0.95 * best.figures.time_s;
}

// Sequences per micro-batch of the rate bound's one-GPU estimate (SearchTraining): more than
// any micro-batch a search tries.
constexpr int64_t kBoundMicroBatch = 1 << 16;

struct Search {
  Search(const Question& request, const ParamCounts& counts, const PlanOptions& options,
         Ranking rank, CardSearch* out, const CardSearch* before)
      : base(request),
        c(counts),
        opt(options),
        ranking(rank),
        cs(out),
        earlier(before),
        q(request.setup) {}

  const Question& base;
  const ParamCounts& c;
  const PlanOptions& opt;
  Ranking ranking;
  CardSearch* cs;
  const CardSearch* earlier;
  Setup q;  // the candidate, rewritten in place for every setup
  double peak_eff = 0;
  /// The run's FLOPs as computed, tokens x hardware FLOPs per token, for each recomputation
  /// tried: they depend on neither the layout nor the batch split.
  std::array<std::pair<Recompute, double>, 2> work{};
  double least_work = 0;  ///< the smaller of the two

  double WorkOf(Recompute rc) const {
    return rc == work[0].first ? work[0].second : work[1].second;
  }
  double price = -1;     ///< per GPU-hour; negative when unpriced
  double band_high = 1;  ///< TimeBandHigh of the request: the deadline's confidence
  Pipeline pipeline;     ///< the request's schedule, whatever the layout

  /// Whether no setup of n cards computing `flops` can beat the best found. Its run takes at
  /// least flops / (n x achieved peak) x (1 + fill slots / micro-batches): EstimateTraining's
  /// compute_s and the pipeline's fill (the busiest stage's micro-batch is at least the
  /// average's), to which every other part of a step is added. `fill` is that last factor
  /// at the most micro-batches a shape runs; `exposed_s` what the run's tensor-parallel
  /// all-reduces add at the least (ExposedTensorParallel), for `flops`' own recomputation when
  /// `same_recompute`. The same parts bound its scaling efficiency (compute over the step's
  /// parallel time) from above: a setup that cannot reach the knee ranks as one below it
  /// (the fill alone where the all-reduces are another recomputation's). Every ranking key
  /// grows with the run's time and cost, so the key of that bound comes no later than any
  /// such setup's: when it does not come before the best's, none of them does.
  bool CannotWin(double flops, double fill, int64_t n, double exposed_s = 0,
                 bool same_recompute = false) const {
    if (!opt.prune || !cs->best || !(peak_eff > 0)) return false;
    const double compute = flops / (D(n) * peak_eff);
    TrainingPerf t;
    t.time_s = compute * fill + exposed_s;
    t.scaling_efficiency = 1 / (fill + (same_recompute && compute > 0 ? exposed_s / compute : 0));
    const double cost = price < 0 ? kInf : price * D(n) * t.time_s / 3600;
    return !KeyOf(ranking, q, n, t, cost).Before(cs->best->key);
  }
  std::optional<SetupAt> closest;
  std::vector<MissAt> misses;  ///< the closest miss per count, a few dozen at most

  MissAt* MissOf(int64_t n) {
    for (MissAt& m : misses) {
      if (m.at.n == n) return &m;
    }
    return nullptr;
  }

  void Record(const FitCheck& f, int64_t n, const TrainingSetup& s);
  bool BelowFloor(int64_t n, const TrainingSetup& s);
  double ExposedTensorParallel(int64_t n, const TrainingSetup& largest);
  bool KnownWithoutFit(int64_t n, int64_t tp, int64_t pp) const;
  void Consider(int64_t n, const TrainingSetup& s, bool* stop_micro_batches);
  void Shape(int64_t n, int64_t tp, int64_t pp, const std::set<Recompute>& recomputes);
  void Materialise();
};

// Track's rule on the numbers: the closest miss overall and per count. A second search of the
// card records no misses: only its best is read.
void Search::Record(const FitCheck& f, int64_t n, const TrainingSetup& s) {
  if (!f.layout_ok || earlier != nullptr) return;
  const double need = f.total_with_headroom_bytes;
  if (need < cs->closest_need ||
      (need == cs->closest_need && closest && closest->n == n && KeptOnTie(s, closest->s))) {
    cs->closest_need = need;
    closest = SetupAt{n, s};
  }
  if (f.fits) return;
  const MissAt miss{need, f.total_bytes, {n, s}};
  MissAt* m = MissOf(n);
  if (m == nullptr) {
    misses.push_back(miss);
  } else if (miss.need < m->need || (miss.need == m->need && KeptOnTie(s, m->at.s))) {
    *m = miss;
  }
}

// Whether the setup's layout and ZeRO stage cannot fit whatever its micro-batch and
// recomputation (TrainingFloorWithHeadroom above the card), and skipping them changes no record
// that is read: the closest miss is read only for a card that ends without a best, the misses
// per count only below the first fit and where an almost-fit is looked for (a search that
// has a best is past both), and a second search records nothing. Where they are read, only
// setups whose floor is no closer than the closest recorded yet are skipped (Record keeps a
// strictly closer one).
bool Search::BelowFloor(int64_t n, const TrainingSetup& s) {
  if (!opt.prune) return false;
  ApplySetup(&q, n, s);
  const double floor = TrainingFloorWithHeadroom(q, c);
  if (floor <= q.gpu.CapacityBytes()) return false;
  if (earlier != nullptr || cs->best) return true;
  if (floor < cs->closest_need) return false;
  if (!AlmostFitApplies(ranking, base)) return true;
  const MissAt* m = MissOf(n);
  return m != nullptr && floor >= m->need;
}

// The run's tensor-parallel all-reduce time that no setup of this shape and recomputation
// can go below, from the one with the largest micro-batch: per token, the all-reduces' bytes
// are the same at every micro-batch and their latency is paid once per micro-batch, so the
// fewest micro-batches pay the least, and what overlap hides (compute, the same per token)
// does not change with it. The ZeRO stage changes neither. Zero when no bound could prune.
double Search::ExposedTensorParallel(int64_t n, const TrainingSetup& largest) {
  if (!opt.prune || !cs->best || largest.tp <= 1) return 0;
  ApplySetup(&q, n, largest);
  const TrainingPerf t = EstimateTraining(q, c);
  return t.tokens_per_step > 0 ? base.setup.workload.tokens * t.tp_exposed_s / t.tokens_per_step
                               : 0;
}

void Search::Materialise() {
  const auto request = [this](const SetupAt& at) {
    ApplySetup(&q, at.n, at.s);
    return q;
  };
  // Only what is read (search.h): the closest setup of a card where nothing fits, the misses
  // of one where an almost-fit is looked for.
  if (closest && !cs->best) cs->closest = request(*closest);
  if (!cs->best || !AlmostFitApplies(ranking, base)) return;
  for (const MissAt& m : misses) cs->kept.misses[m.at.n] = Miss{m.need, m.total, request(m.at)};
}

// Whether an earlier search of this card and request probed the shape and nothing fitted:
// the fit of a setup depends on nothing the two searches differ in (their ranking).
bool Search::KnownWithoutFit(int64_t n, int64_t tp, int64_t pp) const {
  if (earlier == nullptr) return false;
  const auto& known = earlier->shapes_without_fit;
  return std::binary_search(known.begin(), known.end(), std::array<int64_t, 3>{n, tp, pp});
}

void Search::Consider(int64_t n, const TrainingSetup& s, bool* stop_micro_batches) {
  ApplySetup(&q, n, s);
  const TrainingPerf t = EstimateTraining(q, c);
  const double cost = CostOf(q, t);
  const Key key = KeyOf(ranking, q, n, t, cost);
  if (opt.prune && cs->best && !key.Before(cs->best->key)) return;
  const FitCheck f = CheckFit(q, c);
  ++cs->evaluated;
  Record(f, n, s);
  if (!f.fits) {
    // Memory never shrinks as the micro-batch grows while the step accumulates (activations,
    // logits, in-flight micro-batches; Unaccumulated has the exception).
    *stop_micro_batches = opt.prune && f.layout_ok;
    return;
  }
  cs->fit_any = true;
  if (cs->kept.first_fit_count == 0 || n < cs->kept.first_fit_count) cs->kept.first_fit_count = n;
  const Constraints& k = base.constraints;
  // A deadline is met by the wall-clock time, interruptions included, with the run at the
  // upper end of its likely range (DeadlineSeconds).
  const double central = k.deadline_s > 0 ? WallClockSeconds(q, c, t) : t.time_s;
  const double wall = k.deadline_s > 0 ? AtRangeTop(central, t.time_s, band_high) : t.time_s;
  if (wall < cs->fastest_fit_s) {
    cs->fastest_fit_s = wall;
    cs->fastest_fit_central_s = central;
    cs->fastest_fit_count = n;
  }
  if (k.deadline_s > 0 && central <= k.deadline_s) cs->met_deadline_central = true;
  if (k.deadline_s > 0 && wall > k.deadline_s) return;
  cs->met_deadline = true;
  cs->cheapest_in_time_usd = std::min(cs->cheapest_in_time_usd, cost);
  if (k.budget_usd > 0 && cost > k.budget_usd) return;
  if (!cs->best || (key.Before(cs->best->key) && !MarginalLargerBatch(*cs->best, q, n, t))) {
    PlanChoice choice;
    choice.request = q;
    choice.count = n;
    choice.key = key.Vector();
    choice.figures.time_s = t.time_s;
    choice.figures.usd_total = std::isinf(cost) ? -1 : cost;
    choice.figures.scaling_efficiency = t.scaling_efficiency;
    cs->best = std::move(choice);
  }
}

void Search::Shape(int64_t n, int64_t tp, int64_t pp, const std::set<Recompute>& recomputes) {
  const StackLayouts& layouts = base.setup.stack->layouts;
  const int64_t dp = n / (tp * pp);
  const auto batches = BatchOptions(base.setup.workload, dp);
  if (batches.empty()) {
    // Only a batch smaller than the ranks limits the count; one it does not divide does not.
    const Workload& w = base.setup.workload;
    if (Flexible(w) ? 2 * w.global_batch < dp : w.global_batch < dp) {
      cs->batch_blocked_count = std::max(cs->batch_blocked_count, n);
    }
    return;
  }
  const double fill = 1 + PipelineFillSlots(pipeline, pp) / D(batches.front().second);
  FixedList<int64_t, 4> zeros =
      dp > 1 ? FixedList<int64_t, 4>{0, 1, 2, 3} : FixedList<int64_t, 4>{0};
  zeros.remove_if([&](int64_t z) { return z > layouts.max_zero; });
  // Per recomputation, the tensor-parallel floor, worked out when a bound first needs it.
  std::array<double, 2> exposed = {-1, -1};
  const auto exposed_for = [&](Recompute rc) {
    double& x = exposed[rc == work[0].first ? 0 : 1];
    if (x < 0 && cs->best) {
      x = ExposedTensorParallel(
          n, {tp, pp, zeros.front(), batches.back().first, batches.back().second, rc});
    }
    return std::max(0.0, x);
  };
  // Per ZeRO stage, whether BelowFloor skips it, asked once: a stage it skips stays skipped
  // (the records it guards only get closer, a best once found stays), and one it keeps is
  // simply searched.
  std::array<signed char, 4> below = {-1, -1, -1, -1};
  const auto below_floor = [&](int64_t z) {
    signed char& b = below[static_cast<size_t>(z)];
    if (b < 0) {
      b = BelowFloor(
              n, {tp, pp, z, batches[0].first, batches[0].second, base.setup.techniques.recompute})
              ? 1
              : 0;
    }
    return b == 1;
  };
  if (opt.prune) {
    // No setup of this shape can run faster than its compute alone. Checked before memory:
    // a bound that prunes needs a best found, so the card has an answer and what the memory
    // checks would record (the closest miss, for a rejection) is not read.
    if (CannotWin(least_work, fill, n)) return;
    // The request's recomputation makes the fewest all-reduces of the two.
    if (CannotWin(least_work, fill, n, exposed_for(base.setup.techniques.recompute))) return;
    // If no ZeRO stage and recomputation fits the smallest micro-batch, nor the unaccumulated
    // one (Unaccumulated), nothing of this shape does. The most sharded stage with full
    // recomputation is tried first, and the first fit ends the check; a shape where none fits
    // tries them all, so each miss is recorded as the full search records it.
    if (KnownWithoutFit(n, tp, pp)) return;
    bool any = false;
    const size_t unaccumulated = Unaccumulated(batches);
    const std::array<size_t, 2> probe_at = {0, unaccumulated};
    const size_t probes = unaccumulated > 0 && unaccumulated < batches.size() ? 2 : 1;
    for (auto z = zeros.rbegin(); z != zeros.rend() && !any; ++z) {
      if (below_floor(*z)) continue;
      for (auto rc = recomputes.rbegin(); rc != recomputes.rend() && !any; ++rc) {
        for (size_t k = 0; k < probes && !any; ++k) {
          const auto [mb, ga] = batches[probe_at[k]];
          const TrainingSetup setup{tp, pp, *z, mb, ga, *rc};
          ApplySetup(&q, n, setup);
          const FitCheck f = CheckFit(q, c);
          ++cs->evaluated;
          Record(f, n, setup);
          any = f.fits;
        }
      }
    }
    if (any && (cs->kept.first_fit_count == 0 || n < cs->kept.first_fit_count)) {
      cs->kept.first_fit_count = n;
    }
    if (!any) {
      cs->shapes_without_fit.push_back({n, tp, pp});
      return;
    }
  }
  for (int64_t z : zeros) {
    if (below_floor(z)) continue;
    for (Recompute rc : recomputes) {
      const size_t unaccumulated = Unaccumulated(batches);
      for (size_t i = 0; i < batches.size(); ++i) {
        const auto [mb, ga] = batches[i];
        // Larger micro-batches leave fewer of them to fill the pipeline: once the bound
        // (full recomputation's extra forward, the fill) rules one out, it rules out the rest.
        if (CannotWin(WorkOf(rc), 1 + PipelineFillSlots(pipeline, pp) / D(ga), n, exposed_for(rc),
                      /*same_recompute=*/true)) {
          break;
        }
        bool stop = false;
        Consider(n, {tp, pp, z, mb, ga, rc}, &stop);
        if (!stop) continue;
        // What does not fit accumulating does not fit with larger micro-batches accumulating;
        // the unaccumulated one is judged on its own.
        if (i + 1 >= unaccumulated) break;
        i = unaccumulated - 1;
      }
    }
  }
}

}  // namespace

CardSearch SearchTraining(const Question& request, const GpuSpec& g, const ParamCounts& c,
                          const PlanOptions& opt, Ranking ranking, const CardSearch* earlier) {
  CardSearch cs;
  Search s(request, c, opt, ranking, &cs, earlier);
  s.q.gpu = g;
  s.price = PricePerGpuHour(s.q);
  s.band_high = TimeBandHigh(s.q);
  s.pipeline = request.setup.training.pipeline;
  s.q.parallel = Parallel{};
  {
    // The fastest any layout of this card could compute: one GPU at a micro-batch larger than
    // any the search tries. A step's kernels reach a larger share of peak as the micro-batch
    // grows (each GEMM's launch and a step's weight casts amortise over more tokens), and
    // splitting a layer over tp or cp ranks only shrinks its GEMMs, so no setup beats it.
    // Of the two recomputations searched, the one whose kernels reach more of it.
    Setup widest = s.q;
    widest.workload.micro_batch = kBoundMicroBatch;
    widest.workload.grad_accum = 1;
    const TrainingPerf one = EstimateTraining(widest, c);
    widest.techniques.recompute = Recompute::kFull;
    const TrainingPerf full = EstimateTraining(widest, c);
    s.peak_eff = std::max(one.peak_flops * one.efficiency, full.peak_flops * full.efficiency);
    const double tokens = request.setup.workload.tokens;
    const TrainingFlops asked = TrainingFlopsPerToken(s.q, c);
    s.q.techniques.recompute = Recompute::kFull;
    s.work = {{{request.setup.techniques.recompute, tokens * asked.hardware_per_token},
               {Recompute::kFull, tokens * TrainingFlopsPerToken(s.q, c).hardware_per_token}}};
    s.q.techniques.recompute = request.setup.techniques.recompute;
    s.least_work = std::min(s.work[0].second, s.work[1].second);
    cs.one_gpu_bound_s = s.peak_eff > 0 ? tokens * asked.model_per_token / s.peak_eff : 0;
  }
  std::vector<int64_t> counts = PlanCounts(MaxGpus(request), g.gpus_per_node);
  cs.largest_count = counts.back();
  const bool count_first = CountFirst(ranking);
  // Time favours large counts: search downwards so the time bound prunes early.
  if (ranking == Ranking::kTime || ranking == Ranking::kFastestAboveKnee) {
    std::reverse(counts.begin(), counts.end());
  }
  const std::set<Recompute> recomputes = {request.setup.techniques.recompute, Recompute::kFull};
  const StackLayouts& layouts = request.setup.stack->layouts;
  for (int64_t n : counts) {
    if (count_first && cs.best) break;
    for (int64_t tp = 1; tp <= std::min<int64_t>(8, std::min(n, g.gpus_per_node)); tp *= 2) {
      for (int64_t pp = 1; tp * pp <= n && pp <= request.setup.model.layers; pp *= 2) {
        if (n % (tp * pp) != 0) continue;
        if (!layouts.model_parallel && tp * pp > 1) continue;  // data parallel only
        Parallel shape;
        shape.gpus = n;
        shape.tp = tp;
        shape.pp = pp;
        if (!CheckLayout(request.setup.model, shape).empty()) continue;
        s.Shape(n, tp, pp, recomputes);
      }
    }
  }
  std::sort(cs.shapes_without_fit.begin(), cs.shapes_without_fit.end());
  s.Materialise();
  return cs;
}

}  // namespace gpuplan::plan_search
