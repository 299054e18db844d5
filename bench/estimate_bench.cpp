// SPDX-License-Identifier: MIT
// How long one estimate takes, natively: the page re-estimates on every keystroke, so this is
// the number that must stay far below a frame (16 ms). Prints figures; asserts nothing.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "embedded_catalog.h"
#include "gpuplan/api.h"

namespace {

const gpuplan::Engine& SharedEngine() {
  static const gpuplan::Engine engine(gpuplan::EmbeddedGpusJson(), gpuplan::EmbeddedModelsJson());
  return engine;
}

void BM_LoadCatalog(benchmark::State& state) {
  for (auto _ : state) {
    gpuplan::Engine engine(gpuplan::EmbeddedGpusJson(), gpuplan::EmbeddedModelsJson());
    benchmark::DoNotOptimize(engine.CatalogOk());
  }
}
BENCHMARK(BM_LoadCatalog);

void BM_EstimateLoraPreset(benchmark::State& state) {
  // The contract's example: LoRA on Llama 3.1 8B over 8 H100s, levers included.
  const std::string request = R"({"model": {"preset": "llama-3.1-8b"},
    "workload": {"kind": "lora", "micro_batch": 4, "seq_len": 4096, "grad_accum": 8},
    "parallel": {"gpus": 8, "zero": 2}, "gpu": "h100-sxm-80gb"})";
  for (auto _ : state) benchmark::DoNotOptimize(SharedEngine().Estimate(request));
}
BENCHMARK(BM_EstimateLoraPreset);

void BM_EstimateDeepSeekServing(benchmark::State& state) {
  // MoE + MLA with pipeline stages: the most per-layer work the engine does (GGUF-free).
  const std::string request = R"({"model": {"preset": "deepseek-v3"},
    "workload": {"kind": "inference", "prompt_tokens": 8192, "concurrency": 64},
    "parallel": {"gpus": 16, "tp": 8, "pp": 2}, "precision": {"weights": "fp8"},
    "gpu": "h200-sxm-141gb"})";
  for (auto _ : state) benchmark::DoNotOptimize(SharedEngine().Estimate(request));
}
BENCHMARK(BM_EstimateDeepSeekServing);

void BM_EstimateGgufLlama70B(benchmark::State& state) {
  const std::string request = R"({"model": {"preset": "llama-3.1-70b"},
    "workload": {"kind": "inference"}, "precision": {"weights": "gguf_q4_k_m"},
    "gpu": "rtx-4090-24gb", "parallel": {"gpus": 2, "pp": 2}})";
  for (auto _ : state) benchmark::DoNotOptimize(SharedEngine().Estimate(request));
}
BENCHMARK(BM_EstimateGgufLlama70B);

// Plan over the shipped catalog with max_gpus 1024, for a pretraining and a serving
// request, and over the catalog replicated 10x and 100x (cost should grow linearly).
std::string Replicated(int times) {
  nlohmann::json doc = nlohmann::json::parse(gpuplan::EmbeddedGpusJson());
  nlohmann::json cards = nlohmann::json::array();
  for (int i = 0; i < times; ++i) {
    for (auto card : doc["gpus"]) {
      card["id"] = card["id"].get<std::string>() + "-" + std::to_string(i);
      cards.push_back(card);
    }
  }
  doc["gpus"] = cards;
  return doc.dump();
}

constexpr const char* kPretrain = R"({"model": {"preset": "llama-3.1-70b"},
    "workload": {"kind": "pretrain", "micro_batch": 1, "seq_len": 8192, "global_batch": 1024,
                 "tokens": 1e12},
    "constraints": {"max_gpus": 1024}})";
constexpr const char* kServing = R"({"model": {"preset": "llama-3.1-70b"},
    "workload": {"kind": "inference", "prompt_tokens": 2048, "output_tokens": 512,
                 "concurrency": 256},
    "constraints": {"max_gpus": 1024, "ttft_ms": 2000, "tpot_ms": 50}})";

// The 37 cards of engine 0.2.0's catalog, to compare this engine with 0.2.0 on the same
// request over the same cards (0.2.0's own gpuplan_bench, built from c21d065^).
constexpr const char* kCatalog020 =
    R"(["b200-sxm-180gb", "gb200-nvl72-186gb", "h200-sxm-141gb", "h200-nvl-141gb",
    "h100-sxm-80gb", "h100-pcie-80gb", "h100-nvl-94gb", "h800-sxm-80gb", "h20-96gb", "l40s-48gb",
    "l40-48gb", "l20-48gb", "l4-24gb", "a100-sxm-80gb", "a100-sxm-40gb", "a100-pcie-80gb",
    "a800-sxm-80gb", "a40-48gb", "a30-24gb", "a10-24gb", "a10g-24gb", "rtx-6000-ada-48gb",
    "rtx-a6000-48gb", "rtx-5090-32gb", "rtx-4090-24gb", "rtx-3090-24gb", "v100-sxm2-32gb",
    "v100-pcie-16gb", "t4-16gb", "mi355x-288gb", "mi325x-256gb", "mi300x-192gb", "mi250x-128gb",
    "mi210-64gb", "gaudi3-128gb", "gaudi2-96gb", "ascend-910b-64gb"])";

