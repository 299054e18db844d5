// SPDX-License-Identifier: MIT
// The search behind `gpuplan plan`. Memory is the hard filter (memory first, count second,
// interconnect last); among what fits, the purpose picks the order: a card per row, each with
// why it is where it is.
#include "plan/planner.h"

#include <algorithm>
#include <cmath>

#include "core/units.h"
#include "physics/error_bands.h"
#include "physics/reliability.h"
#include "plan/batch_defaults.h"
#include "plan/search.h"

namespace gpuplan {

using plan_search::CardSearch;
using plan_search::D;

namespace plan_search {

double PricePerGpuHour(const Setup& q) {
  return q.pricing.usd_per_gpu_hour >= 0 ? q.pricing.usd_per_gpu_hour
                                         : q.gpu.usd_per_hour.value_or(-1);
}

double WallClockSeconds(const Setup& q, const ParamCounts& c, const TrainingPerf& t) {
  return t.time_s + EstimateReliability(q, c, t).expected_lost_s;
}

double TimeBandHigh(const Setup& r) {
  const ErrorBand* b = BandFor("training", r.stack->id, r.gpu.generation);
  return b != nullptr ? std::max(1.0, b->high) : 1.0;
}

void Track(CardSearch* cs, const Setup& q, const FitCheck& f) {
  if (!f.layout_ok) return;
  if (f.total_with_headroom_bytes < cs->closest_need) {
    cs->closest_need = f.total_with_headroom_bytes;
    cs->closest = q;
  }
}

}  // namespace plan_search

namespace {

double NodeWatts(const GpuSpec& g, int64_t gpus) {
  return g.board_power_w * (1 + kNodeOverheadFraction) * D(std::min(gpus, g.gpus_per_node));
}

// Why a card is excluded before any setup is tried.
std::optional<PlanRejection> SiteProblem(const Setup& r, const GpuSpec& g) {
  if (auto card = CardProblem(r, g)) {
    return PlanRejection{g.id, card->code, card->message, {}, card->path};
  }
  if (r.targets.cooling == "air" && g.cooling == "liquid") {
    return PlanRejection{g.id,
                         "needs_liquid_cooling",
                         g.name + " needs liquid cooling; the site offers air only",
                         {},
                         "/constraints/cooling"};
  }
  // Cards on a baseboard (SXM, OAM, superchip trays, Ascend's boards) come as a whole board
  // of gpus_per_node: a server cannot hold fewer of them, so its full draw must fit the node.
  // PCIe and NVL cards go into servers one by one.
  const bool baseboard = g.form_factor == "sxm" || g.form_factor == "oam" ||
                         g.form_factor == "superchip" || g.form_factor == "board";
  const int64_t smallest = baseboard ? g.gpus_per_node : 1;
  const double watts = NodeWatts(g, smallest);
  if (r.targets.node_power_w > 0 && watts > r.targets.node_power_w) {
    return PlanRejection{
        g.id,
        "node_power",
        (baseboard ? "a server of " + std::to_string(smallest) + " " + g.name + " (one baseboard)"
                   : "one " + g.name + " with its share of a server") +
            " draws " + std::to_string(std::lround(watts)) + " W, above the node limit of " +
            std::to_string(std::lround(r.targets.node_power_w)) + " W",
        {{"node_watts", watts},
         {"limit_w", r.targets.node_power_w},
         {"gpus_per_node", D(smallest)}},
        "/constraints/node_power_w"};
  }
  return std::nullopt;
}

// The global batch held fixed while the count varies (the contract): the request's; else, when
// it named grad_accum, micro_batch x grad_accum x its data-parallel ranks; else published
// practice (batch_defaults.h).
int64_t FixGlobalBatch(Setup* base, bool* by_default) {
  Workload& w = base->workload;
  *by_default = false;
  if (!w.IsTraining()) return 0;
  if (w.global_batch == 0 && w.batch_given) {
    w.global_batch = w.micro_batch * w.grad_accum * std::max<int64_t>(1, base->parallel.Dp());
  } else if (w.global_batch == 0) {
    w.global_batch = DefaultGlobalBatch(w, D(CountParams(base->model).total)).sequences;
    *by_default = true;
  }
  return w.global_batch;
}

// Under a node power limit, servers hold only the cards the limit feeds: partly filled nodes,
// and everything beyond them crosses the network.
GpuSpec FedCard(const Question& base, const GpuSpec& card) {
  GpuSpec g = card;
  if (base.setup.targets.node_power_w > 0) {
    const auto fed = static_cast<int64_t>(base.setup.targets.node_power_w /
                                          (g.board_power_w * (1 + kNodeOverheadFraction)));
    g.gpus_per_node = std::max<int64_t>(1, std::min(g.gpus_per_node, fed));
  }
  return g;
}

// Pretraining without a deadline shows the fewest-cards setup beside the fastest.
void AddFewestCards(const Question& base, const GpuSpec& g, const ParamCounts& c,
                    const PlanOptions& options, CardSearch* cs, PlanResult* out) {
  CardSearch fewest = plan_search::SearchTraining(base, g, c, options, Ranking::kCount, cs);
  out->setups_evaluated += fewest.evaluated;
  if (!fewest.best || fewest.best->count >= cs->best->count) return;
  const PlanChoice& f = *fewest.best;
  cs->best->fewest_cards = FewestCards{f.request, f.count, f.figures.time_s, f.figures.usd_total};
}

// How cards compare with each other. Under a deadline each card's own answer is the fewest
// of it that meet the deadline; across cards the fewest-cards rule would put 64 cards of one
// class at $1.3M before 128 of another at $0.9M that also finish sooner, so cards are ranked
// by the run's cost (priced first), then count, then time. Otherwise as within a card.
// Every ranking leads with the card's supply tier (SupplyTier).
std::vector<double> AcrossCards(Ranking ranking, const PlanChoice& c) {
  std::vector<double> key = {D(plan_search::SupplyTier(c.request.gpu))};
  if (ranking != Ranking::kFewestMeetingDeadline) {
    key.insert(key.end(), c.key.begin(), c.key.end());
    return key;
  }
  const double usd = c.figures.usd_total;
  if (usd < 0) {
    key.insert(key.end(), {1, D(c.count), c.figures.time_s});
  } else {
    key.insert(key.end(), {0, usd, D(c.count), c.figures.time_s});
  }
  return key;
}

// The indices 0..n-1 ordered by `before`, stable: a bottom-up merge sort.
template <class Before>
std::vector<size_t> MergeOrder(size_t n, const Before& before) {
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::vector<size_t> merged(n);
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * width) {
      const size_t mid = std::min(lo + width, n);
      const size_t hi = std::min(lo + 2 * width, n);
      size_t a = lo;
      size_t b = mid;
      size_t k = lo;
      while (a < mid && b < hi) merged[k++] = before(order[b], order[a]) ? order[b++] : order[a++];
      while (a < mid) merged[k++] = order[a++];
      while (b < hi) merged[k++] = order[b++];
    }
    order.swap(merged);
  }
  return order;
}

}  // namespace

