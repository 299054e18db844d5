// SPDX-License-Identifier: MIT
#include "after/remedies.h"

#include <algorithm>
#include <functional>
#include <string>

#include "core/format.h"
#include "core/units.h"

namespace gpuplan::remedies {
namespace {

using Changes = std::vector<Remedy::Change>;

using text::Fmt;

std::string Int(int64_t v) { return std::to_string(v); }

// A change of the request, every field it touches listed, checked for fit.
Remedy Checked(const Setup& r, std::string code, Changes changes, std::string message,
               const std::function<void(Setup*)>& change) {
  Setup q = r;
  change(&q);
  const FitCheck f = CheckFit(q, CountParams(q.model));
  return {std::move(code), std::move(message), std::move(changes), f.fits ? 1 : 0};
}

Remedy Advice(std::string code, std::string message) {
  return {std::move(code), std::move(message), {}, -1};
}

void TrainingMemory(const Setup& r, std::vector<Remedy>* out) {
  const Workload& w = r.workload;
  if (w.micro_batch > 1) {
    out->push_back(Checked(r, "smaller_micro_batch",
                           {{"/workload/micro_batch", Int(w.micro_batch / 2)}},
                           "halve the micro-batch (fewer tokens per step)",
                           [](Setup* q) { q->workload.micro_batch /= 2; }));
  }
  if (w.seq_len >= 256) {
    out->push_back(Checked(r, "shorter_sequence", {{"/workload/seq_len", Int(w.seq_len / 2)}},
                           "halve the sequence length, if the data allows it",
                           [](Setup* q) { q->workload.seq_len /= 2; }));
  }
  if (w.micro_batch > 1) {
    out->push_back(Checked(r, "gradient_accumulation",
                           {{"/workload/micro_batch", Int(w.micro_batch / 2)},
                            {"/workload/grad_accum", Int(w.grad_accum * 2)}},
                           "halve the micro-batch and double gradient accumulation: the same "
                           "tokens per step, a little slower",
                           [](Setup* q) {
                             q->workload.micro_batch /= 2;
                             q->workload.grad_accum *= 2;
                           }));
  }
  if (r.techniques.recompute != Recompute::kFull) {
    out->push_back(Checked(r, "full_recompute", {{"/memory_techniques/recompute", "\"full\""}},
                           "recompute activations in backward: about a third more compute",
                           [](Setup* q) { q->techniques.recompute = Recompute::kFull; }));
  }
  const Parallel& p = r.parallel;
  if (p.ShardGroup() > 1 && p.zero < 3) {
    const int next = p.zero + 1;
    out->push_back(Checked(r, "next_zero_stage", {{"/parallel/zero", Int(next)}},
                           "shard one more kind of training state over the data-parallel ranks",
                           [next](Setup* q) { q->parallel.zero = next; }));
  } else if (p.zero >= 3 && p.ShardGroup() > 1) {
    out->push_back(Checked(r, "double_cards", {{"/parallel/gpus", Int(2 * p.gpus)}},
                           "twice the cards under ZeRO-3: each holds half the sharded state",
                           [](Setup* q) { q->parallel.gpus *= 2; }));
  } else if (p.gpus == 1) {
    out->push_back(Checked(r, "zero_two_cards", {{"/parallel/gpus", "2"}, {"/parallel/zero", "3"}},
                           "two cards with ZeRO-3 (FSDP full shard): each holds half the state",
                           [](Setup* q) {
                             q->parallel.gpus = 2;
                             q->parallel.zero = 3;
                           }));
  }
}

void ServingMemory(const Setup& r, std::vector<Remedy>* out) {
  const Workload& w = r.workload;
  if (w.concurrency > 1) {
    out->push_back(
        Checked(r, "halve_concurrency", {{"/workload/concurrency", Int(w.concurrency / 2)}},
                "serve half the sequences at once",
                [](Setup* q) { q->workload.SetConcurrency(q->workload.concurrency / 2); }));
  }
  if (w.prompt_tokens >= 256) {
    out->push_back(Checked(r, "shorter_context",
                           {{"/workload/prompt_tokens", Int(w.prompt_tokens / 2)}},
                           "cap the prompt at half its length", [](Setup* q) {
                             q->workload.prompt_tokens /= 2;
                             q->workload.SetConcurrency(q->workload.concurrency);
                           }));
  }
  if (r.precision.kv_cache == KvFormat::kBf16 || r.precision.kv_cache == KvFormat::kFp16) {
    out->push_back(Checked(r, "fp8_kv_cache", {{"/precision/kv_cache", "\"fp8\""}},
                           "keep the KV cache in fp8: half its bytes, a small accuracy cost",
                           [](Setup* q) { q->precision.kv_cache = KvFormat::kFp8; }));
  }
  if (r.model.heads % (2 * r.parallel.tp) == 0) {
    out->push_back(Checked(
        r, "double_tensor_parallel",
        {{"/parallel/tp", Int(2 * r.parallel.tp)}, {"/parallel/gpus", Int(2 * r.parallel.gpus)}},
        "split the model over twice the cards (tensor parallel)", [](Setup* q) {
          q->parallel.tp *= 2;
          q->parallel.gpus *= 2;
        }));
  }
}

}  // namespace

std::vector<Remedy> Memory(const Setup& r, double need_bytes) {
  std::vector<Remedy> out;
  if (r.workload.IsTraining()) {
    TrainingMemory(r, &out);
  } else {
    ServingMemory(r, &out);
  }
  out.push_back(Advice("bigger_card", "a card with at least " + Fmt("%.1f", need_bytes / kGiB) +
                                          " GiB (the need with headroom): run plan to pick one"));
  return out;
}

std::vector<Remedy> Throughput(const Setup& r, const Estimate& e) {
  std::vector<Remedy> out;
  const int64_t workers = r.host.loader_workers;
  out.push_back(Advice(
      "check_data_pipeline",
      std::string("time the data loader alone: tokenise ahead of time, pin memory, prefetch; ") +
          (workers > 0 ? std::to_string(workers) + " loader workers given" +
                             (workers < 4 * e.gpus_per_node_used ? " (fewer than 4 per GPU)" : "")
                       : "give host.loader_workers (4+ per GPU is common)")));
  out.push_back(Advice(
      "check_host_ram",
      "keep host RAM at 70-80% while it runs (above: the page cache and workers swap; below: "
      "room to cache the dataset); this setup wants " +
          Fmt("%.0f", e.host_ram_bytes / kGiB) + " GiB per node"));
  out.push_back(Advice("check_bandwidth",
                       "check the storage read rate and the host-to-GPU link (PCIe) with the "
                       "loader alone; on several cards, the interconnect with nccl-tests"));
  const Workload& w = r.workload;
  if (w.IsTraining()) {
    // The same tokens per step where the accumulation allows it.
    const bool halve = w.grad_accum % 2 == 0;
    Changes changes = {{"/workload/micro_batch", Int(w.micro_batch * 2)}};
    if (halve) changes.push_back({"/workload/grad_accum", Int(w.grad_accum / 2)});
    out.push_back(Checked(r, "larger_micro_batch", std::move(changes),
                          "double the micro-batch to fill the card toward 85% of its memory",
                          [halve](Setup* q) {
                            q->workload.micro_batch *= 2;
                            if (halve) q->workload.grad_accum /= 2;
                          }));
  } else {
    out.push_back(
        Checked(r, "raise_concurrency", {{"/workload/concurrency", Int(w.concurrency * 2)}},
                "serve twice the sequences at once: decode reads the weights once for "
                "all of them",
                [](Setup* q) { q->workload.SetConcurrency(q->workload.concurrency * 2); }));
  }
  return out;
}

std::vector<Remedy> Speedup(const Setup& r, const Estimate& e) {
  std::vector<Remedy> out;
  const TrainingPerf& t = e.training;
  out.push_back(Advice("check_interconnect",
                       "measure the links with nccl-tests all_reduce_perf: the estimate assumes " +
                           Fmt("%.0f", t.dp_bandwidth / kGB) +
                           " GB/s per GPU for data-parallel traffic" +
                           (t.dp_crosses_nodes ? " (across nodes)" : " (inside one node)")));
  const Parallel& p = r.parallel;
  if (p.zero >= 2 && p.ShardGroup() > 1) {
    out.push_back(Checked(r, "less_sharding", {{"/parallel/zero", "1"}},
                          "shard less (ZeRO-1): no per-layer weight gathers, if memory allows",
                          [](Setup* q) { q->parallel.zero = 1; }));
  }
  if (r.workload.IsTraining()) {
    out.push_back(Checked(r, "more_accumulation",
                          {{"/workload/grad_accum", Int(r.workload.grad_accum * 2)}},
                          "accumulate twice the micro-batches per step: the gradient exchange "
                          "is amortised over more compute",
                          [](Setup* q) { q->workload.grad_accum *= 2; }));
  }
  // Half the cards, but never fewer than one model-parallel group.
  const int64_t group = p.tp * p.pp * p.cp;
  const int64_t fewer = std::max(group, p.gpus / 2 / group * group);
  if (fewer < p.gpus) {
    out.push_back(Checked(r, "fewer_cards", {{"/parallel/gpus", Int(fewer)}},
                          "measure again on fewer cards (1, 2, 4 on the same data) and scale "
                          "only as far as the curve stays near linear",
                          [fewer](Setup* q) { q->parallel.gpus = fewer; }));
  }
  return out;
}

}  // namespace gpuplan::remedies
