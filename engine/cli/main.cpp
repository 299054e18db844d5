// SPDX-License-Identifier: MIT
// The gpuplan command line: reads the request and catalog files the engine never touches,
// prints the result on stdout (exit 0) or one error per line on stderr (exit 2).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "embedded_catalog.h"
#include "gpuplan/api.h"
#include "validate.h"

namespace {

using Json = nlohmann::json;

constexpr const char* kMainHelp = R"(gpuplan: GPU capacity planner for language-model work

Usage:
  gpuplan estimate [FILE|-] [--catalog DIR]   evaluate one fixed setup (request JSON)
  gpuplan plan [FILE|-] [--full] [--catalog DIR]
                                              rank every card: count, setup, time, cost
  gpuplan script [FILE|-] [--catalog DIR]     a PyTorch script that measures the estimate
  gpuplan calibrate [FILE|-] [--catalog DIR]  compare a measured run with the estimate,
                                              derive correction factors, diagnose mismatches
  gpuplan fleet [FILE|-] [--catalog DIR]      a team's workloads on one pool per card type
  gpuplan traffic [FILE|-] [--catalog DIR]    replicas, cards and cost per million tokens
                                              for a request rate and length distributions
  gpuplan launch [FILE|-] [--catalog DIR]     the command line (and config file) that runs
                                              one setup in its framework
  gpuplan limits [FILE|-] [--catalog DIR]     the most one setup can take: batch, length,
                                              concurrency, context, largest model per purpose
  gpuplan catalog [--gpus|--models|--figures|--stacks] [--catalog DIR]
                                              print the catalog in use as JSON
  gpuplan validate CASES.json... [--html FILE] [--catalog DIR]
                                              accuracy report against measured cases
  gpuplan --version

Every command takes --help. Results go to stdout (exit 0); input errors go to stderr, one per
line with the JSON path of the field (exit 2). --catalog DIR reads DIR/gpus.json and
DIR/models.json instead of the catalog built into this binary. --hf-config FILE (estimate,
plan, script, calibrate, traffic, launch, limits) reads a local config.json and plans with it
as the request's model.hf_config (model.hf_id, if given, stays as its label); the CLI never
fetches anything from the network.
)";

constexpr const char* kEstimateHelp = R"(gpuplan estimate [FILE|-] [--catalog DIR]

Reads one request (the contract's JSON: model, workload, precision, optimizer,
memory_techniques, parallel, gpu, headroom, host, runtime, constraints) from FILE, or from
standard input when FILE is '-' or absent, and prints the estimate: memory per GPU in seven
parts, whether it fits with the headroom, host RAM, power, warnings, infeasibility reasons and
the formula behind each figure. A setup that cannot run is still a result (exit 0) with
"fits": false and its reasons under "infeasible".

Example:
  echo '{"model":{"preset":"llama-3.1-8b"},"workload":{"kind":"lora"},"gpu":"rtx-4090-24gb"}' \
    | gpuplan estimate
)";

constexpr const char* kPlanHelp = R"(gpuplan plan [FILE|-] [--full] [--catalog DIR]

Searches every card of the catalog (or constraints.gpus) over counts (powers of two and whole
nodes up to constraints.max_gpus, 64 by default) and setups (tensor and pipeline parallel,
ZeRO stage, recomputation, micro-batch at a fixed global batch; for serving, GPUs per replica
and replicas for the requested concurrency at the TTFT/TPOT targets). Keeps the best setup per
card for constraints.objective (default: by purpose; time, cost, count, power), ranks the
cards, lists the rejected ones with their reason, and gives advice.

Each recommendation carries what a table of options shows (memory parts and total, fits, time
or throughput, cost, power, their bands, warnings); `gpuplan estimate` on the recommendation's
setup gives the rest (explain, levers, diagnosis). --full puts every recommendation's complete
estimate in the plan instead.

Example:
  echo '{"model":{"preset":"llama-3.1-70b"},"workload":{"kind":"lora"}}' | gpuplan plan
)";

constexpr const char* kScriptHelp = R"(gpuplan script [FILE|-] [--catalog DIR]

