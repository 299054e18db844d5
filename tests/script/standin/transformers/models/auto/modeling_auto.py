# SPDX-License-Identifier: MIT
"""A few of transformers' causal-LM class names by model_type (models/auto/modeling_auto.py,
MODEL_FOR_CAUSAL_LM_MAPPING_NAMES): what an engine's config.json names under architectures."""
MODEL_FOR_CAUSAL_LM_MAPPING_NAMES = {
    "llama": "LlamaForCausalLM", "mistral": "MistralForCausalLM", "qwen2": "Qwen2ForCausalLM",
    "qwen3": "Qwen3ForCausalLM", "qwen3_moe": "Qwen3MoeForCausalLM",
    "mixtral": "MixtralForCausalLM", "gemma2": "Gemma2ForCausalLM",
    "gemma3_text": "Gemma3ForCausalLM", "deepseek_v3": "DeepseekV3ForCausalLM",
    "gpt2": "GPT2LMHeadModel"}
