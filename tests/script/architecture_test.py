#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The measurement script builds the architecture the engine estimated, for every family: each
catalog preset's script runs against the stand-ins, whose transformers builds the parameter tree
of transformers' own modeling code for that family (standin/transformers/architectures.py,
written from transformers' modeling files, not from the engine), and the count it builds must be
the engine's params_total. A family transformers lacks, or a layout no family has, is refused by
name rather than measured as a substitute.

Usage: architecture_test.py PATH/TO/gpuplan"""
import json
import os
import re
import sys
import unittest

from script_cli import script_for
from script_test import GPUPLAN, execute, only

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVE = {"kind": "inference", "prompt_tokens": 128, "output_tokens": 4, "concurrency": 1}


def presets():
    with open(os.path.join(ROOT, "catalog", "models.json"), encoding="utf-8") as f:
        return json.load(f)["models"]


def built_and_counted(out):
    """(parameters transformers built, parameters the engine counted), from the report line."""
    found = re.search(r"built ([\d,]+) parameters, engine ([\d,]+)", out)
    if found is None:
        raise AssertionError(f"no parameter line in:\n{out}")
    return tuple(int(g.replace(",", "")) for g in found.groups())


def run(model, workload=None):
    request = {"model": model, "gpu": "h200-sxm-141gb", "workload": workload or SERVE,
               "precision": {"weights": "bf16"}}
    return execute(script_for(GPUPLAN, request))


class EveryPreset(unittest.TestCase):
    def test_each_preset_is_built_as_its_own_family_with_the_engines_count(self):
        families = set()
        for preset in presets():
            with self.subTest(preset["id"]):
                code, out, calls = run({"preset": preset["id"]})
                self.assertEqual(code, 0, out)
                config = preset["hf_config"]
                # A multimodal wrapper's language model alone: its text family.
                text = config.get("text_config", {}).get("model_type", config["model_type"])
                self.assertEqual(only(calls, "config")["model_type"], text)
                built, counted = built_and_counted(out)
                self.assertEqual(built, counted)
                self.assertNotIn("warning: transformers built", out)
                families.add(text)
        # The families the catalog spans, each checked above.
        self.assertGreaterEqual(len(families), 20, sorted(families))

    def test_a_pasted_config_is_built_from_itself(self):
        # Qwen3-30B-A3B's config.json (Hugging Face Qwen/Qwen3-30B-A3B): 128 experts of width
        # 768, 8 a token, 48 layers, q/k norms; Qwen's model card gives 30.5B parameters.
        config = {"model_type": "qwen3_moe", "hidden_size": 2048, "num_hidden_layers": 48,
                  "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
                  "intermediate_size": 6144, "moe_intermediate_size": 768, "num_experts": 128,
                  "num_experts_per_tok": 8, "decoder_sparse_step": 1, "mlp_only_layers": [],
                  "vocab_size": 151936, "tie_word_embeddings": False,
                  "max_position_embeddings": 40960}
        code, out, calls = run({"hf_config": config, "hf_id": "Qwen/Qwen3-30B-A3B"})
        self.assertEqual(code, 0, out)
        self.assertEqual(only(calls, "config")["num_experts"], 128)
        built, counted = built_and_counted(out)
        self.assertEqual(built, counted)
        self.assertAlmostEqual(built / 1e9, 30.5, delta=0.1)


    def test_families_without_a_preset_from_their_configs(self):
        # config.json fields of each repository, and the total its model card publishes.
        cases = {
            # Qwen/Qwen1.5-MoE-A2.7B: "14.3B parameters in total" (Qwen's blog).
            "qwen2_moe": ({"model_type": "qwen2_moe", "hidden_size": 2048,
                           "num_hidden_layers": 24, "num_attention_heads": 16,
                           "num_key_value_heads": 16, "intermediate_size": 5632,
                           "moe_intermediate_size": 1408, "num_experts": 60,
                           "num_experts_per_tok": 4, "shared_expert_intermediate_size": 5632,
                           "decoder_sparse_step": 1, "vocab_size": 151936,
                           "tie_word_embeddings": False}, 14.3),
            # google/gemma-7b: 8.54B parameters (Hugging Face's safetensors count).
            "gemma": ({"model_type": "gemma", "hidden_size": 3072, "num_hidden_layers": 28,
                       "num_attention_heads": 16, "num_key_value_heads": 16, "head_dim": 256,
                       "intermediate_size": 24576, "vocab_size": 256000}, 8.54),
            # bigcode/starcoder: "15.5B parameter models" (its model card).
            "gpt_bigcode": ({"model_type": "gpt_bigcode", "n_embd": 6144, "n_layer": 40,
                             "n_head": 48, "n_positions": 8192, "vocab_size": 49152,
                             "multi_query": True}, 15.5),
        }
        for family, (config, billions) in cases.items():
            with self.subTest(family):
                code, out, calls = run({"hf_config": config})
                self.assertEqual(code, 0, out)
                self.assertEqual(only(calls, "config")["model_type"], family)
                built, counted = built_and_counted(out)
                self.assertEqual(built, counted)
                self.assertAlmostEqual(built / 1e9, billions, delta=0.06)


    def test_a_whole_float_reaches_transformers_as_the_float_it_declares(self):
        # Gemma 2 2B's config.json has final_logit_softcapping 30.0; the engine writes whole
        # numbers as integers (as the page's JavaScript does), and Gemma2Config declares the
        # field float | None, which transformers 5's strict configs enforce.
        code, out, calls = run({"preset": "gemma-2-2b"})
        self.assertEqual(code, 0, out)
        config = only(calls, "config")
        self.assertIsInstance(config["final_logit_softcapping"], float)
        self.assertEqual(config["final_logit_softcapping"], 30.0)
        self.assertIsInstance(config["sliding_window"], int)  # declared int | None: kept


    def test_lora_targets_become_each_familys_module_names(self):
        # PEFT matches target_modules by module name: Phi-3 fuses q/k/v (qkv_proj) and
        # gate/up (gate_up_proj); GPT-2 names its projections c_attn, attn.c_proj, c_fc and
        # mlp.c_proj; DeepSeek-V3's latent attention adapts q_a/q_b and kv_a/kv_b
        # (modeling_phi3.py, modeling_gpt2.py, modeling_deepseek_v3.py).
        lora = {"kind": "lora", "micro_batch": 1, "seq_len": 256, "lora_rank": 8}
        cases = {
            "phi-3-mini": ["qkv_proj", "o_proj", "gate_up_proj", "down_proj"],
            "gpt2": ["c_attn", "attn.c_proj", "c_fc", "mlp.c_proj"],
            "deepseek-v2-lite": ["q_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj",
                                 "gate_proj", "up_proj", "down_proj"],
            "llama-3.2-1b": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                             "down_proj"],
        }
        for preset, modules in cases.items():
            with self.subTest(preset):
                code, out, calls = run({"preset": preset}, lora)
                self.assertEqual(code, 0, out)
                self.assertEqual(only(calls, "lora_config")["target_modules"], modules)
        # DeepSeek-V3 projects its queries through a low-rank pair.
        _, _, calls = run({"preset": "deepseek-v3"}, lora)
        self.assertEqual(only(calls, "lora_config")["target_modules"][:4],
                         ["q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj"])


class ExplicitNumbers(unittest.TestCase):
    def test_a_dense_model_is_built_as_llama_and_with_qkv_biases_as_qwen2(self):
        # 24 layers of width 1024, 16 heads (4 KV), MLP 2816, vocab 32000, untied. Worked by hand:
        # attention 1024*1024*2 + 1024*256*2 = 2,621,440; MLP 3*1024*2816 = 8,650,752; norms
        # 2048: 11,274,240 a layer, x24 = 270,581,760; embeddings and head 2*32000*1024 =
        # 65,536,000; final norm 1024: 336,118,784. Biases on q, k, v add 1024+256+256 a layer.
        model = {"layers": 24, "hidden": 1024, "heads": 16, "kv_heads": 4, "intermediate": 2816,
                 "vocab": 32000}
        code, out, calls = run(model)
        self.assertEqual(code, 0, out)
        self.assertEqual(only(calls, "config")["model_type"], "llama")
        self.assertEqual(built_and_counted(out), (336118784, 336118784))
        code, out, calls = run(dict(model, qkv_bias=True))
        self.assertEqual(code, 0, out)
        self.assertEqual(only(calls, "config")["model_type"], "qwen2")
        self.assertEqual(built_and_counted(out), (336118784 + 24 * 1536,) * 2)

    def test_routed_experts_alone_are_mixtral_and_shared_experts_are_refused(self):
        # 8 experts of width 1408, 2 a token, on the model above. By hand: a layer's experts
        # 8*3*1024*1408 = 34,603,008 and router 8*1024 = 8,192 replace the MLP: 37,234,688 a
        # layer, x24 = 893,632,512, + 65,536,000 + 1024 = 959,169,536.
        model = {"layers": 24, "hidden": 1024, "heads": 16, "kv_heads": 4, "vocab": 32000,
                 "moe": {"experts": 8, "experts_per_token": 2, "expert_intermediate": 1408}}
        code, out, calls = run(model)
        self.assertEqual(code, 0, out)
        self.assertEqual(only(calls, "config")["model_type"], "mixtral")
        self.assertEqual(built_and_counted(out), (959169536, 959169536))
        model["moe"]["shared_experts"] = 1
        code, out, calls = run(model)
        self.assertNotEqual(code, 0)
        self.assertIn("not measured: no transformers family has routed experts with shared", out)
        self.assertEqual([c for c in calls if c["call"] in ("config", "forward")], [])

    def test_a_plain_mlp_is_refused(self):
        code, out, _ = run({"layers": 4, "hidden": 512, "heads": 8, "vocab": 1000, "mlp": "plain"})
        self.assertNotEqual(code, 0)
        self.assertIn("not measured: no transformers family has a decoder with a plain MLP", out)


class UnknownFamily(unittest.TestCase):
    def test_a_family_transformers_lacks_is_refused_by_name(self):
        # The engine reads an unknown model_type's Llama-style fields (with a warning); the
        # stand-in's transformers, like a real one without the class, does not know it.
        config = {"model_type": "not_a_family", "hidden_size": 512, "num_hidden_layers": 4,
                  "num_attention_heads": 8, "intermediate_size": 1024, "vocab_size": 1000}
        code, out, calls = run({"hf_config": config})
        self.assertNotEqual(code, 0)
        self.assertIn("has no model_type 'not_a_family'", out)
        self.assertEqual([c for c in calls if c["call"] == "forward"], [])


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