Reads one request (as for estimate: it names a gpu) and prints a Python program that rebuilds
the model with random weights (nothing is downloaded), runs the workload with the request's
settings on one GPU (3 warm-up steps excluded, 10 measured), and prints the measured peak
memory (allocated and reserved), step time and tokens/s, or for serving the TTFT and TPOT
percentiles, next to the engine's estimate of the same job on one GPU, flagging differences
beyond 10%. Needs torch and transformers; peft for LoRA; bitsandbytes for 4/8-bit.

Example:
  echo '{"model":{"preset":"llama-3.2-1b"},"workload":{"kind":"lora"},"gpu":"h100-sxm-80gb"}' \
    | gpuplan script > gpuplan_measure.py && python3 gpuplan_measure.py
)";

constexpr const char* kCalibrateHelp = R"(gpuplan calibrate [FILE|-] [--catalog DIR]

Reads one request describing the setup that was measured (as for estimate) plus "measured":
  peak_allocated_bytes, peak_reserved_bytes, out_of_memory   memory (torch's peak counters)
  tokens_per_s                  training, the whole job at parallel.gpus
  scaling: [{gpus, tokens_per_s}, ...]   the same per-GPU batch on 1, 2, 4... cards
  ttft_ms, tpot_ms              serving, medians at workload.concurrency
  gpu_utilization, gpu_memory_share, host_ram_share   0-1, from nvidia-smi and free
and prints each measured figure against the estimate (the 10% success line), the correction
factors that reproduce the measurement ("calibration": compute, bandwidth, memory,
interconnect), how each was derived, the monitoring targets (memory 85%+, utilisation 90%+,
host RAM 70-80%) and the mismatch diagnosis with its remedies. Put the "calibration" object
into later requests (estimate, plan) to apply the factors; their results say so.

Example:
  echo '{"model":{"preset":"llama-3.2-1b"},"workload":{"kind":"full_finetune","micro_batch":4,
        "seq_len":2048},"gpu":"h100-sxm-80gb","measured":{"tokens_per_s":30000}}' \
    | gpuplan calibrate
)";

constexpr const char* kFleetHelp = R"(gpuplan fleet [FILE|-] [--catalog DIR]

Reads {"workloads": [...], "constraints": {"gpus", "max_gpus"}, "growth"}: each workload is
{"name", "request"} where request is a plan request, plus how it recurs:
  training or offline inference   "every_days" (offline also "requests_per_run")
  online inference                "concurrency_by_hour": 24 numbers (default: the request's)
For every card type that runs all of them, prints the serving pool (peak, minimum, burst cards,
utilisation), the batch pool sized for daily use (at least the largest job), whether serving
and batch should share a pool (from the serving pool's idle hours), and the monthly cost owned
(sized for the peak) or rented (following the curve); "growth" scales demand (six months').
Money: "currency" {code, per_usd} converts the catalog's USD prices, "prices" {card id: price
per card-hour} is your own list, "ownership" {purchase_per_card (a price, or {card id: price}),
years, power_per_kwh, pue} prices owning as purchase over the years plus power.

Example:
  gpuplan fleet tests/cli/fleet_example.json
)";

constexpr const char* kLimitsHelp = R"(gpuplan limits [FILE|-] [--catalog DIR]

Reads an estimate request (with its gpu and parallel.gpus) and answers the reverse questions for
that card, count and layout, each with the request's other settings held and the headroom kept:
  training   the largest micro-batch (at seq_len) and sequence length (at micro_batch)
  serving    the largest concurrency and context per sequence (prompt + output, at the
             request's concurrency and alone) that fit and meet the TTFT/TPOT targets
and, per purpose (pretrain, full_finetune, lora, qlora, inference), the catalog's largest model
that runs on at most that many of the card, in the layout plan finds.

Example:
  echo '{"model":{"preset":"llama-3.1-8b"},"gpu":"rtx-4090-24gb","workload":{"kind":"inference"}}' \
    | gpuplan limits
)";

constexpr const char* kLaunchHelp = R"(gpuplan launch [FILE|-] [--catalog DIR]

Reads an estimate request (a fixed setup: gpu, parallel, batch, precision; `gpuplan plan`'s
recommendations give them) and prints {"framework", "command", "files", "notes"}: the command
line, and the configuration file where the framework takes one, that runs it as estimated.
Serving: vllm (default), sglang, tensorrt_llm, llama_cpp. Training: a Hugging Face Trainer
script under torchrun with FSDP (default) or DeepSpeed (ZeRO-1, or framework deepspeed), or
Megatron-LM's pretrain_gpt.py (framework megatron).

Example:
  echo '{"model":{"preset":"llama-3.1-70b"},"gpu":"h100-sxm-80gb","workload":{"kind":"inference"},
         "parallel":{"gpus":4,"tp":4}}' | gpuplan launch
)";

