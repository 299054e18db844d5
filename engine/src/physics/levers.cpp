// SPDX-License-Identifier: MIT
// The levers of MISSION M8: each is one change a user can make, re-estimated on its own, so
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
  std::function<void(Request*)> apply;
};

std::vector<Candidate> TrainingCandidates(const Request& r) {
  std::vector<Candidate> c;
  const MemoryTechniques& t = r.techniques;
  const Workload& w = r.workload;
  const Parallel& p = r.parallel;
  if (t.recompute != Recompute::kFull) {
    c.push_back({"full_recompute", "/memory_techniques/recompute", "\"full\"",
                 "recomputes each layer's forward in backward: about a third more compute",
                 [](Request* q) { q->techniques.recompute = Recompute::kFull; }});
  }
  if (!t.chunked_loss) {
    c.push_back({"chunked_loss", "/memory_techniques/chunked_loss", "true",
                 "negligible: the loss is computed chunk by chunk",
                 [](Request* q) { q->techniques.chunked_loss = true; }});
  }
  if (w.micro_batch > 1) {
    c.push_back({"halve_micro_batch", "/workload/micro_batch", std::to_string(w.micro_batch / 2),
                 "same tokens per step with twice the gradient accumulation; smaller matmuls run "
                 "less efficiently",
                 [](Request* q) {
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
                 [next](Request* q) { q->parallel.zero = next; }});
  }
  if (r.optimizer == Optimizer::kAdamW || r.optimizer == Optimizer::kAdam) {
    c.push_back({"adamw_8bit", "/optimizer", "\"adamw_8bit\"",
                 "negligible time; the moments are block-quantised to 8 bits",
                 [](Request* q) { q->optimizer = Optimizer::kAdamW8bit; }});
  }
  if (!t.offload_optimizer && !t.offload_params) {
    c.push_back({"offload_optimizer", "/memory_techniques/offload", "\"optimizer\"",
                 "the optimizer step runs on the CPU and gradients cross PCIe every step (the "
                 "time model does not price that traffic: no time factor)",
                 [](Request* q) { q->techniques.offload_optimizer = true; }});
  }
  if (p.tp > 1 && !p.sequence_parallel) {
    c.push_back({"sequence_parallel", "/parallel/sequence_parallel", "true",
                 "none: the all-reduces become reduce-scatter + all-gather of the same volume",
                 [](Request* q) { q->parallel.sequence_parallel = true; }});
  }
  if (w.kind == WorkloadKind::kFullFinetune) {  // pretraining has no adapter alternative
    c.push_back(
        {"lora_instead", "/workload/kind", "\"lora\"",
         "trains adapters instead of every weight: a different quality trade-off", [](Request* q) {
           q->workload.kind = WorkloadKind::kLora;
           q->workload.lora_targets = {true, true, true, true, true, true, true, false, true};
         }});
  } else if (w.kind == WorkloadKind::kLora && IsFloatTrainable(r.precision.weights)) {
    c.push_back({"qlora_instead", "/workload/kind", "\"qlora\"",
                 "4-bit NF4 base: dequantisation slows each step, small quality cost",
                 [](Request* q) {
                   q->workload.kind = WorkloadKind::kQlora;
                   q->precision.weights = WeightFormat::kNf4;
                   q->precision.quant = {64, true};
                 }});
  }
  return c;
}

std::vector<Candidate> InferenceCandidates(const Request& r) {
  std::vector<Candidate> c;
  const KvFormat kv = r.precision.kv_cache;
  if (kv == KvFormat::kBf16 || kv == KvFormat::kFp16 || kv == KvFormat::kFp32) {
    c.push_back({"fp8_kv_cache", "/precision/kv_cache", "\"fp8\"",
                 "half the KV bytes read per step; small accuracy cost",
                 [](Request* q) { q->precision.kv_cache = KvFormat::kFp8; }});
  }
  const WeightFormat wf = r.precision.weights;
  if (wf == WeightFormat::kBf16 || wf == WeightFormat::kFp16 || wf == WeightFormat::kFp32) {
    c.push_back({"fp8_weights", "/precision/weights", "\"fp8\"",
                 "half the weight bytes; needs fp8 units for full speed",
                 [](Request* q) { q->precision.weights = WeightFormat::kFp8; }});
    c.push_back({"awq_int4_weights", "/precision/weights", "\"awq_int4\"",
                 "a quarter of the weight bytes; a measurable quality cost", [](Request* q) {
                   q->precision.weights = WeightFormat::kAwqInt4;
                   q->precision.quant = {128, true};
                 }});
  }
  if (r.workload.concurrency > 1) {
    c.push_back({"halve_concurrency", "/workload/concurrency",
                 std::to_string(r.workload.concurrency / 2),
                 "halves the sequences served at once, and with them the throughput",
                 [](Request* q) { q->workload.concurrency /= 2; }});
  }
  return c;
}

// What a lever's factor compares: the run's time for training, the time per output token at
// the requested concurrency for serving; 0 when the setup cannot run.
double TimeOf(const Request& r) {
  if (r.workload.IsTraining()) return EstimateTraining(r, CountParams(r.model)).time_s;
  return EstimateSetup(r, /*with_levers=*/false).serving.at_request.tpot_s;
}

}  // namespace

std::vector<Lever> MemoryLevers(const Request& r, double base_total) {
  std::vector<Lever> out;
  const auto candidates = r.workload.IsTraining() ? TrainingCandidates(r) : InferenceCandidates(r);
  const ParamCounts params = CountParams(r.model);
  const double base_time = candidates.empty() ? 0 : TimeOf(r);
  for (const Candidate& c : candidates) {
    Request changed = r;
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
