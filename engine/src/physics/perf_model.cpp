// SPDX-License-Identifier: MIT
// Roofline-style time model. Each constant that is not physics is an assumption or a fit; the
// fits are on the published measurements of tests/reference/perf_cases.json and documented
// where they are set, with their leave-one-group-out error in docs/accuracy.md.
#include "physics/perf_model.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "core/units.h"
#include "physics/memory_model.h"
#include "physics/step_kernels.h"

namespace gpuplan {
namespace {

double D(int64_t v) { return static_cast<double>(v); }

double Bf16Peak(const GpuSpec& g) { return g.bf16_flops > 0 ? g.bf16_flops : g.fp16_flops; }

double IntraNodeBandwidth(const GpuSpec& g) {
  // A card without a stated link talks over PCIe 3 x16 (16 GB/s per direction).
  return (g.intra_node_bytes_per_s > 0 ? g.intra_node_bytes_per_s : 16 * kGB) * kLinkEfficiency;
}

// A ring collective spanning nodes runs one ring per NIC, and each ring crosses a node
// boundary once: the node's network carries it, forwarded inside the node over the GPU links.
// Each GPU therefore sees min(its link, the node's network bandwidth), shared by the
// `groups` collectives of the node that run at the same time (one per model-parallel rank).
double InterNodeBandwidth(const GpuSpec& g, int64_t groups) {
  const double per_gpu = g.inter_node_bytes_per_s > 0
                             ? g.inter_node_bytes_per_s
                             : 12.5 * kGB / D(std::max<int64_t>(1, g.gpus_per_node));
  const double node = per_gpu * D(std::max<int64_t>(1, g.gpus_per_node)) * kLinkEfficiency;
  return std::min(IntraNodeBandwidth(g), node / D(std::max<int64_t>(1, groups)));
}

// log2 of a rank count: a power of two (most layouts) by its bit position, the same value
// std::log2 gives it, without the library call the planner's search made by the hundred
// thousand.
double Log2Ranks(int64_t n) {
  if (n > 0 && (n & (n - 1)) == 0) return D(__builtin_ctzll(static_cast<unsigned long long>(n)));
  return std::log2(D(n));
}

// A collective's small-message latency over n ranks: it grows with log2(n).
double CollectiveLatency(int64_t n, bool pcie) {
  return (kAllReduceLatencyBase + kAllReduceLatencyPerDoubling * Log2Ranks(n)) *
         (pcie ? kPcieLatencyFactor : 1);
}

// Ring all-reduce of `bytes` over n ranks: the latency, then 2 (n-1)/n x bytes through each
// rank's link.
double AllReduceSeconds(double bytes, int64_t n, double bandwidth, bool pcie) {
  if (n <= 1) return 0;
  return CollectiveLatency(n, pcie) + 2 * D(n - 1) / D(n) * bytes / bandwidth;
}

// All-to-all of `bytes` per rank over n ranks (expert dispatch or combine): (n-1)/n of them
// leave the GPU, after the same latency.
double AllToAllSeconds(double bytes, int64_t n, double bandwidth, bool pcie) {
  if (n <= 1) return 0;
  return CollectiveLatency(n, pcie) + D(n - 1) / D(n) * bytes / bandwidth;
}

// NVLink, Infinity Fabric and the like, or PCIe (and anything across nodes).
bool SlowLink(const GpuSpec& g, int64_t group) {
  const std::string_view kind = g.intra_node_kind;
  return group > g.gpus_per_node || kind.empty() || kind.substr(0, 4) == "pcie";
}

// An expert-parallel group: ep ranks tp apart (Megatron carves it from the data-parallel
// ranks), inside a node while ep x tp fits one; across nodes every GPU uses its share of the
// node's network, all at once.
double EpBandwidth(const GpuSpec& g, const Parallel& p) {
  return p.ep * p.tp <= g.gpus_per_node ? IntraNodeBandwidth(g)
                                        : InterNodeBandwidth(g, g.gpus_per_node);
}

}  // namespace

double MatmulPeak(const GpuSpec& g, WeightFormat w, bool training) {
  const double half = g.bf16_flops > 0 ? g.bf16_flops : g.fp16_flops;
  switch (w) {
    case WeightFormat::kFp32:
      return g.fp32_flops > 0 ? g.fp32_flops : half / 8;
    case WeightFormat::kTf32:
      return g.tf32_flops > 0 ? g.tf32_flops : (g.fp32_flops > 0 ? g.fp32_flops : half / 8);
    case WeightFormat::kFp16:
      return g.fp16_flops > 0 ? g.fp16_flops : half;
    case WeightFormat::kFp8:
    case WeightFormat::kMxfp8:
    case WeightFormat::kFp8Block128:
      // MXFP8 and DeepSeek's 128 x 128 block scales run on the FP8 units (Blackwell's
      // block-scaled MMA, Hopper's FP8 GEMMs with the scales applied per block).
      return g.fp8_flops > 0 ? g.fp8_flops : half;
    case WeightFormat::kMxfp4:
    case WeightFormat::kMxfp4Experts:
    case WeightFormat::kNvfp4: {
      // FP4 tensor cores only where the card lists the block format (catalog block_scaled);
      // elsewhere the kernels dequantise to 16 bits (weight-only, like the int4 formats).
      const std::string_view want = w == WeightFormat::kNvfp4 ? "nvfp4" : "mxfp4";
      const bool native =
          std::find(g.block_scaled.begin(), g.block_scaled.end(), want) != g.block_scaled.end();
      // A LoRA step through a frozen FP4 base dequantises it (PEFT, Unsloth): 16-bit compute.
      return native && g.fp4_flops > 0 && !training ? g.fp4_flops : half;
    }
    default:
      // Training on quantised bases and weight-only quantised serving compute in 16 bits.
      (void)training;
      return half;
  }
}

Efficiencies DefaultEfficiencies(const GpuSpec& gpu) {
  // Fitted per generation on the published training and decode measurements of
  // tests/reference/perf_cases.json (see docs/accuracy.md's section for the fit and its
  // leave-one-group-out error). Generations without a measurement borrow the nearest measured
  // one, and say so.
  Efficiencies e;
  const GpuArch arch = gpu.arch != GpuArch::kUnset ? gpu.arch : ArchOf(gpu.generation);
  if (arch == GpuArch::kHopper || arch == GpuArch::kBlackwell) {
    e.decode_bandwidth = 0.66;
    e.prefill_compute = 0.45;
    e.basis = arch == GpuArch::kHopper ? "fitted on H100 training runs (llm-foundry)"
                                       : "no Blackwell measurement: Hopper's fitted values";
  } else if (arch == GpuArch::kAmpere || arch == GpuArch::kAda) {
    e.decode_bandwidth = 0.66;
    e.prefill_compute = 0.58;
    e.basis = arch == GpuArch::kAmpere ? "fitted on A100 training runs and decode benchmarks"
                                       : "fitted on A100 training and RTX 4090 decode benchmarks";
  } else if (arch == GpuArch::kCdna3) {
    // MLPerf Training Llama 2 70B LoRA, 8 GPUs, the same rounds (v5.0 2025-06, v5.1 2025-11;
    // training throughput from the MLLOG files of mlcommons/training_results_v5.0 and v5.1):
    // per GPU an MI300X runs at 0.80-0.83x an H200 and an MI325X at 1.07-1.11x, at one peak
    // (1307 TFLOP/s) and Hopper's 989: 0.62 and 0.82 of Hopper's share of peak. The two differ
    // in board power, 750 W and 1000 W on the same die, and the MI300X's clock falls to about
    // 1.2 of its 2.1 GHz under sustained GEMMs (AMD, 'Measuring max-achievable FLOPs', ROCm
    // blogs): throughput follows the watts per peak TFLOP/s. Fit: 0.82 x min(1, (W / TFLOP/s)
    // / (1000 / 1307.4)) of Hopper's share; left out in turn, each chip is predicted within 1%
    // by the other (0.615 for 0.62, 0.827 for 0.82). Decode keeps the default: no paired
    // decode measurement.
    const double watts_per_tflops = gpu.board_power_w / std::max(1.0, gpu.bf16_flops / 1e12);
    const double share = 0.82 * std::min(1.0, watts_per_tflops / (1000 / 1307.4));
    e.decode_bandwidth = 0.65;
    e.prefill_compute = 0.45 * share;
    e.basis =
        "fitted on MLPerf Training LoRA runs of MI300X and MI325X against H200 (0.82 of "
        "Hopper's share at 1000 W, scaled by watts per peak TFLOP/s)";
  } else if (arch == GpuArch::kCdna4) {
    // MLPerf Training v5.1 Llama 2 70B LoRA: an MI355X runs at 2.30x an H200 per GPU, at
    // 2516.6 against 989 TFLOP/s: 0.90 of Hopper's share (one round, one chip).
    e.decode_bandwidth = 0.65;
    e.prefill_compute = 0.45 * 0.90;
    e.basis = "fitted on one MLPerf Training v5.1 LoRA run of MI355X against H200";
  } else {
    e.decode_bandwidth = 0.65;
    e.prefill_compute = 0.45;
    e.basis = "no measurement for this generation: Hopper's share of peak, unmeasured";
  }
  return e;
}

TrainingFlops TrainingFlopsPerToken(const Setup& r, const ParamCounts& c) {
  const ModelSpec& m = r.model;
  const Workload& w = r.workload;
  TrainingFlops f;
  // Parameters in matmuls: the token table is a lookup, unless it doubles as the tied head.
  f.matmul_params = D(c.active) - D(c.embedding) + (m.tied_embeddings ? D(m.vocab * m.hidden) : 0);
  // Attention scores and their weighted sum: 2 s (q + o widths) FLOPs per token and layer
  // forward, x3 for forward and backward: llm-foundry's 12 L d s for d-wide attention.
  const double attention_fwd =
      2 * D(m.layers) * m.CausalAttended(D(w.seq_len)) * D(m.QueryWidth() + m.AttnOutWidth());
  const bool peft = w.IsPeft();
  // Frozen bases compute no weight gradients: forward 2N + input gradients 2N (PEFT); full
  // training adds 2N of weight gradients (Kaplan et al. 2020: 6N).
  const double adapters = peft ? D(LoraParams(m, w.lora_targets, w.lora_rank)) : 0;
  f.model_per_token = (peft ? 4 : 6) * f.matmul_params + 6 * adapters + 3 * attention_fwd;
  f.hardware_per_token = f.model_per_token;
  // The routed experts a token visits: k experts' matmuls in each MoE layer.
  const double experts = D(c.moe_layers) * D(m.moe.experts_per_token) * D(c.moe_layer.expert_one);
  f.expert_per_token = ((peft ? 4 : 6) + 2 * RecomputedShare(r)) * experts;
  const Recompute rc = r.techniques.recompute;
  if (rc == Recompute::kFull || rc == Recompute::kEveryNLayers) {
    // One more forward of the recomputed blocks.
    f.hardware_per_token += RecomputedShare(r) * (2 * f.matmul_params + attention_fwd);
  } else if (rc == Recompute::kSelective && !r.techniques.flash_attention) {
    f.hardware_per_token += attention_fwd;  // the attention core again
  } else if (rc == Recompute::kOpSelective) {
    // The unsaved matmuls again (k, o and up, or k, o and fc2: activation_memory.cpp's
    // OpSelectiveLayerBytes); attention's output is kept.
    const double width = m.IsMoe() ? D(m.moe.experts_per_token * m.moe.expert_intermediate +
                                       m.moe.shared_experts * m.moe.shared_intermediate)
                                   : D(m.intermediate);
    const double per_layer =
        D(m.hidden) * D(m.KeyWidth()) + D(m.AttnOutWidth()) * D(m.hidden) + D(m.hidden) * width;
    f.hardware_per_token += 2 * D(m.layers) * per_layer;
  }
  return f;
}

double RecomputedShare(const Setup& r) {
  const MemoryTechniques& t = r.techniques;
  if (t.recompute == Recompute::kFull) return 1;
  if (t.recompute != Recompute::kEveryNLayers || r.model.layers <= 0) return 0;
  const int64_t every = std::max<int64_t>(1, t.recompute_every);
  return D(r.model.layers / every) / D(r.model.layers);
}

double PipelineFillSlots(const Pipeline& pipe, int64_t pp) {
  return pipe.schedule == PipelineSchedule::kInterleaved
             ? D(pp - 1) / D(std::max<int64_t>(1, pipe.virtual_stages))
             : D(pp - 1);
}

namespace {

// What every part of a training step is timed from: one micro-batch's shape and how long its
// compute takes spread evenly over the pipeline and on its busiest stage.
struct StepShape {
  int64_t micro_batches = 1;
  double tokens_per_micro = 0;
  double act_bytes = 2;     ///< bytes of one activation element on the wire
  double first_layers = 0;  ///< layers on the first (fullest) stage
  double micro_ideal = 0;   ///< one micro-batch's compute, evenly split
  double micro_stage = 0;   ///< one micro-batch on the busiest stage
};

// FLOPs, the achieved peak, compute time and the pipeline bubble.
StepShape ComputeAndBubble(const Setup& r, const ParamCounts& c, const TrainingPolicy& policy,
                           TrainingPerf* out) {
  const Parallel& p = r.parallel;
  const Workload& w = r.workload;
  const GpuSpec& g = r.gpu;
  const ModelSpec& m = r.model;
  TrainingPerf& t = *out;
  t.flops = TrainingFlopsPerToken(r, c);
  t.peak_flops = MatmulPeak(g, r.precision.weights, true);
  const CalibrationFactors& cal = r.calibration;
  const bool fp32 =
      r.precision.weights == WeightFormat::kFp32 || r.precision.weights == WeightFormat::kTf32;
  const double act_bytes = fp32 ? 4 : 2;
  const int64_t micro_batches = std::max<int64_t>(1, w.grad_accum);
  const double tokens_per_micro = D(w.micro_batch) * D(w.seq_len);

  // Each micro-batch's kernels, layer by layer (step_kernels.cpp), slowed by what a step
  // loses between them and scaled by a measured run's calibration.
  const MicroBatchKernels k = MicroBatchKernelTimes(r, c);
  const double scale = StepKernelOverhead() / std::max(1e-9, cal.compute);
  t.kernels = k;
  const auto layers_time = [&](int64_t begin, int64_t end) {
    int64_t moe = 0;
    if (m.IsMoe()) {
      for (int64_t i = begin; i < end; ++i) moe += m.IsMoeLayer(i) ? 1 : 0;
    }
    return scale * (D(end - begin - moe) * k.dense_layer.Total() + D(moe) * k.moe_layer.Total());
  };
  const double head = scale * k.head.Total();
  // The busiest pipeline stage sets the pace: ceil(L/pp) layers on the first, the rest plus
  // the head on the last.
  const int64_t first = std::min<int64_t>(
      m.layers, static_cast<int64_t>(std::ceil(D(m.layers) / D(std::max<int64_t>(1, p.pp)))));
  const double first_layers = D(first);
  const int64_t last_begin = std::min<int64_t>(m.layers, (p.pp - 1) * first);
  const double whole = layers_time(0, m.layers) + head;
  const double micro_ideal = whole / D(p.pp);
  const double micro_stage =
      p.pp == 1 ? whole : std::max(layers_time(0, first), layers_time(last_begin, m.layers) + head);
  // What the kernels achieve of the peak the matmuls run at.
  t.efficiency = whole > 0 && t.peak_flops > 0 ? k.flops / (whole * t.peak_flops) : 0;
  t.compute_s = micro_ideal * D(micro_batches);
  // 1F1B and GPipe: p - 1 micro-batch slots of fill and drain (Narayanan et al. 2021); the
  // interleaved schedule's slots are 1/v as long. Plus the busiest stage's excess over a
  // balanced split.
  const double fill = micro_stage * PipelineFillSlots(policy.pipeline, p.pp);
  t.bubble_s = fill + (micro_stage - micro_ideal) * D(micro_batches);

  StepShape s;
  s.micro_batches = micro_batches;
  s.tokens_per_micro = tokens_per_micro;
  s.act_bytes = act_bytes;
  s.first_layers = first_layers;
  s.micro_ideal = micro_ideal;
  s.micro_stage = micro_stage;
  return s;
}

void TensorParallelComm(const Setup& r, const StepShape& s, TrainingPerf* out) {
  const Parallel& p = r.parallel;
  const GpuSpec& g = r.gpu;
  const CalibrationFactors& cal = r.calibration;
  TrainingPerf& t = *out;
  // Tensor parallel: two all-reduces of the b x s x h activations per layer forward, two
  // backward, two more when full recomputation repeats the forward (Megatron-LM); on the
  // intra-node link when the tp group fits in a node.
  t.tp_bandwidth = cal.interconnect *
                   (p.tp <= g.gpus_per_node ? IntraNodeBandwidth(g) : InterNodeBandwidth(g, 1));
  if (p.tp > 1) {
    const double bytes = s.tokens_per_micro / D(p.cp) * D(r.model.hidden) * s.act_bytes;
    const double calls = 4 + 2 * RecomputedShare(r);  // a recomputed forward repeats its two
    t.tp_comm_s = D(s.micro_batches) * s.first_layers * calls *
                  AllReduceSeconds(bytes, p.tp, t.tp_bandwidth, SlowLink(g, p.tp));
  }
}

void ExpertParallelComm(const Setup& r, const ParamCounts& c, const StepShape& s,
                        TrainingPerf* out) {
  const Parallel& p = r.parallel;
  const GpuSpec& g = r.gpu;
  const ModelSpec& m = r.model;
  const CalibrationFactors& cal = r.calibration;
  TrainingPerf& t = *out;
  // Expert parallel: every MoE layer sends each token's hidden state to its k experts' ranks
  // and back (dispatch and combine), forward and again backward, and once more when full
  // recomputation repeats the forward (GShard; DeepSpeed-MoE); not overlapped here.
  if (p.ep > 1 && m.IsMoe() && c.moe_layers > 0) {
    const double tokens = s.tokens_per_micro / D(p.cp) / (p.sequence_parallel ? D(p.tp) : 1);
    const double bytes = tokens * D(m.moe.experts_per_token) * D(m.hidden) * s.act_bytes;
    const double calls = 4 + 2 * RecomputedShare(r);  // a recomputed forward repeats its two
    const double stage_moe_layers = std::ceil(D(c.moe_layers) / D(p.pp));
    t.ep_comm_s = D(s.micro_batches) * stage_moe_layers * calls *
                  AllToAllSeconds(bytes, p.ep, cal.interconnect * EpBandwidth(g, p),
                                  SlowLink(g, p.ep * p.tp));
  }
}

// Ring latency of one data-parallel collective over n ranks on `nodes` nodes (NCCL's cost
// model, src/graph/tuning.cc ncclTopoTuneModel): the NVLink fit, plus kNetHopLatency for each
// ring step that crosses the network, of which a ring all-reduce has 2 x nodes and a
// reduce-scatter or all-gather nodes - 1 (nInterSteps). `pcie`: the intra-node link is PCIe.
double DpLatency(int64_t n, int64_t nodes, bool all_reduce, bool pcie) {
  const double crossings = nodes <= 1 ? 0.0 : all_reduce ? 2.0 * D(nodes) : D(nodes - 1);
  return CollectiveLatency(n, pcie) + crossings * kNetHopLatency;
}

// What one GPU moves for data parallelism, and over which ring.
struct DpShape {
  int64_t n = 1;            ///< ranks in the shard group
  int64_t nodes = 1;        ///< nodes the group spans
  bool pcie = false;        ///< the intra-node link is PCIe
  double ring = 0;          ///< (n - 1) / n
  double shard_params = 0;  ///< parameters on this GPU before sharding (tp x pp split)
  double trainable = 0;     ///< of which trainable
  double weight_bytes = 2;  ///< a gathered weight on the wire
  double grad_bytes = 2;    ///< a reduced gradient on the wire
  double root_params = 0;   ///< the first (and ZeRO-3's root) unit: embedding, and the head
  double layer_params = 0;  ///< the first layer on this GPU
};

DpShape DpShapeOf(const Setup& r, const ParamCounts& c) {
  const Parallel& p = r.parallel;
  const Workload& w = r.workload;
  const GpuSpec& g = r.gpu;
  const ModelSpec& m = r.model;
  const bool fp32 =
      r.precision.weights == WeightFormat::kFp32 || r.precision.weights == WeightFormat::kTf32;
  DpShape d;
  d.n = p.ShardGroup();
  const int64_t per_node = std::max<int64_t>(1, g.gpus_per_node);
  d.nodes = std::min(d.n, (p.gpus + per_node - 1) / per_node);
  d.pcie = SlowLink(g, 1);
  d.ring = D(d.n - 1) / D(d.n);
  d.shard_params = D(c.total) / D(p.tp * p.pp);
  d.trainable =
      w.IsPeft() ? D(LoraParams(m, w.lora_targets, w.lora_rank)) / D(p.tp * p.pp) : d.shard_params;
  // Gathered weights travel in their storage format (a QLoRA base in 4 bits); gradients in
  // the compute type (fp32 adapters in 4 bytes).
  d.weight_bytes = fp32 ? 4
                        : (IsFloatTrainable(r.precision.weights)
                               ? 2
                               : Bits(r.precision.weights, r.precision.quant).bits_per_weight / 8);
  d.grad_bytes = fp32 || (w.IsPeft() && r.precision.adapters_fp32) ? 4 : 2;
  d.root_params = D(c.embedding + (p.pp == 1 ? c.lm_head : 0)) / D(p.tp);
  const LayerParams& first = m.IsMoeLayer(0) ? c.moe_layer : c.dense_layer;
  d.layer_params = D(first.attn_linear + first.mlp_linear) / D(p.tp) +
                   D(first.expert_linear) / D(p.ep * p.tp) +
                   D(first.attn_other + first.mlp_bias + first.router + first.norms);
  return d;
}

// The data-parallel traffic of a step and the pieces of it that nothing can hide.
struct DpTimes {
  double gather_s = 0;  ///< ZeRO-3 parameter all-gathers
  double reduce_s = 0;  ///< gradient reductions
  double latency_s = 0;
  double last_s = 0;   ///< the last bucket's (ZeRO-3: the root unit's) reduction
  double first_s = 0;  ///< ZeRO-3: the first units' gathers before each micro-batch's forward
};

DpTimes DpTimesOf(const Setup& r, const TrainingPolicy& policy, const StepShape& s,
                  const DpShape& d, double bw) {
  const Parallel& p = r.parallel;
  const bool full = !r.workload.IsPeft();
  const double mb = D(s.micro_batches);
  const double ar_lat = DpLatency(d.n, d.nodes, true, d.pcie);
  const double rs_lat = DpLatency(d.n, d.nodes, false, d.pcie);  // all-gathers alike
  const double grads = d.trainable * d.grad_bytes;
  DpTimes t;
  if (p.zero >= 3) {
    // Parameters all-gathered twice (once without resharding after forward) and gradients
    // reduce-scattered every micro-batch, unit by unit: ZeRO paper section 7's 1.5x volume.
    // A pipeline stage that stays unsharded through the step (policy.h) gathers once and
    // reduce-scatters its fp32 accumulation once, after the last micro-batch.
    const bool once = p.pp > 1 && policy.gather.unsharded_under_pp;
    const double rounds = once ? 1 : mb;
    const double gathers = policy.gather.reshard_after_forward && !once ? 2 : 1;
    const double reduced = once ? d.trainable * 4 : grads;
    const double units = s.first_layers + 1;  // the stage's layers and the root unit
    t.gather_s =
        rounds * gathers * (d.ring * d.shard_params * d.weight_bytes / bw + units * rs_lat);
    t.reduce_s = rounds * (d.ring * reduced / bw + units * rs_lat);
    t.latency_s = rounds * (gathers + 1) * units * rs_lat;
    // The root unit's gradients are complete only when backward reaches the embedding, the
    // last thing it computes: its reduce-scatter follows the step's compute (FSDP paper,
    // Zhao et al., VLDB 2023, section 4: backward prefetching covers every unit but the
    // last). For adapters, one layer's.
    const double last = full ? d.root_params * d.grad_bytes
                             : d.trainable / std::max(1.0, s.first_layers) * d.grad_bytes;
    t.last_s = d.ring * std::min(grads, last) / bw + rs_lat;
    // Before a forward can start the root unit and the first layer must be gathered: nothing
    // precedes them to hide behind (Zhao et al. 2023: the first all-gather is exposed), and
    // every micro-batch's forward begins so.
    const double emb_bytes = d.weight_bytes > 2 ? d.weight_bytes : 2;  // 16-bit, fp32 models 4
    t.first_s =
        rounds *
        (d.ring * (d.root_params * emb_bytes + d.layer_params * d.weight_bytes) / bw + 2 * rs_lat);
    t.first_s = std::min(t.first_s, t.gather_s);
    return t;
  }
  // ZeRO-0/1/2: gradients all-reduced once a step (ZeRO-1/2: reduce-scattered, then the
  // updated parameters all-gathered in 16 bits), bucket by bucket: the stack's reduction
  // bucket (Megatron's grows with the data-parallel ranks), else its contiguous bucket, else
  // DDP's 25 MiB.
  const GradientBuckets& b = policy.buckets;
  double bucket = b.bucket_elements > 0 ? b.bucket_elements * d.grad_bytes : kDdpBucketBytes;
  if (b.reduce_elements > 0 || b.reduce_elements_per_rank > 0) {
    bucket = std::max(b.reduce_elements, b.reduce_elements_per_rank * D(d.n)) * d.grad_bytes;
  }
  if (b.single_unless_overlapped && !GradReduceOverlapAt(policy.overlap, p.zero)) {
    bucket = std::max(bucket, grads);
  }
  const double buckets = std::max(1.0, std::ceil(grads / bucket));
  if (p.zero == 0) {
    t.reduce_s = 2 * d.ring * grads / bw + buckets * ar_lat;
    t.latency_s = buckets * ar_lat;
  } else {
    // Reduce-scatter of the gradients, then all-gather of the updated parameters in their
    // 16-bit form (Megatron's distributed optimizer: fp32 gradients, bf16 parameters).
    t.reduce_s = d.ring * grads / bw + buckets * rs_lat;
    t.gather_s = d.ring * d.trainable * d.weight_bytes / bw + buckets * rs_lat;
    t.latency_s = 2 * buckets * rs_lat;
  }
  // Buckets fill in reverse order of the parameters, and the first layers' gradients come
  // last in backward: the last bucket (at least the embedding table's gradient, which DDP
  // buckets alone when it outgrows the cap) is reduced after backward ends (Li et al., VLDB
  // 2020, sections 3.2.3 and 5).
  const double first_tensor = full ? D(r.model.vocab * r.model.hidden) / D(p.tp) : 0;
  const double last = std::min(grads, std::max(bucket, first_tensor * d.grad_bytes));
  t.last_s = p.zero == 0 ? 2 * d.ring * last / bw + ar_lat : d.ring * last / bw + rs_lat;
  return t;
}

void DataParallelComm(const Setup& r, const ParamCounts& c, const TrainingPolicy& policy,
                      const StepShape& s, TrainingPerf* out) {
  const Parallel& p = r.parallel;
  const GpuSpec& g = r.gpu;
  TrainingPerf& t = *out;
  // Across nodes the tp x pp data-parallel groups of a node share its network.
  t.dp_crosses_nodes = p.gpus > g.gpus_per_node;
  const int64_t groups_per_node = std::min(p.tp * p.pp, g.gpus_per_node);
  t.dp_bandwidth =
      r.calibration.interconnect *
      (t.dp_crosses_nodes ? InterNodeBandwidth(g, groups_per_node) : IntraNodeBandwidth(g));
  if (p.ShardGroup() <= 1) return;
  const DpShape d = DpShapeOf(r, c);
  const DpTimes x = DpTimesOf(r, policy, s, d, t.dp_bandwidth);
  const Overlap& o = policy.overlap;
  const bool zero3 = p.zero >= 3;
  t.dp_comm_s = x.gather_s + x.reduce_s;
  t.dp_latency_s = x.latency_s;
  t.dp_gather_s = x.gather_s;
  t.dp_last_bucket_s = x.last_s;
  t.dp_first_gather_s = zero3 ? x.first_s : 0;
  // What the stack runs behind compute, less what has nothing to hide behind: the last
  // bucket and the first gathers. Under ZeRO-3 reductions and gathers run every micro-batch,
  // the gathers prefetched during forward. Under ZeRO-0/1/2 the buckets are reduced once a
  // step, during the last micro-batch's backward (2/3 of its compute), and a distributed
  // optimizer's parameter all-gathers run during the next step's first forward (1/3), bucket
  // by bucket as each layer is reached (Megatron-Core's --overlap-param-gather).
  const double reduce_ovl = GradReduceOverlapAt(o, p.zero) ? x.reduce_s - x.last_s : 0;
  const double gather_ovl = zero3 ? (o.param_gather ? x.gather_s - x.first_s : 0)
                                  : (o.param_gather_sharded_optimizer ? x.gather_s : 0);
  double exposed = t.dp_comm_s - reduce_ovl - gather_ovl;
  double hidden = 0;
  if (zero3) {
    const double window = s.micro_stage * D(s.micro_batches);
    const double ovl = reduce_ovl + gather_ovl;
    exposed += std::max(0.0, ovl - window);
    hidden = std::min(ovl, window);
  } else {
    const double reduce_window = s.micro_stage * 2 / 3;
    const double gather_window = s.micro_stage / 3;
    exposed +=
        std::max(0.0, reduce_ovl - reduce_window) + std::max(0.0, gather_ovl - gather_window);
    hidden = std::min(reduce_ovl, reduce_window) + std::min(gather_ovl, gather_window);
  }
  t.dp_exposed_s = exposed;
  // While they overlap, the collectives slow the compute they run beside.
  t.dp_contention_s = kOverlapComputeSlowdown * hidden;
}

// The optimizer step after backward: an elementwise update, memory-bound, of this GPU's
// shard (ZeRO-1 and up shard it over the data-parallel ranks): each trainable parameter's
// gradient read, fp32 master copy and moments read and written, and the weight written (read
// and written when there is no master copy). AdamW in mixed precision: 2 + 8 + 16 + 2 = 28
// bytes per parameter (ZeRO paper, section 3.1's 16 bytes of state, plus the traffic), at the
// fraction of the card's memory bandwidth decode streaming achieves. A step offloaded to the
// host runs there (not modelled here).
double OptimizerStepSeconds(const Setup& r, const ParamCounts& c, const TrainingPolicy& policy) {
  const Parallel& p = r.parallel;
  const Workload& w = r.workload;
  const GpuSpec& g = r.gpu;
  if (r.techniques.offload_optimizer || r.techniques.offload_params) return 0;
  if (!(g.mem_bandwidth_bytes_per_s > 0)) return 0;
  const bool fp32 =
      r.precision.weights == WeightFormat::kFp32 || r.precision.weights == WeightFormat::kTf32;
  const bool peft = w.IsPeft();
  const double params = peft ? D(LoraParams(r.model, w.lora_targets, w.lora_rank)) / D(p.tp * p.pp)
                             : D(c.total) / D(p.tp * p.pp);
  const double shard = p.zero >= 1 ? D(std::max<int64_t>(1, p.ShardGroup())) : 1;
  const double param_b = fp32 || (peft && r.precision.adapters_fp32) ? 4 : 2;
  const double grad_b = peft ? param_b : (fp32 || policy.fp32_grad_accumulation ? 4 : 2);
  const bool master = r.precision.master == MasterWeights::kFp32 && param_b < 4;
  const double master_b = master ? 4 : 0;
  const double state_b =
      OptimizerStateBytes(r.optimizer, r.model.hidden, policy.optimizer_states, param_b);
  const double per_param = grad_b + 2 * master_b + 2 * state_b + (master ? 1 : 2) * param_b;
  const double bandwidth =
      g.mem_bandwidth_bytes_per_s *
      std::min(1.0, DefaultEfficiencies(g).decode_bandwidth * r.calibration.bandwidth);
  return params / shard * per_param / bandwidth;
}

}  // namespace

TrainingPerf EstimateTraining(const Setup& r, const ParamCounts& c) {
  const Parallel& p = r.parallel;
  const GpuSpec& g = r.gpu;
  const TrainingPolicy& policy = r.training;
  TrainingPerf t;
  const StepShape s = ComputeAndBubble(r, c, policy, &t);
  TensorParallelComm(r, s, &t);
  ExpertParallelComm(r, c, s, &t);
  DataParallelComm(r, c, policy, s, &t);
  t.optimizer_step_s = OptimizerStepSeconds(r, c, policy);
  // Overlapped tensor-parallel collectives (Megatron-Core's --tp-comm-overlap splits them into
  // chunks pipelined with the GEMMs that produce and consume them) show only beyond compute.
  t.tp_exposed_s = policy.overlap.tp_comm ? std::max(0.0, t.tp_comm_s - t.compute_s) : t.tp_comm_s;
  // What parallelism costs: the share of the step's compute and communication spent
  // computing. The optimizer step is left out: one GPU pays it too (one GPU scores 1), and
  // ZeRO sharding shrinks it as GPUs are added, which is not communication's gain.
  const double parallel_s =
      t.compute_s + t.bubble_s + t.tp_exposed_s + t.ep_comm_s + t.dp_exposed_s + t.dp_contention_s;
  t.step_s = parallel_s + t.optimizer_step_s;
  t.tokens_per_step = s.tokens_per_micro * D(s.micro_batches) * D(std::max<int64_t>(1, p.Dp()));
  t.tokens_per_s = t.step_s > 0 ? t.tokens_per_step / t.step_s : 0;
  t.tokens_per_s_per_gpu = t.tokens_per_s / D(p.gpus);
  t.mfu = t.flops.model_per_token * t.tokens_per_s / (D(p.gpus) * Bf16Peak(g));
  t.achieved_tflops_per_gpu = t.flops.hardware_per_token * t.tokens_per_s_per_gpu / kTera;
  t.scaling_efficiency = parallel_s > 0 ? t.compute_s / parallel_s : 0;
  t.tokens = r.workload.tokens;
  t.time_s = t.tokens_per_s > 0 ? t.tokens / t.tokens_per_s : 0;
  t.gpu_hours = t.time_s * D(p.gpus) / 3600;
  return t;
}

double DecodeBandwidth(const Setup& r) {
  const GpuSpec& g = r.gpu;
  const double per_sm = r.serving.decode_bytes_per_s_per_sm;
  // The per-SM rate is the engine's quantised kernels' (llama.cpp's mul_mat_vec_q); 16-bit
  // weights go through cuBLAS, which keeps enough bytes in flight: the generation's constant.
  const WeightFormat f = r.precision.weights;
  const bool quantised = f != WeightFormat::kFp32 && f != WeightFormat::kTf32 &&
                         f != WeightFormat::kBf16 && f != WeightFormat::kFp16;
  if (per_sm > 0 && quantised && g.sm_count > 0 && g.mem_bandwidth_bytes_per_s > 0) {
    return 1 / (1 / g.mem_bandwidth_bytes_per_s + 1 / (D(g.sm_count) * per_sm));
  }
  return g.mem_bandwidth_bytes_per_s * std::min(1.0, DefaultEfficiencies(g).decode_bandwidth);
}

InferencePerf EstimateInference(const Setup& r, const ParamCounts& c, int64_t concurrency,
                                double weight_bytes_read, double kv_bytes_per_token,
                                double decode_bandwidth, double host_weight_bytes,
                                double host_expert_bytes) {
  const ModelSpec& m = r.model;
  const Workload& w = r.workload;
  const Parallel& p = r.parallel;
  const GpuSpec& g = r.gpu;
  const Efficiencies eff = DefaultEfficiencies(g);
  InferencePerf out;
  // Data-parallel ranks each decode their share of the sequences (RankConcurrency); under
  // expert parallel every rank's experts serve the whole group's tokens.
  const double group = D(concurrency);
  const double dp = D(std::max<int64_t>(1, p.Dp()));
  const double batch = std::ceil(group / dp);
  const double tp = D(p.tp);
  const double peak = MatmulPeak(g, r.precision.weights, false);
  const CalibrationFactors& cal = r.calibration;
  const double bandwidth = std::min(g.mem_bandwidth_bytes_per_s, decode_bandwidth * cal.bandwidth);
  const double prefill_eff = std::min(1.0, eff.prefill_compute * cal.compute);
  const double matmul_params =
      D(c.active) - D(c.embedding) + (m.tied_embeddings ? D(m.vocab * m.hidden) : 0);
  const double qo_width = D(m.QueryWidth() + m.AttnOutWidth());
  const double tp_bw = cal.interconnect *
                       (p.tp <= g.gpus_per_node ? IntraNodeBandwidth(g) : InterNodeBandwidth(g, 1));

  // Decode: a token passes every stage, reading each tensor-parallel rank's weights (MoE:
  // only the experts the batch routes to) and the batch's KV cache.
  double weights = weight_bytes_read;
  // The share of the routed experts a step reads: each GPU's, or the CPU's (--n-cpu-moe).
  double expert_share_read = 1;
  if (m.IsMoe() && c.moe_layers > 0) {
    const double ep = D(p.ep);
    const double experts = D(m.moe.experts) / ep;
    const double k = D(m.moe.experts_per_token);
    // Distinct experts a batch touches: E (1 - (1 - k/E)^B) of this GPU's E; with experts
    // spread over the ranks, B is the whole group's batch.
    const double routed = p.ep > 1 ? group : batch;
    const double touched =
        experts * (1 - std::pow(1 - std::min(1.0, k / D(m.moe.experts)), routed));
    // This GPU holds 1/ep of the experts (of the layers whose experts it keeps) and all the
    // rest.
    int64_t cpu_moe = 0;
    if (host_expert_bytes > 0) {
      const int64_t below = std::min(m.layers, r.serving.cpu_moe_layers);
      for (int64_t i = 0; i < below; ++i) cpu_moe += m.IsMoeLayer(i) ? 1 : 0;
    }
    const double all_experts = D(c.moe_layers) * D(c.moe_layer.expert_linear);
    const double local = all_experts / ep * (1 - D(cpu_moe) / D(c.moe_layers));
    const double share = local / std::max(1.0, D(c.total) - all_experts + local);
    expert_share_read = std::min(1.0, touched / experts);
    weights *= (1 - share) + share * expert_share_read;
  }
  const double context = D(w.prompt_tokens) + D(w.output_tokens) / 2;  // average over decode
  // Sliding-window layers read and attend to at most the window.
  const double attended = m.AttendedContext(context);
  const double kv = kv_bytes_per_token * attended * batch;
  out.bytes_per_step = weights + kv;
  out.flops_per_step = batch * (2 * matmul_params + 2 * D(m.layers) * attended * qo_width) / tp;
  const double mem_s = out.bytes_per_step / bandwidth;
  const double comp_s = out.flops_per_step / (peak * prefill_eff);
  out.compute_bound = comp_s > mem_s;
  // Two all-reduces of the batch's hidden state per layer (attention and MLP outputs).
  out.tp_comm_s =
      p.tp > 1 ? 2 * D(m.layers) *
                     AllReduceSeconds(batch * D(m.hidden) * 2, p.tp, tp_bw, SlowLink(g, p.tp))
               : 0;
  // Expert parallel: a dispatch and a combine of the batch per MoE layer.
  const double ep_bw = (p.ep > 1 && m.IsMoe()) ? r.calibration.interconnect * EpBandwidth(g, p) : 0;
  const auto ep_seconds = [&](double tokens) {
    return ep_bw > 0 ? 2 * D(c.moe_layers) *
                           AllToAllSeconds(tokens * D(m.moe.experts_per_token) * D(m.hidden) * 2,
                                           p.ep, ep_bw, SlowLink(g, p.ep * p.tp))
                     : 0;
  };
  out.ep_comm_s = ep_seconds(batch);
  // Layers left on the CPU run after the GPU's, reading their weights from host memory.
  // Experts left on the CPU: it reads those the batch routes to.
  const double host_s =
      (host_weight_bytes + host_expert_bytes * expert_share_read) / kHostDecodeBandwidth;
  out.tpot_s = std::max(mem_s, comp_s) + out.tp_comm_s + out.ep_comm_s + host_s;
  // Without CUDA graphs the host launches every kernel of the step itself, layer by layer on
  // each pipeline stage in turn.
  if (r.serving.eager_decode) {
    const double launches = D(m.layers) * kEagerDecodeHostPerLayer;
    out.host_bound = launches > out.tpot_s;
    out.tpot_s = std::max(out.tpot_s, launches);
  }
  out.decode_tokens_per_s_per_seq = out.tpot_s > 0 ? 1 / out.tpot_s : 0;
  out.decode_tokens_per_s_total = group * out.decode_tokens_per_s_per_seq;

  // Prefill of one prompt: 2N FLOPs per token plus causal attention, P^2 (q + o widths) per
  // layer; compute-bound, but never faster than reading the weights once.
  const double prompt = D(w.prompt_tokens);
  // Under expert parallel a prompt's routed-expert work spreads over the ep ranks (balanced
  // routing assumed); the rest runs on its own rank.
  const double routed_params =
      m.IsMoe() ? D(c.moe_layers) * D(m.moe.experts_per_token) * D(c.moe_layer.expert_one) : 0;
  const double prefill_params = matmul_params - routed_params * (1 - 1 / D(p.ep));
  const double prefill_flops =
      (2 * prefill_params * prompt + D(m.layers) * prompt * m.CausalAttended(prompt) * qo_width) /
      tp;
  const double prefill_comm =
      p.tp > 1 ? 2 * D(m.layers) *
                     AllReduceSeconds(prompt * D(m.hidden) * 2, p.tp, tp_bw, SlowLink(g, p.tp))
               : 0;
  out.prefill_compute_s = prefill_flops / (peak * prefill_eff) + prefill_comm + ep_seconds(prompt);
  out.ttft_s = std::max(prefill_flops / (peak * prefill_eff), weights / bandwidth) + prefill_comm +
               ep_seconds(prompt);
  out.prefill_tokens_per_s = out.ttft_s > 0 ? prompt / out.ttft_s : 0;
  return out;
}

}  // namespace gpuplan
