// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "json/reader.h"
#include "model/model_spec.h"

namespace gpuplan::json_io {

/// Builds a ModelSpec from a Hugging Face config.json (Llama, Mistral, Mixtral, Qwen2/2.5,
/// Qwen2-MoE, Qwen3, Qwen3-MoE, Gemma/Gemma 2/Gemma 3, Llama 4, gpt-oss, GLM-4.5 (glm4_moe),
/// Command R (cohere, cohere2), SmolLM3, OLMo 2, Phi-3, DeepSeek-V2/V3, GPT-2, GPTBigCode,
/// Falcon, OPT, BLOOM field names). Unrelated config fields are ignored; missing architecture
/// fields are errors under `path` unless the family's transformers config class has a default.
/// Families it does not know are read with Llama's field names and a warning; models with
/// state-space or linear-attention layers are refused (`unsupported_architecture`).
std::optional<ModelSpec> ModelFromHfConfig(const Json& config, const std::string& path,
                                           const ReadContext& ctx, std::vector<Note>* warnings);

/// The config as JSON text for the measurement script, the same whichever way it came: a
/// whole number written as a float (8.0) is written as an integer (8), as JavaScript writes
/// it, so the page and the CLI write the same program (the program gives a field the type its
/// transformers config class declares).
std::string ConfigText(const Json& config);

/// Builds a ModelSpec from the contract's explicit numbers, writing the normalised copy. A stated
/// `params` that exactly one defaulted choice explains selects it, with a warning.
std::optional<ModelSpec> ModelFromExplicit(const Json& model, const std::string& path,
                                           const ReadContext& ctx, Json* normalized,
                                           std::vector<Note>* warnings = nullptr);

}  // namespace gpuplan::json_io