// Prints, beside the time, the answer's size and the time per card, so a reader sees whether
// the plan stays linear in the catalog. `only`: a JSON list of card ids to plan
// over (constraints.gpus) instead of the whole catalog.
void RunPlan(benchmark::State& state, const char* request_text, gpuplan::Engine::PlanAnswer answer,
             const char* only = nullptr) {
  const int times = static_cast<int>(state.range(0));
  const gpuplan::Engine engine(Replicated(times), gpuplan::EmbeddedModelsJson());
  nlohmann::json doc = nlohmann::json::parse(request_text);
  if (only != nullptr) {
    // Replicated names the first copy's cards "<id>-0".
    for (const auto& id : nlohmann::json::parse(only)) {
      doc["constraints"]["gpus"].push_back(id.get<std::string>() + "-0");
    }
  }
  const std::string request = doc.dump();
  const std::string first = engine.Plan(request, answer);
  if (first.rfind("{\"ok\":true", 0) != 0) state.SkipWithError("plan failed");
  for (auto _ : state) benchmark::DoNotOptimize(engine.Plan(request, answer));
  const double cards =
      only != nullptr
          ? static_cast<double>(doc["constraints"]["gpus"].size())
          : static_cast<double>(nlohmann::json::parse(gpuplan::EmbeddedGpusJson())["gpus"].size()) *
                times;
  state.counters["answer_KB"] = static_cast<double>(first.size()) / 1000;
  state.counters["per_card"] = benchmark::Counter(
      cards, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.SetLabel(std::to_string(times) + "x catalog");
}

void BM_PlanPretrain(benchmark::State& state) {
  RunPlan(state, kPretrain, gpuplan::Engine::PlanAnswer::kLean);
}
BENCHMARK(BM_PlanPretrain)->Arg(1)->Arg(10)->Arg(100)->Unit(benchmark::kMillisecond);

void BM_PlanServing(benchmark::State& state) {
  RunPlan(state, kServing, gpuplan::Engine::PlanAnswer::kLean);
}
BENCHMARK(BM_PlanServing)->Arg(1)->Arg(10)->Arg(100)->Unit(benchmark::kMillisecond);

void BM_PlanPretrainCatalog020(benchmark::State& state) {
  RunPlan(state, kPretrain, gpuplan::Engine::PlanAnswer::kLean, kCatalog020);
}
BENCHMARK(BM_PlanPretrainCatalog020)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_PlanServingCatalog020(benchmark::State& state) {
  RunPlan(state, kServing, gpuplan::Engine::PlanAnswer::kLean, kCatalog020);
}
BENCHMARK(BM_PlanServingCatalog020)->Arg(1)->Unit(benchmark::kMillisecond);

// What the page re-plans on every keystroke with its default form: LoRA of Llama 3.1 8B over
// the whole catalog, up to 64 cards (web/state.js kDefaults).
constexpr const char* kPageDefault = R"({"model": {"preset": "llama-3.1-8b"},
    "workload": {"kind": "lora", "seq_len": 4096, "tokens": 1e8},
    "constraints": {"max_gpus": 64}})";

void BM_PlanPageDefault(benchmark::State& state) {
  RunPlan(state, kPageDefault, gpuplan::Engine::PlanAnswer::kLean);
}
BENCHMARK(BM_PlanPageDefault)->Arg(1)->Unit(benchmark::kMillisecond);

// The complete answer (`gpuplan plan --full`): what every plan wrote before the lean answer.
void BM_PlanPretrainFull(benchmark::State& state) {
  RunPlan(state, kPretrain, gpuplan::Engine::PlanAnswer::kFull);
}
BENCHMARK(BM_PlanPretrainFull)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace

// The WebAssembly heap only grows. glibc gives memory back to the system when a free leaves
// 128 KB at the top of the heap, and the next plan faults it in again page by page: 367 minor
// faults a page-default plan on this project's VM, which took a plan from 1.8 ms to 5-9 ms,
// varying with the host's load. GPUPLAN_BENCH_GLIBC_DEFAULTS=1 keeps glibc's defaults; without
// it freed memory stays in the process, as in WebAssembly, so the two engines' figures compare
// their work (the WASM/native ratio of tests/wasm/ratio.mjs).
int main(int argc, char** argv) {
#ifdef __GLIBC__
  const char* defaults = std::getenv("GPUPLAN_BENCH_GLIBC_DEFAULTS");
  if (defaults == nullptr || std::string(defaults) != "1") {
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest
  }
#endif
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