constexpr const char* kTrafficHelp = R"(gpuplan traffic [FILE|-] [--catalog DIR]

Reads an inference plan request plus
  "traffic": {"requests_per_s": 20, "prompt_tokens": {"mean": 1500, "p95": 6000},
              "output_tokens": {"mean": 300, "p95": 1200}, "prefix_cache_hit": 0.3}
and, for each card type (constraints.gpus, else the catalog), sizes the replicas: the plan's
replica for the mean request, the concurrency each holds within the TPOT target (prefills
interleaved), the requests per second that gives (Little's law), the replicas and cards the
rate needs, the p95 prompt's TTFT, and the cost per hour and per million tokens. Cheapest first.

Example:
  echo '{"model":{"preset":"llama-3.1-8b"},"workload":{"kind":"inference"},
         "constraints":{"tpot_ms":50,"ttft_ms":2000,"gpus":["h100-sxm-80gb","l40s-48gb"]},
         "traffic":{"requests_per_s":20,"prompt_tokens":{"mean":1500,"p95":6000},
                    "output_tokens":{"mean":300,"p95":1200}}}' | gpuplan traffic
)";

constexpr const char* kCatalogHelp =
    R"(gpuplan catalog [--gpus|--models|--figures|--stacks] [--catalog DIR]

Prints {"version", "gpus", "models"} for the catalog in use; --gpus or --models prints one half.
--figures prints the answer's figures instead: each one's JSON pointer, unit and error band.
--stacks prints the stack and engine profiles a request can name (its `framework`), each policy
value with its source.
)";

constexpr const char* kValidateHelp =
    R"(gpuplan validate CASES.json... [--html FILE] [--catalog DIR]

Runs every case of each CASES.json (tests/reference/memory_cases.json and perf_cases.json are
the shipped sets: published measurements, each with its source) and prints predicted vs
measured, the error per case, the median |log(pred/meas)| per group, the mean over groups, and
the leave-one-group-out figure; then the error bands over all files (predicted / measured,
5th-95th percentile, or the extremes under 20 cases) per kind and framework, the ranges the
estimate reports. --html FILE also writes the accuracy page (web/accuracy.html).
Exit 0 when the report was printed, 2 when a file is malformed.
)";

