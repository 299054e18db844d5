// SPDX-License-Identifier: MIT
// The plan's advice (the card-sizing rules of thumb) and its almost-fits: each rule is stated
// only when this plan's numbers show it.
#include <cmath>
#include <cstdio>

#include "core/units.h"
#include "plan/batch_defaults.h"
#include "plan/search.h"

namespace gpuplan::plan_search {
namespace {

// The usual order of remedies when memory is a little short: a smaller batch (or sequence),
// then recomputation, a loss that does not hold all logits, a lighter optimizer; sharding and
// offloading after those; a bigger card last.
constexpr const char* kSeedOrder[] = {"halve_micro_batch", "halve_concurrency", "full_recompute",
                                      "chunked_loss",      "adamw_8bit",        "fp8_kv_cache",
                                      "next_zero_stage",   "sequence_parallel", "offload_optimizer",
                                      "fp8_weights",       "awq_int4_weights",  "qlora_instead",
                                      "lora_instead",      "bigger_card"};

// The rank of a lever's code in kSeedOrder; codes not listed rank last.
size_t SeedRank(const std::string& code) {
  return static_cast<size_t>(std::find(std::begin(kSeedOrder), std::end(kSeedOrder), code) -
                             std::begin(kSeedOrder));
}

// The levers that fit, in kSeedOrder.
std::vector<Lever> InSeedOrder(const std::vector<Lever>& levers) {
  std::vector<Lever> out;
  for (size_t rank = 0; rank <= std::size(kSeedOrder); ++rank) {
    for (const Lever& l : levers) {
      if (l.fits && SeedRank(l.code) == rank) out.push_back(l);
    }
  }
  return out;
}

// A card with more memory that the plan already holds at this count or fewer.
std::optional<Lever> BiggerCard(const Setup& setup, int64_t count,
                                const std::vector<PlanChoice>& others) {
  for (const PlanChoice& o : others) {  // best first
    if (o.count > count || o.request.gpu.CapacityBytes() <= setup.gpu.CapacityBytes()) continue;
    Lever l;
    l.code = "bigger_card";
    l.path = "/gpu";
    l.value = Say("\"%s\"", o.request.gpu.id.c_str());
    l.fits = true;
    l.cost = Say("a different card: %s (%s)", o.request.gpu.name.c_str(), o.rank_reason.c_str());
    if (setup.workload.IsTraining()) {
      const double here = EstimateTraining(setup, CountParams(setup.model)).time_s;
      l.time_factor = here > 0 ? o.figures.time_s / here : 0;
    }
    return l;
  }
  return std::nullopt;
}

// Whether the smaller setup, once a lever slowing it by `time_factor` makes it fit, still
// answers the request: its wall-clock time with interruptions, at the upper end of its likely
// range, within the deadline (the search's own rule) and its cost within the budget.
bool MeetsConstraints(const Question& base, const Setup& setup, double time_factor) {
  const Constraints& k = base.constraints;
  if (k.deadline_s <= 0 && k.budget_usd <= 0) return true;
  const ParamCounts c = CountParams(setup.model);
  const TrainingPerf t = EstimateTraining(setup, c);
  const double factor = time_factor > 0 ? time_factor : 1;
  const double wall = DeadlineSeconds(setup, c, t, TimeBandHigh(setup)) * factor;
  if (k.deadline_s > 0 && wall > k.deadline_s) return false;
  const double price = PricePerGpuHour(setup);
  return k.budget_usd <= 0 ||
         (price >= 0 && price * D(setup.parallel.gpus) * t.time_s * factor / 3600 <= k.budget_usd);
}

}  // namespace

std::optional<AlmostFit> AlmostFitFor(const Question& base, Ranking ranking, const KeptMisses& cs,
                                      const PlanChoice& choice,
                                      const std::vector<PlanChoice>& others) {
  // Serving is left out: its misses are judged at one sequence, not at the requested
  // concurrency.
  if (!AlmostFitApplies(ranking, base)) return std::nullopt;
  const double cap = choice.request.gpu.CapacityBytes();
  // "Misses by little": within the headroom, or 10% of the card when the headroom is smaller.
  const double slack = std::max(choice.request.headroom, 0.1);
  // Only counts where nothing fits: on a count where some setup fits the card does not almost
  // fit, it fits and ranks lower. Those counts precede the first fit, which every ranking
  // judged here reaches counting upwards, before a best is found that could prune: the
  // misses there are what the exhaustive search records.
  const int64_t below =
      cs.first_fit_count > 0 ? std::min(choice.count, cs.first_fit_count) : choice.count;
  for (const auto& [count, miss] : cs.misses) {  // fewest cards first
    if (count >= below) break;
    if (!miss.setup || miss.need > cap * (1 + slack)) continue;
    if (!MeetsConstraints(base, *miss.setup, 1)) continue;
    AlmostFit a;
    a.setup = *miss.setup;
    a.count = count;
    a.total_bytes = miss.total;
    a.total_with_headroom_bytes = miss.need;
    a.capacity_bytes = cap;
    std::vector<Lever> levers = MemoryLevers(a.setup, miss.total);
    if (auto bigger = BiggerCard(a.setup, count, others)) levers.push_back(*bigger);
    a.levers = InSeedOrder(levers);
    a.levers.erase(std::remove_if(a.levers.begin(), a.levers.end(),
                                  [&](const Lever& l) {
                                    return l.code != "bigger_card" &&
                                           !MeetsConstraints(base, a.setup, l.time_factor);
                                  }),
                   a.levers.end());
    if (!a.levers.empty()) return a;
  }
  return std::nullopt;
}

namespace {

void AdviseBatch(const Question& base, const PlanResult& plan, std::vector<Note>* advice) {
  if (!base.setup.workload.IsTraining()) return;
  const BatchDefault b =
      DefaultGlobalBatch(base.setup.workload, D(CountParams(base.setup.model).total));
  const double tokens = D(plan.global_batch) * D(base.setup.workload.seq_len);
  const std::string message =
      plan.global_batch_default
          ? Say("every setup keeps the global batch of %lld sequences (%.0f tokens) per optimizer "
                "step: the default, %s; set workload.global_batch to change it",
                static_cast<long long>(plan.global_batch), tokens, b.source.c_str())
          : Say("every setup keeps the request's global batch of %lld sequences (%.0f tokens) "
                "per optimizer step",
                static_cast<long long>(plan.global_batch), tokens);
  advice->push_back(Note{plan.global_batch_default ? "global_batch_default" : "global_batch_fixed",
                         {{"sequences", D(plan.global_batch)}, {"tokens", tokens}},
                         message,
                         "/workload/global_batch"});
}

void AdviseScale(const Question& base, Ranking ranking, const PlanChoice& top,
                 std::vector<Note>* advice) {
  const GpuSpec& g = top.request.gpu;
  const bool training = base.setup.workload.IsTraining();
  if (ranking == Ranking::kFastestAboveKnee && top.fewest_cards) {
    const FewestCards& f = *top.fewest_cards;
    advice->push_back(Note{
        "fastest_without_deadline",
        {{"count", D(top.count)},
         {"time_s", top.figures.time_s},
         {"fewest_count", D(f.count)},
         {"fewest_time_s", f.time_s}},
        Say("with no deadline the fastest setup that still scales is shown: "
            "%lld x %s take %s; the fewest cards, %lld, take %s; give "
            "constraints.deadline_s for the fewest cards that meet it",
            static_cast<long long>(top.count), g.name.c_str(), Duration(top.figures.time_s).c_str(),
            static_cast<long long>(f.count), Duration(f.time_s).c_str()),
        "/constraints/deadline_s"});
  }
  // "Keep a job inside one machine when one machine can hold it" is worth saying of a job that
  // is done in weeks, and of a job whose cards work together (serving replicas of one card each
  // cross no link).
  constexpr double kMonth = 30 * 86400.0;
  const bool long_run = training && top.figures.time_s > kMonth;
  const bool together = training || top.request.parallel.gpus > 1;
  if (top.count > 1 && top.count <= g.gpus_per_node && !long_run && together) {
    advice->push_back(Note{"keep_inside_one_node",
                           {{"count", D(top.count)}, {"gpus_per_node", D(g.gpus_per_node)}},
                           Say("the job fits inside one %s server (%lld of %lld slots): keep it "
                               "there, crossing nodes costs more than adding cards inside one",
                               g.name.c_str(), static_cast<long long>(top.count),
                               static_cast<long long>(g.gpus_per_node))});
  }
  // A long run says what would shorten it: more cards where the count limit binds the fastest
  // setup, a deadline where the fewest cards were chosen; nothing when the user set a deadline
  // (the run meets it) or the scaling knee stopped the count.
  if (!long_run || base.constraints.deadline_s > 0) return;
  const int64_t largest = PlanCounts(MaxGpus(base), g.gpus_per_node).back();
  const bool count_binds = ranking == Ranking::kFastestAboveKnee && top.count >= largest;
  if (ranking == Ranking::kFastestAboveKnee && !count_binds) return;
  advice->push_back(Note{
      "long_run",
      {{"count", D(top.count)}, {"time_s", top.figures.time_s}},
      count_binds ? Say("the first option runs %s on all %lld cards max_gpus allows: a larger "
                        "constraints.max_gpus shortens it",
                        Duration(top.figures.time_s).c_str(), static_cast<long long>(top.count))
                  : Say("the first option runs %s on the fewest cards, %lld: a deadline "
                        "(constraints.deadline_s) trades cards for time",
                        Duration(top.figures.time_s).c_str(), static_cast<long long>(top.count)),
      count_binds ? "/constraints/max_gpus" : "/constraints/deadline_s"});
}

void AdviseModelParallel(const Question& base, const PlanResult& out, std::vector<Note>* advice) {
  const PlanChoice& top = out.recommendations.front();
  const Setup& q = top.request;
  const GpuSpec& g = q.gpu;
  const auto one = std::find_if(out.recommendations.begin(), out.recommendations.end(),
                                [](const PlanChoice& c) { return c.count == 1; });
  if (top.count > 1 && one != out.recommendations.end()) {
    advice->push_back(Note{
        "one_big_card",
        {{"top_count", D(top.count)}},
        Say("one %s holds the whole job where %s needs %lld: one big card "
            "avoids model-parallel losses",
            one->request.gpu.name.c_str(), g.name.c_str(), static_cast<long long>(top.count))});
  }
  if (q.parallel.tp <= 1) return;
  const bool pcie = g.intra_node_kind.rfind("pcie", 0) == 0;
  if (q.parallel.tp <= 4 && !pcie) return;
  const bool training = base.setup.workload.IsTraining();
  const double scaling =
      training ? EstimateTraining(q, CountParams(q.model)).scaling_efficiency : 1.0;
  advice->push_back(Note{
      pcie ? "model_parallel_over_pcie" : "model_parallel_beyond_four",
      {{"tp", D(q.parallel.tp)}, {"scaling_efficiency", scaling}},
      training ? Say("%lld-way tensor parallel%s loses speed to its per-layer all-reduces "
                     "(scaling efficiency %.0f%%): a card with more memory needs less of it",
                     static_cast<long long>(q.parallel.tp), pcie ? " over PCIe" : "", scaling * 100)
               : Say("%lld-way tensor parallel%s loses speed to its per-layer all-reduces: a "
                     "card with more memory needs less of it",
                     static_cast<long long>(q.parallel.tp), pcie ? " over PCIe" : "")});
}

}  // namespace

std::optional<Note> LeverForRejected(const PlanRejection& rejection, const CardSearch& cs) {
  if (rejection.code != "exceeds_memory" || !cs.closest) return std::nullopt;
  const Setup& q = *cs.closest;
  // One change is looked for only when the setup almost fits; two or three together can take
  // off far more (a paged 8-bit optimizer alone moves 12 bytes a parameter to the host).
  const bool almost = cs.closest_need <= 1.3 * q.gpu.CapacityBytes();
  const double total = cs.closest_need / (1 + q.headroom);
  for (const Lever& l : almost ? MemoryLevers(q, total) : std::vector<Lever>{}) {
    if (!l.fits) continue;
    return Note{
        "lever_makes_it_fit",
        {{"count", D(q.parallel.gpus)}, {"saved_bytes", l.saved_bytes}},
        Say("%s almost fits on %lld card%s: setting %s to %s makes it fit, at a cost: %s",
            q.gpu.name.c_str(), static_cast<long long>(q.parallel.gpus),
            q.parallel.gpus > 1 ? "s" : "", l.path.c_str(), l.value.c_str(), l.cost.c_str()),
        l.path};
  }
  // No single change: two or three together, the cheapest in time (LeverCombinations).
  const auto combos = LeverCombinations(q, total);
  if (combos.empty()) return std::nullopt;
  const LeverCombination& c = combos.front();
  std::string changes;
  for (const Lever& l : c.levers)
    changes += (changes.empty() ? "" : ", ") + l.path + " = " + l.value;
  return Note{"levers_together_make_it_fit",
              {{"count", D(q.parallel.gpus)},
               {"saved_bytes", c.saved_bytes},
               {"levers", D(c.levers.size())},
               {"time_factor", c.time_factor}},
              Say("%s fits on %lld card%s with no single change, but with %zu together: %s "
                  "(time x%.2f)",
                  q.gpu.name.c_str(), static_cast<long long>(q.parallel.gpus),
                  q.parallel.gpus > 1 ? "s" : "", c.levers.size(), changes.c_str(), c.time_factor),
              c.levers.front().path};
}

void Advise(const Question& base, Ranking ranking, std::vector<Note> rejected_levers,
            PlanResult* out) {
  AdviseBatch(base, *out, &out->advice);
  if (!out->recommendations.empty()) {
    AdviseScale(base, ranking, out->recommendations.front(), &out->advice);
    AdviseModelParallel(base, *out, &out->advice);
  }
  for (Note& n : rejected_levers) out->advice.push_back(std::move(n));
}

}  // namespace gpuplan::plan_search