Ranking RankingFor(const Question& r) {
  const std::string& o = r.constraints.objective;
  if (o == "time") return Ranking::kTime;
  if (o == "cost") return Ranking::kCost;
  if (o == "count") return Ranking::kCount;
  if (o == "power") return Ranking::kPower;
  const Workload& w = r.setup.workload;
  if (!w.IsTraining()) return Ranking::kCheapestPerToken;
  if (w.kind != WorkloadKind::kPretrain) return Ranking::kFewestThenCheapest;
  return r.constraints.deadline_s > 0 ? Ranking::kFewestMeetingDeadline
                                      : Ranking::kFastestAboveKnee;
}

std::vector<int64_t> PlanCounts(int64_t max_gpus, int64_t gpus_per_node) {
  // Powers of two, every whole number of nodes up to eight, then 2^j and 3 x 2^j nodes: the
  // sizes clusters are bought and rented in, without a count list that grows with max_gpus.
  // A sorted vector, not a set: one is made per card search, and a set's nodes were each an
  // allocation.
  std::vector<int64_t> counts;
  counts.reserve(64);  // one allocation for any max_gpus up to a million
  for (int64_t n = 1; n <= max_gpus; n *= 2) counts.push_back(n);
  for (int64_t k = 1; k <= 8 && k * gpus_per_node <= max_gpus; ++k) {
    counts.push_back(k * gpus_per_node);
  }
  for (int64_t k = 16; k * gpus_per_node <= max_gpus; k *= 2) {
    counts.push_back(k * gpus_per_node);
    if (3 * k / 2 * gpus_per_node <= max_gpus) counts.push_back(3 * k / 2 * gpus_per_node);
  }
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

PlanResult Plan(const Question& base_request, const std::vector<GpuSpec>& cards,
                const PlanOptions& options) {
  PlanResult out;
  Question base = base_request;
  out.global_batch = FixGlobalBatch(&base.setup, &out.global_batch_default);
  const Ranking ranking = RankingFor(base);
  const ParamCounts c = CountParams(base.setup.model);
  // Each card's search is dropped once its row is made: what later steps read of it is kept
  // (the misses an almost-fit is looked among, the lever advice for a rejected card). Kept
  // whole, they were 22 KB a card: a serving plan over 10x the catalog peaked at 21 MB, out of
  // the caches, and its time per card grew with the catalog (5 MB and flat since).
  std::map<std::string, plan_search::KeptMisses> kept;
  const bool keep_misses = plan_search::AlmostFitApplies(ranking, base);
  std::vector<Note> rejected_levers;
  // A PlanChoice holds a whole Setup: growing the list would move every one made so far.
  out.recommendations.reserve(cards.size());
  for (const GpuSpec& card : cards) {
    if (auto site = SiteProblem(base.setup, card)) {
      out.rejected.push_back(std::move(*site));
      continue;
    }
    const GpuSpec g = FedCard(base, card);
    CardSearch cs = base.setup.workload.IsTraining()
                        ? plan_search::SearchTraining(base, g, c, options, ranking)
                        : plan_search::SearchServing(base, g, c, ranking);
    out.setups_evaluated += cs.evaluated;
    if (cs.best) {
      if (ranking == Ranking::kFastestAboveKnee) AddFewestCards(base, g, c, options, &cs, &out);
      plan_search::Label(base, ranking, &*cs.best);
      out.recommendations.push_back(std::move(*cs.best));
      if (keep_misses) {
        kept.emplace(g.id, std::move(cs.kept));
      }
    } else {
      out.rejected.push_back(plan_search::RejectionFor(base, g, cs));
      if (auto lever = plan_search::LeverForRejected(out.rejected.back(), cs)) {
        rejected_levers.push_back(std::move(*lever));
      }
    }
  }
  // Ordered by index (moving PlanChoices is dear), by a bottom-up merge: n log n. The
  // insertion it replaces took 1.3 ms of a 16 ms serving plan over 10x the catalog and 20 ms
  // at 100x; std::sort's instantiations would add kilobytes to the page's download (measured
  // with --profiling-funcs: 10 KB of code for sorting PlanChoices by value).
  const auto& recs = out.recommendations;
  std::vector<std::vector<double>> keys;
  keys.reserve(recs.size());
  for (const PlanChoice& r : recs) keys.push_back(AcrossCards(ranking, r));
  const auto before = [&recs, &keys](size_t i, size_t j) {
    if (plan_search::Better(keys[i], keys[j])) return true;
    if (plan_search::Better(keys[j], keys[i])) return false;
    return recs[i].request.gpu.id < recs[j].request.gpu.id;  // deterministic tie-break
  };
  const std::vector<size_t> order = MergeOrder(recs.size(), before);
  std::vector<PlanChoice> sorted;
  sorted.reserve(order.size());
  for (size_t i : order) sorted.push_back(std::move(out.recommendations[i]));
  out.recommendations = std::move(sorted);
  if (keep_misses) {
    for (PlanChoice& choice : out.recommendations) {
      choice.almost_fits = plan_search::AlmostFitFor(base, ranking, kept.at(choice.request.gpu.id),
                                                     choice, out.recommendations);
    }
  }
  plan_search::Advise(base, ranking, std::move(rejected_levers), &out);
  return out;
}

}  // namespace gpuplan