std::optional<std::string> ReadFile(const std::string& path) {
  if (path == "-") {
    return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Args {
  std::string command;
  std::vector<std::string> positional;
  std::string catalog_dir;
  std::string html;       ///< validate: the accuracy page to write
  std::string hf_config;  ///< a local config.json that becomes the request's model.hf_config
  bool help = false;
  bool gpus_only = false;
  bool models_only = false;
  bool figures = false;
  bool stacks = false;
  bool full = false;  ///< plan: every recommendation's complete estimate
  std::string error;
};

Args ParseArgs(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    if (s == "--help" || s == "-h") {
      a.help = true;
    } else if (s == "--catalog") {
      if (i + 1 >= argc) {
        a.error = "--catalog needs a directory";
      } else {
        a.catalog_dir = argv[++i];
      }
    } else if (s == "--html") {
      if (i + 1 >= argc) {
        a.error = "--html needs a file";
      } else {
        a.html = argv[++i];
      }
    } else if (s == "--hf-config") {
      if (i + 1 >= argc) {
        a.error = "--hf-config needs a config.json file";
      } else {
        a.hf_config = argv[++i];
      }
    } else if (s == "--gpus") {
      a.gpus_only = true;
    } else if (s == "--models") {
      a.models_only = true;
    } else if (s == "--figures") {
      a.figures = true;
    } else if (s == "--stacks") {
      a.stacks = true;
    } else if (s == "--full") {
      a.full = true;
    } else if (s.size() > 1 && s[0] == '-' && s != "-" && s != "--version") {
      a.error = "unknown option " + s;
    } else if (a.command.empty()) {
      a.command = s;
    } else {
      a.positional.push_back(s);
    }
  }
  return a;
}

int Fail(const std::string& message) {
  std::cerr << "gpuplan: " << message << "\n";
  return 2;
}

// Prints the envelope's result, or its errors one a line.
// Prints an envelope's result as JSON, or, given `text_field`, that string field of the result
// as it is (gpuplan script prints the program itself, ready to run).
int Emit(const std::string& envelope, const char* text_field = nullptr) {
  Json doc = Json::parse(envelope, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return Fail("internal error: malformed envelope");
  if (doc.value("ok", false)) {
    const Json& result = doc["result"];
    if (text_field == nullptr) {
      std::cout << result.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
    } else if (result.contains(text_field) && result[text_field].is_string()) {
      std::cout << result[text_field].get<std::string>();
    } else {
      return Fail("internal error: no " + std::string(text_field) + " in the result");
    }
    return 0;
  }
  // The contract's line, "<JSON pointer>: <reason>"; the whole document is shown as "(root)".
  for (const auto& e : doc["errors"]) {
    const std::string path = e.value("path", "");
    std::cerr << (path.empty() ? "(root)" : path) << ": " << e.value("message", "") << "\n";
  }
  return 2;
}

std::optional<gpuplan::Engine> LoadEngine(const Args& a) {
  if (a.catalog_dir.empty()) {
    return gpuplan::Engine(gpuplan::EmbeddedGpusJson(), gpuplan::EmbeddedModelsJson());
  }
  const auto gpus = ReadFile(a.catalog_dir + "/gpus.json");
  const auto models = ReadFile(a.catalog_dir + "/models.json");
  if (!gpus || !models) {
    Fail("cannot read " + a.catalog_dir + "/gpus.json and " + a.catalog_dir + "/models.json");
    return std::nullopt;
  }
  return gpuplan::Engine(*gpus, *models);
}

// --hf-config FILE: the local config.json becomes the request's model.hf_config, replacing a
// preset or explicit numbers there; model.hf_id, if the request has one, stays as its label.
// The file is read here and never fetched: the CLI does not touch the network.
std::optional<std::string> WithHfConfig(const std::string& request, const std::string& path) {
  const auto text = ReadFile(path);
  if (!text) {
    Fail("cannot read " + path);
    return std::nullopt;
  }
  Json config = Json::parse(*text, nullptr, false);
  if (config.is_discarded() || !config.is_object()) {
    Fail(path + ": is not a JSON object (a config.json)");
    return std::nullopt;
  }
  Json doc = Json::parse(request, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return request;  // the engine names the problem
  Json model = Json::object();
  if (doc.contains("model") && doc["model"].is_object() && doc["model"].contains("hf_id")) {
    model["hf_id"] = doc["model"]["hf_id"];
  }
  model["hf_config"] = std::move(config);
  doc["model"] = std::move(model);
  return doc.dump();
}

int Main(int argc, char** argv) {
  const Args a = ParseArgs(argc, argv);
  if (!a.error.empty()) return Fail(a.error + " (see gpuplan --help)");
  if (a.command == "--version") {
    std::cout << "gpuplan " << gpuplan::Version() << "\n";
    return 0;
  }
  const std::set<std::string> one_model = {"estimate", "plan",   "script", "calibrate",
                                           "traffic",  "launch", "limits"};
  if (!a.hf_config.empty() && one_model.count(a.command) == 0) {
    return Fail(
        "--hf-config is for a request with one model: estimate, plan, script, calibrate, "
        "traffic, launch or limits");
  }
  if (a.command.empty()) {
    std::cout << kMainHelp;
    return a.help ? 0 : 2;
  }
  // estimate and plan: one request from a file or standard input, one envelope out.
  const auto run_request = [&a](const char* help, const auto& call,
                                const char* text_field = nullptr) {
    if (a.help) return std::cout << help, 0;
    if (a.positional.size() > 1) return Fail(a.command + " takes one request file");
    const std::string file = a.positional.empty() ? "-" : a.positional[0];
    auto request = ReadFile(file);
    if (!request) return Fail("cannot read " + file);
    if (!a.hf_config.empty()) {
      request = WithHfConfig(*request, a.hf_config);
      if (!request) return 2;
    }
    auto engine = LoadEngine(a);
    if (!engine) return 2;
    return Emit(call(*engine, *request), text_field);
  };
  if (a.command == "estimate") {
    return run_request(kEstimateHelp, [](const gpuplan::Engine& e, const std::string& r) {
      return e.Estimate(r);
    });
  }
  if (a.command == "plan") {
    const auto answer =
        a.full ? gpuplan::Engine::PlanAnswer::kFull : gpuplan::Engine::PlanAnswer::kLean;
    return run_request(kPlanHelp, [answer](const gpuplan::Engine& e, const std::string& r) {
      return e.Plan(r, answer);
    });
  }
  if (a.command == "script") {
    return run_request(
        kScriptHelp, [](const gpuplan::Engine& e, const std::string& r) { return e.Script(r); },
        "script");
  }
  if (a.command == "calibrate") {
    return run_request(kCalibrateHelp, [](const gpuplan::Engine& e, const std::string& r) {
      return e.Calibrate(r);
    });
  }
  if (a.command == "fleet") {
    return run_request(kFleetHelp,
                       [](const gpuplan::Engine& e, const std::string& r) { return e.Fleet(r); });
  }
  if (a.command == "traffic") {
    return run_request(kTrafficHelp,
                       [](const gpuplan::Engine& e, const std::string& r) { return e.Traffic(r); });
  }
  if (a.command == "launch") {
    return run_request(kLaunchHelp,
                       [](const gpuplan::Engine& e, const std::string& r) { return e.Launch(r); });
  }
  if (a.command == "limits") {
    return run_request(kLimitsHelp,
                       [](const gpuplan::Engine& e, const std::string& r) { return e.Limits(r); });
  }
  if (a.command == "catalog") {
    if (a.help) return std::cout << kCatalogHelp, 0;
    auto engine = LoadEngine(a);
    if (!engine) return 2;
    const auto part = a.stacks      ? gpuplan::CatalogPart::kStacks
                      : a.figures   ? gpuplan::CatalogPart::kFigures
                      : a.gpus_only ? gpuplan::CatalogPart::kGpus
                                    : (a.models_only ? gpuplan::CatalogPart::kModels
                                                     : gpuplan::CatalogPart::kAll);
    return Emit(engine->Catalog(part));
  }
  if (a.command == "validate") {
    if (a.help) return std::cout << kValidateHelp, 0;
    if (a.positional.empty()) return Fail("validate takes one or more CASES.json files");
    auto engine = LoadEngine(a);
    if (!engine) return 2;
    std::vector<gpuplan::cli::CaseResult> all;
    for (const auto& path : a.positional) {
      const auto contents = ReadFile(path);
      if (!contents) return Fail("cannot read " + path);
      const int rc = gpuplan::cli::Validate(*engine, path, *contents, &all);
      if (rc != 0) return rc;
    }
    gpuplan::cli::PrintBands(all);
    if (!a.html.empty()) {
      std::ofstream out(a.html, std::ios::binary);
      out << gpuplan::cli::AccuracyPage(all, gpuplan::Version(), engine->CatalogVersion());
      if (!out) return Fail("cannot write " + a.html);
    }
    return 0;
  }
  return Fail("unknown command '" + a.command + "' (see gpuplan --help)");
}

}  // namespace

int main(int argc, char** argv) {
  // The engine never throws; this guards the CLI's own I/O (a failed write, an allocation).
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "gpuplan: internal error: " << e.what() << "\n";
    return 3;
  }
}
