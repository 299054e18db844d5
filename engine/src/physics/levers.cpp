// SPDX-License-Identifier: MIT
// The memory levers: each is one change a user can make, re-estimated on its own, so
// "almost fits" comes with the change that fixes it and what that change costs.
#include "physics/levers.h"

#include <algorithm>
#include <functional>

#include "physics/estimate.h"
#include "physics/perf_model.h"

namespace gpuplan {
namespace {

struct Candidate {
  const char* code;
  const char* path;
  std::string value;
  const char* cost;
  std::function<void(Setup*)> apply;
};

std::vector<Candidate> TrainingCandidates(const Setup& r) {
  std::vector<Candidate> c;
  const MemoryTechniques& t = r.techniques;
  const Workload& w = r.workload;
  const Parallel& p = r.parallel;
  if (t.recompute != Recompute::kFull) {
    c.push_back({"full_recompute", "/memory_techniques/recompute", "\"full\"",
                 "recomputes each layer's forward in backward: about a third more compute",
                 [](Setup* q) { q->techniques.recompute = Recompute::kFull; }});
  }
  if (!t.chunked_loss) {
    c.push_back({"chunked_loss", "/memory_techniques/chunked_loss", "true",
                 "negligible: the loss is computed chunk by chunk",
                 [](Setup* q) { q->techniques.chunked_loss = true; }});
  }
  if (w.micro_batch > 1) {
    c.push_back({"halve_micro_batch", "/workload/micro_batch", std::to_string(w.micro_batch / 2),
                 "same tokens per step with twice the gradient accumulation; smaller matmuls run "
                 "less efficiently",
                 [](Setup* q) {
                   q->workload.micro_batch /= 2;
                   q->workload.grad_accum *= 2;
                 }});
  }
  if (p.ShardGroup() > 1 && p.zero < 3) {
    static const char* const kCost[] = {
        "", "none: optimizer states are sharded, communication unchanged",
        "none beyond a reduce-scatter in place of the all-reduce",
        "weights are all-gathered every layer: about 1.5x the data-parallel traffic"};
    const int next = p.zero + 1;
    c.push_back({"next_zero_stage", "/parallel/zero", std::to_string(next), kCost[next],
                 [next](Setup* q) { q->parallel.zero = next; }});
  }
  if (r.optimizer == Optimizer::kAdamW || r.optimizer == Optimizer::kAdam) {
    c.push_back({"adamw_8bit", "/optimizer", "\"adamw_8bit\"",
                 "negligible time; the moments are block-quantised to 8 bits",
                 [](Setup* q) { q->optimizer = Optimizer::kAdamW8bit; }});
  }
  if (r.optimizer == Optimizer::kAdamW || r.optimizer == Optimizer::kAdam ||
      r.optimizer == Optimizer::kAdamW8bit) {
    c.push_back({"paged_adamw_8bit", "/optimizer", "\"paged_adamw_8bit\"",
                 "8-bit moments in CUDA unified memory, paged to the host under pressure "
                 "(bitsandbytes' paged optimizers): slower steps when they page",
                 [](Setup* q) { q->optimizer = Optimizer::kPagedAdamW8bit; }});
  }
  if (!t.optimizer_in_backward && w.kind != WorkloadKind::kLora && w.kind != WorkloadKind::kQlora) {
    c.push_back(
        {"optimizer_in_backward", "/memory_techniques/optimizer_in_backward", "true",
         "each parameter is stepped as its gradient is ready (torchtune's optimizer-in-backward "
         "option): no gradient accumulation over micro-batches",
         [](Setup* q) { q->techniques.optimizer_in_backward = true; }});
  }
  if (r.precision.master == MasterWeights::kFp32 && !w.IsPeft() &&
      IsFloatTrainable(r.precision.weights)) {
    c.push_back({"pure_bf16", "/precision/master_weights", "\"none\"",
                 "no fp32 master copy: the weights and moments are stepped in bf16, and updates "
                 "below bf16's resolution are lost",
                 [](Setup* q) {
                   q->precision.master = MasterWeights::kNone;
                   q->training.optimizer_states = StateDtype::kParam;
                 }});
  }
  if (!t.offload_optimizer && !t.offload_params) {
    c.push_back({"offload_optimizer", "/memory_techniques/offload", "\"optimizer\"",
                 "the optimizer step runs on the CPU and gradients cross PCIe every step (the "
                 "time model does not price that traffic: no time factor)",
                 [](Setup* q) { q->techniques.offload_optimizer = true; }});
  }
  if (p.tp > 1 && !p.sequence_parallel) {
    c.push_back({"sequence_parallel", "/parallel/sequence_parallel", "true",
                 "none: the all-reduces become reduce-scatter + all-gather of the same volume",
                 [](Setup* q) { q->parallel.sequence_parallel = true; }});
  }
  if (w.kind == WorkloadKind::kFullFinetune) {  // pretraining has no adapter alternative
    c.push_back(
        {"lora_instead", "/workload/kind", "\"lora\"",
         "trains adapters instead of every weight: a different quality trade-off", [](Setup* q) {
           q->workload.kind = WorkloadKind::kLora;
           q->workload.lora_targets = {true, true, true, true, true, true, true, false, true};
         }});
  } else if (w.kind == WorkloadKind::kLora && IsFloatTrainable(r.precision.weights)) {
    c.push_back({"qlora_instead", "/workload/kind", "\"qlora\"",
                 "4-bit NF4 base: dequantisation slows each step, small quality cost",
                 [](Setup* q) {
                   q->workload.kind = WorkloadKind::kQlora;
                   q->precision.weights = WeightFormat::kNf4;
                   q->precision.quant = {64, true};
                 }});
  }
  return c;
}

std::vector<Candidate> InferenceCandidates(const Setup& r) {
  std::vector<Candidate> c;
  const KvFormat kv = r.precision.kv_cache;
  if (kv == KvFormat::kBf16 || kv == KvFormat::kFp16 || kv == KvFormat::kFp32) {
    c.push_back({"fp8_kv_cache", "/precision/kv_cache", "\"fp8\"",
                 "half the KV bytes read per step; small accuracy cost",
                 [](Setup* q) { q->precision.kv_cache = KvFormat::kFp8; }});
  }
  const WeightFormat wf = r.precision.weights;
  if (wf == WeightFormat::kBf16 || wf == WeightFormat::kFp16 || wf == WeightFormat::kFp32) {
    c.push_back({"fp8_weights", "/precision/weights", "\"fp8\"",
                 "half the weight bytes; needs fp8 units for full speed",
                 [](Setup* q) { q->precision.weights = WeightFormat::kFp8; }});
    c.push_back({"awq_int4_weights", "/precision/weights", "\"awq_int4\"",
                 "a quarter of the weight bytes; a measurable quality cost", [](Setup* q) {
                   q->precision.weights = WeightFormat::kAwqInt4;
                   q->precision.quant = {128, true};
                 }});
  }
  if (r.workload.concurrency > 1) {
    c.push_back({"halve_concurrency", "/workload/concurrency",
                 std::to_string(r.workload.concurrency / 2),
                 "halves the sequences served at once, and with them the throughput",
                 [](Setup* q) { q->workload.concurrency /= 2; }});
  }
  return c;
}

// What a lever's factor compares: the run's time for training, the time per output token at
// the requested concurrency for serving; 0 when the setup cannot run.
double TimeOf(const Setup& r) {
  if (r.workload.IsTraining()) return EstimateTraining(r, CountParams(r.model)).time_s;
  return EstimateSetup(r, /*with_levers=*/false).serving.at_request.tpot_s;
}

}  // namespace

std::vector<LeverCombination> LeverCombinations(const Setup& r, double base_total, size_t at_most) {
  std::vector<LeverCombination> out;
  const auto candidates = r.workload.IsTraining() ? TrainingCandidates(r) : InferenceCandidates(r);
  const size_t n = candidates.size();
  if (n < 2) return out;
  const ParamCounts params = CountParams(r.model);
  const double base_time = TimeOf(r);
  // Pairs, then triples: a combination whose subset already fits is not offered (it would only
  // add cost), nor one that sets the same field twice.
  std::vector<std::vector<size_t>> fitting;
  const auto contains_fitting = [&fitting](const std::vector<size_t>& idx) {
    return std::any_of(fitting.begin(), fitting.end(), [&idx](const std::vector<size_t>& f) {
      return std::includes(idx.begin(), idx.end(), f.begin(), f.end());
    });
  };
  const auto consider = [&](const std::vector<size_t>& idx) {
    for (size_t a = 0; a < idx.size(); ++a) {
      for (size_t b = a + 1; b < idx.size(); ++b) {
        if (std::string(candidates[idx[a]].path) == candidates[idx[b]].path) return;
      }
    }
    if (contains_fitting(idx)) return;
    Setup changed = r;
    for (size_t i : idx) candidates[i].apply(&changed);
    const FitCheck e = CheckFit(changed, params);
    if (!e.fits) return;
    fitting.push_back(idx);
    LeverCombination combo;
    bool timed = base_time > 0;
    for (size_t i : idx) {
      const Candidate& c = candidates[i];
      combo.levers.push_back(Lever{c.code, c.path, c.value, 0, 0, 0, false, c.cost, 0});
      timed = timed && std::string(c.code).rfind("offload", 0) != 0;
    }
    combo.total_bytes = e.total_bytes;
    combo.total_with_headroom_bytes = e.total_with_headroom_bytes;
    combo.saved_bytes = base_total - e.total_bytes;
    combo.time_factor = timed ? TimeOf(changed) / base_time : 0;
    out.push_back(std::move(combo));
  };
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = a + 1; b < n; ++b) consider({a, b});
  }
  if (at_most >= 3) {
    for (size_t a = 0; a < n; ++a) {
      for (size_t b = a + 1; b < n; ++b) {
        for (size_t c = b + 1; c < n; ++c) consider({a, b, c});
      }
    }
  }
  // Those that keep the job (not LoRA in place of a full fine-tune) first; then cheapest in
  // time (an unpriced one, 0, after every priced one), then fewer levers.
  const auto changes_job = [](const LeverCombination& x) {
    return std::any_of(x.levers.begin(), x.levers.end(),
                       [](const Lever& l) { return l.path == "/workload/kind"; });
  };
  std::stable_sort(out.begin(), out.end(),
                   [&](const LeverCombination& x, const LeverCombination& y) {
                     if (changes_job(x) != changes_job(y)) return !changes_job(x);
                     const double tx = x.time_factor > 0 ? x.time_factor : 1e9;
                     const double ty = y.time_factor > 0 ? y.time_factor : 1e9;
                     return tx != ty ? tx < ty : x.levers.size() < y.levers.size();
                   });
  if (out.size() > 5) out.resize(5);
  return out;
}

std::vector<Lever> MemoryLevers(const Setup& r, double base_total) {
  std::vector<Lever> out;
  const auto candidates = r.workload.IsTraining() ? TrainingCandidates(r) : InferenceCandidates(r);
  const ParamCounts params = CountParams(r.model);
  const double base_time = candidates.empty() ? 0 : TimeOf(r);
  for (const Candidate& c : candidates) {
    Setup changed = r;
    c.apply(&changed);
    const FitCheck e = CheckFit(changed, params);
    const double saved = base_total - e.total_bytes;
    if (saved <= 0) continue;
    // Offloading's PCIe traffic is not in the time model: its factor would read as free.
    const bool timed = std::string(c.code).rfind("offload", 0) != 0 && base_time > 0;
    out.push_back(Lever{c.code, c.path, c.value, e.total_bytes, e.total_with_headroom_bytes, saved,
                        e.fits, c.cost, timed ? TimeOf(changed) / base_time : 0});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Lever& a, const Lever& b) { return a.saved_bytes > b.saved_bytes; });
  return out;
}

}  // namespace gpuplan
