// SPDX-License-Identifier: MIT
// The request contract: defaults reported, every error collected with its JSON pointer,
// unknown fields rejected, hostile input answered with errors rather than crashes.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "test_util.h"

namespace gpuplan {
namespace {

using testing::Envelope;
using testing::Json;
using testing::Result;
using testing::ShippedEngine;

Json Minimal() {
  return {{"model", {{"preset", "llama-3.1-8b"}}},
          {"workload", {{"kind", "inference"}}},
          {"gpu", "h100-sxm-80gb"}};
}

std::vector<std::string> Paths(const Json& env) {
  std::vector<std::string> out;
  for (const auto& e : env["errors"]) out.push_back(e["path"].get<std::string>());
  return out;
}

bool HasPath(const Json& env, const std::string& path) {
  for (const auto& p : Paths(env)) {
    if (p == path) return true;
  }
  return false;
}

TEST(Setup, ContractExampleMessage) {
  Json req = Minimal();
  req["workload"] = {{"kind", "lora"}, {"seq_len", -4}};
  const Json env = Envelope(req);
  ASSERT_FALSE(env["ok"].get<bool>());
  ASSERT_EQ(env["errors"].size(), 1u);
  EXPECT_EQ(env["errors"][0]["path"], "/workload/seq_len");
  EXPECT_EQ(env["errors"][0]["code"], "out_of_range");
  EXPECT_EQ(env["errors"][0]["message"], "must be a positive integer, got -4");
}

TEST(Setup, EveryProblemIsCollected) {
  Json req = Minimal();
  req["workload"] = {{"kind", "pretrain"}, {"micro_batch", "4"}, {"seq_len", 0}, {"grad_acum", 2}};
  req["parallel"] = {{"tp", 0}, {"zero", 4}};
  req["gpu"] = "h100-sxm-80g";
  req["headroom"] = -1;
  req["colour"] = "blue";
  const Json env = Envelope(req);
  ASSERT_FALSE(env["ok"].get<bool>());
  for (const char* p : {"/workload/micro_batch", "/workload/seq_len", "/workload/grad_acum",
                        "/parallel/tp", "/parallel/zero", "/gpu", "/headroom", "/colour"}) {
    EXPECT_TRUE(HasPath(env, p)) << p << " in " << env.dump();
  }
  // The unknown card gets a hint.
  for (const auto& e : env["errors"]) {
    if (e["path"] == "/gpu") {
      EXPECT_NE(e["message"].get<std::string>().find("h100-sxm-80gb"), std::string::npos);
    }
  }
}

TEST(Setup, DefaultsAreListed) {
  const Json r = Result(Minimal());
  const auto& d = r["defaults_applied"];
  const auto has = [&d](const char* p) {
    for (const auto& x : d) {
      if (x == p) return true;
    }
    return false;
  };
  EXPECT_TRUE(has("/headroom"));
  EXPECT_TRUE(has("/precision/weights"));
  EXPECT_TRUE(has("/workload/prompt_tokens"));
  EXPECT_TRUE(has("/parallel/gpus"));
  EXPECT_EQ(r["request_normalized"]["headroom"], 0.2);
  // Every result names the catalog that produced it (for share links).
  EXPECT_EQ(r["catalog_version"], ShippedEngine().CatalogVersion());
  EXPECT_EQ(r["request_normalized"]["precision"]["weights"], "bf16");
}

TEST(Setup, NormalizedRequestReproducesTheResult) {
  const Json first = Result({{"model", {{"preset", "qwen2.5-32b"}}},
                             {"workload", {{"kind", "qlora"}, {"seq_len", 8192}}},
                             {"gpu", "a100-sxm-80gb"}});
  const Json second = Result(first["request_normalized"]);
  EXPECT_EQ(first["memory"], second["memory"]);
  EXPECT_TRUE(second["defaults_applied"].empty());
}

TEST(Setup, PastedConfigMatchesThePreset) {
  Json req = Minimal();
  req["model"] = {{"hf_config", Json::parse(R"({"model_type": "llama", "hidden_size": 4096,
      "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
      "num_key_value_heads": 8, "vocab_size": 128256, "tie_word_embeddings": false,
      "max_position_embeddings": 131072, "rope_scaling": {"rope_type": "llama3"}})")}};
  EXPECT_EQ(Result(req)["memory"], Result(Minimal())["memory"]);
}

TEST(Setup, AHubIdLabelsThePastedConfig) {
  // model.hf_id names the model and is kept in request_normalized; the figures are the config's.
  const Json config = Json::parse(R"({"model_type": "llama", "hidden_size": 4096,
      "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
      "num_key_value_heads": 8, "vocab_size": 128256, "tie_word_embeddings": false,
      "max_position_embeddings": 131072, "rope_scaling": {"rope_type": "llama3"}})");
  Json req = Minimal();
  req["model"] = {{"hf_config", config}, {"hf_id", "meta-llama/Llama-3.1-8B"}};
  const Json r = Result(req);
  EXPECT_EQ(r["memory"], Result(Minimal())["memory"]);
  EXPECT_EQ(r["request_normalized"]["model"]["hf_id"], "meta-llama/Llama-3.1-8B");
  // Alone it is a label without a model: the engine never fetches one.
  req["model"] = {{"hf_id", "meta-llama/Llama-3.1-8B"}};
  const Json alone = Envelope(req);
  EXPECT_FALSE(alone["ok"].get<bool>());
  EXPECT_TRUE(HasPath(alone, "/model/hf_config"));
  req["model"] = {{"preset", "llama-3.1-8b"}, {"hf_id", 7}};
  EXPECT_TRUE(HasPath(Envelope(req), "/model/hf_id"));
}

TEST(Setup, AQuantisedCheckpointDeclaresItsKvCacheType) {
  // compressed-tensors' kv_cache_scheme of 8-bit floats and ModelOpt's kv_cache_quant_algo
  // FP8 make the KV cache fp8 by default: Llama 3.1 8B's 131,072 B a token halve to 65,536 B.
  // A request that names precision.kv_cache keeps its own.
  const Json base = Json::parse(R"({"model_type": "llama", "hidden_size": 4096,
      "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
      "num_key_value_heads": 8, "vocab_size": 128256, "tie_word_embeddings": false})");
  const auto per_token = [](const Json& r) {
    return r["memory"]["detail"]["kv_cache.bytes_per_token"].get<double>();
  };
  Json req = Minimal();
  Json config = base;
  config["quantization_config"] = {{"kv_cache_scheme", {{"num_bits", 8}, {"type", "float"}}}};
  req["model"] = {{"hf_config", config}};
  EXPECT_EQ(per_token(Result(req)), 65536);
  EXPECT_EQ(Result(req)["request_normalized"]["precision"]["kv_cache"], "fp8");
  config.erase("quantization_config");
  config["quantization"] = {{"quant_algo", "FP8"}, {"kv_cache_quant_algo", "FP8"}};
  req["model"] = {{"hf_config", config}};
  EXPECT_EQ(per_token(Result(req)), 65536);
  req["precision"] = {{"kv_cache", "bf16"}};
  EXPECT_EQ(per_token(Result(req)), 131072);
  req.erase("precision");
  req["model"] = {{"hf_config", base}};
  EXPECT_EQ(per_token(Result(req)), 131072);
}

TEST(Setup, HfConfigMissingFieldsNameTheirPath) {
  Json req = Minimal();
  req["model"] = {{"hf_config", {{"model_type", "llama"}, {"hidden_size", 4096}}}};
  const Json env = Envelope(req);
  ASSERT_FALSE(env["ok"].get<bool>());
  EXPECT_TRUE(HasPath(env, "/model/hf_config/num_hidden_layers"));
  EXPECT_TRUE(HasPath(env, "/model/hf_config/vocab_size"));
}

TEST(Setup, HfConfigLayersAreBoundedLikeAnExplicitModel) {
  // A fuzzed config.json with 2^24 layers made a plan take 11 s (tests/fuzz/plan/): the count
  // is bounded at 100,000 like an explicit model's `layers`, with an error naming the field.
  Json req = Minimal();
  req["model"] = {{"hf_config",
                   {{"model_type", "llama"},
                    {"hidden_size", 64},
                    {"num_hidden_layers", 16777216},
                    {"num_attention_heads", 1},
                    {"vocab_size", 1},
                    {"intermediate_size", 1}}}};
  const Json env = Envelope(req);
  ASSERT_FALSE(env["ok"].get<bool>());
  EXPECT_TRUE(HasPath(env, "/model/hf_config/num_hidden_layers"));
  req["model"]["hf_config"]["num_hidden_layers"] = 100000;
  EXPECT_TRUE(Envelope(req)["ok"].get<bool>());
}

TEST(Setup, AStatedParamCountSelectsTheOnlyArchitectureThatExplainsIt) {
  // 2 layers, hidden 64, 4 heads, MLP 256, vocab 1,000. Worked by hand: attention 4 x 64 x 64
  // = 16,384 per layer; a plain MLP 2 x 64 x 256 = 32,768 with two layer norms (2 x 2 x 64 =
  // 256): 49,408 per layer, 98,816 for two; embedding and untied head 2 x 64,000; final norm
  // 128: 226,944. The default (gated MLP 3 x 64 x 256 = 49,152, RMS norms) gives 259,392, tied
  // plain 162,944, tied gated 195,392: only plain and untied explains 226,944.
  Json req = Minimal();
  req["model"] = {{"layers", 2},   {"hidden", 64},        {"heads", 4},
                  {"vocab", 1000}, {"intermediate", 256}, {"params", 226944}};
  const Json r = Result(req);
  EXPECT_EQ(r["model"]["params_total"], 226944);
  EXPECT_EQ(r["request_normalized"]["model"]["mlp"], "plain");
  EXPECT_EQ(r["request_normalized"]["model"]["tied_embeddings"], false);
  bool told = false;
  for (const auto& w : r["warnings"]) told = told || w["code"] == "params_select_architecture";
  EXPECT_TRUE(told);
  // A choice the request made is kept: a gated MLP stated keeps the mismatch and its warning.
  req["model"]["mlp"] = "gated";
  const Json kept = Result(req);
  EXPECT_EQ(kept["model"]["params_total"], 259392);
  bool mismatch = false;
  for (const auto& w : kept["warnings"]) mismatch = mismatch || w["code"] == "params_mismatch";
  EXPECT_TRUE(mismatch);
}

TEST(Setup, ExplicitParamsAreChecked) {
  Json req = Minimal();
  req["model"] = {{"layers", 32},        {"hidden", 4096},        {"heads", 32},
                  {"kv_heads", 8},       {"intermediate", 14336}, {"vocab", 128256},
                  {"params", 7000000000}};
  const Json r = Result(req);
  EXPECT_EQ(r["model"]["params_total"], 8030261248);
  bool warned = false;
  for (const auto& w : r["warnings"]) warned |= w["code"] == "params_mismatch";
  EXPECT_TRUE(warned);
}

TEST(Setup, InlineCard) {
  Json req = Minimal();
  req["gpu"] = {
      {"id", "lab-card-96gb"}, {"name", "Lab card 96GB"},        {"vendor", "other"},
      {"memory_gib", 96},      {"mem_bandwidth_gb_per_s", 4000}, {"bf16_dense_tflops", 500},
      {"board_power_w", 600}};
  const Json r = Result(req);
  EXPECT_EQ(r["memory"]["capacity_bytes"], 96LL * 1024 * 1024 * 1024);
  req["gpu"]["memory_gb"] = 100;  // both units: ambiguous
  EXPECT_TRUE(HasPath(Envelope(req), "/gpu/memory_gib"));
}

TEST(Setup, QloraNeedsFourBitsAndFullTrainingNeedsFloats) {
  Json req = Minimal();
  req["workload"] = {{"kind", "qlora"}};
  req["precision"] = {{"weights", "int8"}};
  EXPECT_TRUE(HasPath(Envelope(req), "/precision/weights"));
  req["workload"] = {{"kind", "full_finetune"}};
  req["precision"] = {{"weights", "gptq_int4"}};
  EXPECT_TRUE(HasPath(Envelope(req), "/precision/weights"));
}

TEST(Setup, HostileInputGetsErrorsNotCrashes) {
  const Engine& e = ShippedEngine();
  const std::string deep(100000, '[');
  for (const std::string& text :
       {std::string(""), std::string("null"), std::string("[]"), std::string("{\"model\":"), deep,
        std::string("{\"model\": {\"preset\": \"\\u0000\"}}"),
        std::string("{\"model\":{\"preset\":\"llama-3.1-8b\"},\"workload\":{\"kind\":\"inference\","
                    "\"concurrency\":1e308},\"gpu\":\"h100-sxm-80gb\"}"),
        std::string("{\"workload\": {\"kind\": \"\xff\xfe\"}}")}) {
    const Json env = Json::parse(e.Estimate(text));
    EXPECT_FALSE(env["ok"].get<bool>()) << text.substr(0, 80);
    EXPECT_FALSE(env["errors"].empty());
  }
}

TEST(Setup, HugeButValidNumbersStayFinite) {
  // 2^24 + 2^24 tokens x 2^20 sequences x 131,072 bytes is 4.6e18 bytes of KV cache: beyond
  // the 2^53 bytes a JSON number holds exactly, so the answer is a clear error, never NaN or a
  // wrapped-around integer.
  Json req = Minimal();
  req["workload"] = {{"kind", "inference"},
                     {"prompt_tokens", 16777216},
                     {"output_tokens", 16777216},
                     {"concurrency", 1048576}};
  // On one card: data-parallel ranks would split the sequences between them.
  req["parallel"] = {{"gpus", 1}, {"tp", 1}};
  const Json env = Envelope(req);
  ASSERT_FALSE(env["ok"].get<bool>()) << env.dump();
  EXPECT_EQ(env["errors"][0]["code"], "result_out_of_range");
  EXPECT_EQ(env.dump().find("nan"), std::string::npos);
  // A large but representable job is answered: 2^20 + 2^20 tokens x 1024 sequences x 131,072
  // bytes = 2^48 bytes of KV cache.
  req["workload"] = {{"kind", "inference"},
                     {"prompt_tokens", 1048576},
                     {"output_tokens", 1048576},
                     {"concurrency", 1024}};
  const Json big = Envelope(req);
  ASSERT_TRUE(big["ok"].get<bool>()) << big.dump().substr(0, 300);
  EXPECT_EQ(big["result"]["memory"]["per_gpu_bytes"]["kv_cache"], 281474976710656);
  EXPECT_FALSE(big["result"]["memory"]["fits"].get<bool>());
}

TEST(Setup, ModelsBeyondAQuadrillionParametersAreRefused) {
  // Each dimension is in range; together they are 2^24 x 2^24 x 10^5 layers: far beyond any
  // model, and beyond 64-bit integer arithmetic.
  Json req = Minimal();
  req["model"] = {{"layers", 100000},
                  {"hidden", 16777216},
                  {"heads", 16777216},
                  {"vocab", 16777216},
                  {"intermediate", 16777216}};
  const Json env = Envelope(req);
  ASSERT_FALSE(env["ok"].get<bool>());
  EXPECT_EQ(env["errors"][0]["path"], "/model");
  // hidden < heads leaves no head dimension unless one is given.
  req["model"] = {{"layers", 2}, {"hidden", 8}, {"heads", 16}, {"vocab", 100}};
  EXPECT_TRUE(HasPath(Envelope(req), "/model/head_dim"));
}

TEST(Setup, ErrorsAreCappedAtAHundred) {
  Json req = Minimal();
  Json targets = Json::array();
  for (int i = 0; i < 60; ++i) targets.push_back("not_a_module");
  req["workload"] = {{"kind", "lora"}, {"lora_targets", targets}};
  req["constraints"] = {{"gpus", Json::array()}};
  for (int i = 0; i < 60; ++i) req["constraints"]["gpus"].push_back("no-such-card");
  const Json env = Envelope(req);
  EXPECT_EQ(env["errors"].size(), 101u);
  EXPECT_EQ(env["errors"][100]["code"], "too_many_errors");
}

TEST(Setup, CatalogErrorsCarryTheirPath) {
  const Engine bad(R"({"schema_version": 1, "catalog_version": "t", "gpus": [
      {"id": "a", "name": "A", "vendor": "nvidia", "memory_gib": 80,
       "mem_bandwidth_gb_per_s": 2000, "bf16_dense_tflops": 10, "fp32_tflops": 20,
       "board_power_w": 300},
      {"id": "a", "name": "A2", "vendor": "nvidia", "memory_gib": 80,
       "mem_bandwidth_gb_per_s": -5, "bf16_dense_tflops": 100, "board_power_w": 300,
       "colour": "green"},
      {"id": "b", "name": "B", "vendor": "nvidia", "memory_gib": 80,
       "mem_bandwidth_gb_per_s": 2000, "bf16_dense_tflops": 100, "board_power_w": 300},
      {"id": "b", "name": "B again", "vendor": "nvidia", "memory_gb": 80,
       "mem_bandwidth_gb_per_s": 2000, "bf16_dense_tflops": 100, "board_power_w": 300}]})",
                   R"({"schema_version": 1, "models": [{"id": "m", "name": "M",
      "hf_config": {"model_type": "llama", "hidden_size": 64}}]})");
  EXPECT_FALSE(bad.CatalogOk());
  const Json env = Json::parse(bad.Estimate(Minimal().dump()));
  std::vector<std::string> paths = Paths(env);
  const auto has = [&paths](const char* p) {
    return std::find(paths.begin(), paths.end(), p) != paths.end();
  };
  EXPECT_TRUE(has("/gpus/0/bf16_dense_tflops"));  // bf16 below fp32
  EXPECT_TRUE(has("/gpus/1/mem_bandwidth_gb_per_s"));
  EXPECT_TRUE(has("/gpus/1/colour"));
  EXPECT_TRUE(has("/gpus/3/id"));  // duplicate id
  EXPECT_TRUE(has("/models/0/hf_config/num_hidden_layers"));
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

using testing::Envelope;
using testing::Json;
using testing::Result;

TEST(Setup, GlobalBatchSetsGradientAccumulation) {
  // global_batch = micro_batch x grad_accum x dp: 256 = 4 x 8 x 8 data-parallel ranks.
  Json req = {{"model", {{"preset", "llama-3.1-8b"}}},
              {"workload", {{"kind", "lora"}, {"micro_batch", 4}, {"global_batch", 256}}},
              {"parallel", {{"gpus", 8}}},
              {"gpu", "h100-sxm-80gb"}};
  EXPECT_EQ(Result(req)["request_normalized"]["workload"]["grad_accum"], 8);
  req["workload"]["grad_accum"] = 4;  // 4 x 4 x 8 = 128, not 256
  const Json env = Envelope(req);
  ASSERT_FALSE(env["ok"].get<bool>());
  EXPECT_EQ(env["errors"][0]["path"], "/workload/global_batch");
}

}  // namespace
}  // namespace gpuplan
