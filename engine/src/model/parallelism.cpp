// SPDX-License-Identifier: MIT
#include "model/parallelism.h"

#include <string>

namespace gpuplan {
namespace {

Note Infeasible(std::string code, std::map<std::string, double> params, std::string message) {
  return Note{std::move(code), std::move(params), std::move(message)};
}

std::string Str(int64_t v) { return std::to_string(v); }

}  // namespace

std::vector<Note> CheckLayout(const ModelSpec& m, const Parallel& p) {
  std::vector<Note> out;
  const auto d = [](int64_t v) { return static_cast<double>(v); };
  const int64_t model_parallel = p.tp * p.pp * p.cp;
  if (p.gpus % model_parallel != 0) {
    out.push_back(Infeasible(
        "gpus_not_divisible", {{"gpus", d(p.gpus)}, {"tp_pp_cp", d(model_parallel)}},
        "gpus (" + Str(p.gpus) + ") is not a multiple of tp*pp*cp (" + Str(model_parallel) + ")"));
  }
  if (m.heads % p.tp != 0) {
    out.push_back(Infeasible("tp_does_not_divide_heads", {{"tp", d(p.tp)}, {"heads", d(m.heads)}},
                             "tensor parallel " + Str(p.tp) + " does not divide the " +
                                 Str(m.heads) + " attention heads"));
  }
  // KV heads may be replicated when tp is a multiple of them (Megatron, vLLM), not otherwise.
  if (!m.IsMla() && m.kv_heads % p.tp != 0 && p.tp % m.kv_heads != 0) {
    out.push_back(Infeasible("tp_does_not_divide_kv_heads",
                             {{"tp", d(p.tp)}, {"kv_heads", d(m.kv_heads)}},
                             "tensor parallel " + Str(p.tp) + " neither divides nor is a " +
                                 "multiple of the " + Str(m.kv_heads) + " key/value heads"));
  }
  const int64_t widest = m.IsMoe() && m.moe.first_dense_layers == 0 ? 0 : m.intermediate;
  if (widest > 0 && widest % p.tp != 0) {
    out.push_back(Infeasible(
        "tp_does_not_divide_intermediate", {{"tp", d(p.tp)}, {"intermediate", d(widest)}},
        "tensor parallel " + Str(p.tp) + " does not divide the MLP width " + Str(widest)));
  }
  if (p.pp > m.layers) {
    out.push_back(
        Infeasible("pp_exceeds_layers", {{"pp", d(p.pp)}, {"layers", d(m.layers)}},
                   "pipeline parallel " + Str(p.pp) + " exceeds the " + Str(m.layers) + " layers"));
  }
  if (p.ep > 1) {
    if (!m.IsMoe()) {
      out.push_back(
          Infeasible("ep_without_experts", {{"ep", d(p.ep)}},
                     "expert parallel " + Str(p.ep) + " needs a mixture-of-experts model"));
    } else if (p.ep > m.moe.experts) {
      out.push_back(Infeasible(
          "ep_exceeds_experts", {{"ep", d(p.ep)}, {"experts", d(m.moe.experts)}},
          "expert parallel " + Str(p.ep) + " exceeds the " + Str(m.moe.experts) + " experts"));
    } else if (m.moe.experts % p.ep != 0) {
      out.push_back(Infeasible("ep_does_not_divide_experts",
                               {{"ep", d(p.ep)}, {"experts", d(m.moe.experts)}},
                               "expert parallel " + Str(p.ep) + " does not divide the " +
                                   Str(m.moe.experts) + " experts"));
    }
    if (p.gpus % model_parallel == 0 && p.ShardGroup() % p.ep != 0) {
      out.push_back(Infeasible(
          "ep_does_not_divide_data_parallel", {{"ep", d(p.ep)}, {"dp_cp", d(p.ShardGroup())}},
          "expert parallel " + Str(p.ep) + " must divide the data x context parallel ranks (" +
              Str(p.ShardGroup()) + "), which it is carved from"));
    }
  }
  return out;
}

}  // namespace gpuplan
