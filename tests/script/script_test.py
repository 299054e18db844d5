#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`gpuplan script` end to end: each generated program is compiled and then run against the
recording stand-ins for torch, transformers, peft and bitsandbytes (standin/), and the calls it
made are checked against the request's settings. Expected values are the requests' own
numbers and Llama 3.2 1B's config.json (hidden 2048, 16 layers, 32 heads, 8 KV heads, head_dim
64, intermediate 8192, vocab 128256, tied embeddings).

Usage: script_test.py PATH/TO/gpuplan"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

GPUPLAN = sys.argv.pop(1) if len(sys.argv) > 1 else "build/native-release/bin/gpuplan"
STANDIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "standin")
WARMUP, MEASURED = 3, 10  # the method the script states (seed 002: warm-up excluded)


def generate(request):
    run = subprocess.run([GPUPLAN, "script", "-"], input=json.dumps(request), text=True,
                         capture_output=True, check=False)
    if run.returncode != 0:
        raise AssertionError(f"gpuplan script failed: {run.stderr}")
    return run.stdout


def execute(source):
    """Runs the script on the stand-ins; answers (exit code, stdout+stderr, recorded calls)."""
    with tempfile.TemporaryDirectory() as tmp:
        path, record = os.path.join(tmp, "gpuplan_measure.py"), os.path.join(tmp, "calls.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(source)
        compile(source, path, "exec")  # valid Python before anything runs
        env = dict(os.environ, PYTHONPATH=STANDIN, GPUPLAN_RECORD=record)
        run = subprocess.run([sys.executable, path], env=env, text=True, capture_output=True,
                             check=False)
        with open(record, encoding="utf-8") as f:
            calls = json.load(f)
    return run.returncode, run.stdout + run.stderr, calls


def only(calls, name):
    found = [c for c in calls if c["call"] == name]
    if len(found) != 1:
        raise AssertionError(f"{len(found)} '{name}' calls, expected one: {found}")
    return found[0]


def count(calls, name, **match):
    return sum(1 for c in calls if c["call"] == name and all(c.get(k) == v for k, v in match.items()))


LLAMA_1B = {"model_type": "llama", "vocab_size": 128256, "hidden_size": 2048,
            "intermediate_size": 8192, "num_hidden_layers": 16, "num_attention_heads": 32,
            "num_key_value_heads": 8, "head_dim": 64, "tie_word_embeddings": True}


class MeasurementScript(unittest.TestCase):
    def test_full_finetune_mixed_precision_with_recompute(self):
        request = {"model": {"preset": "llama-3.2-1b"}, "gpu": "h100-sxm-80gb",
                   "workload": {"kind": "full_finetune", "micro_batch": 2, "seq_len": 1024,
                                "grad_accum": 4},
                   "precision": {"weights": "bf16", "master_weights": "fp32"},
                   "optimizer": "adamw", "memory_techniques": {"recompute": "full"}}
        code, out, calls = execute(generate(request))
        self.assertEqual(code, 0, out)
        config = only(calls, "config")
        for key, value in LLAMA_1B.items():
            self.assertEqual(config[key], value, key)
        # Mixed precision: fp32 parameters (the master copy), bf16 autocast, SDPA attention.
        built = only(calls, "from_config")
        self.assertEqual((built["torch_dtype"], built["attn_implementation"]),
                         ("torch.float32", "sdpa"))
        self.assertEqual(only(calls, "randint")["size"], [2, 1024])
        # (3 warm-up + 10 measured) steps x 4 micro-batches = 52 forward passes, all with labels.
        self.assertEqual(count(calls, "forward", shape=[2, 1024], labels=True), 52)
        self.assertEqual(count(calls, "autocast_enter", dtype="torch.bfloat16", enabled=True), 52)
        self.assertEqual(count(calls, "loss_scaled", divisor=4), 52)
        self.assertEqual(count(calls, "optimizer_step"), 13)
        opt = only(calls, "optimizer")
        self.assertEqual((opt["name"], opt["lr"]), ("AdamW", 1e-5))
        self.assertEqual(only(calls, "gradient_checkpointing_enable"),
                         {"call": "gradient_checkpointing_enable",
                          "gradient_checkpointing_kwargs": {"use_reentrant": False}})
        # The peak counters are reset once, after the warm-up steps and before step 4.
        reset = calls.index(only(calls, "reset_peak_memory_stats"))
        steps_before = sum(1 for c in calls[:reset] if c["call"] == "optimizer_step")
        self.assertEqual(steps_before, WARMUP)
        self.assertIn("peak_allocated_bytes", out)
        self.assertIn("tokens_per_s", out)
        self.assertIn("GPUPLAN_MEASUREMENT ", out)

    def test_lora_targets_rank_optimizer_and_no_recompute(self):
        request = {"model": {"preset": "llama-3.2-1b"}, "gpu": "rtx-4090-24gb",
                   "workload": {"kind": "lora", "micro_batch": 1, "seq_len": 2048,
                                "lora_rank": 8, "lora_targets": "qv"},
                   "optimizer": "sgd_momentum",
                   "memory_techniques": {"recompute": "none", "flash_attention": False}}
        code, out, calls = execute(generate(request))
        self.assertEqual(code, 0, out)
        built = only(calls, "from_config")
        self.assertEqual((built["torch_dtype"], built["attn_implementation"]),
                         ("torch.bfloat16", "eager"))
        lora = only(calls, "lora_config")
        self.assertEqual((lora["r"], lora["lora_alpha"], lora["target_modules"]),
                         (8, 16, ["q_proj", "v_proj"]))
        self.assertEqual(count(calls, "gradient_checkpointing_enable"), 0)
        opt = only(calls, "optimizer")
        self.assertEqual((opt["name"], opt["momentum"]), ("SGD", 0.9))
        # LoRA trains in the base's dtype: autocast is present but off.
        self.assertEqual(count(calls, "autocast_enter", enabled=False), 13)

    def test_qlora_loads_a_4bit_base_and_pages_the_optimizer(self):
        request = {"model": {"preset": "llama-3.2-1b"}, "gpu": "rtx-4090-24gb",
                   "workload": {"kind": "qlora", "seq_len": 512},
                   "precision": {"weights": "nf4"}, "optimizer": "paged_adamw_8bit"}
        source = generate(request)
        code, out, calls = execute(source)
        self.assertEqual(code, 0, out)
        self.assertEqual(count(calls, "save_pretrained"), 1)
        loaded = only(calls, "from_pretrained")
        self.assertEqual(loaded["quantization"], {
            "load_in_4bit": True, "bnb_4bit_quant_type": "nf4",
            "bnb_4bit_use_double_quant": True, "bnb_4bit_compute_dtype": "torch.bfloat16"})
        self.assertEqual(only(calls, "prepare_model_for_kbit_training"),
                         {"call": "prepare_model_for_kbit_training",
                          "use_gradient_checkpointing": True})
        self.assertEqual(only(calls, "optimizer")["name"], "PagedAdamW8bit")

    def test_serving_prefill_then_decode_with_the_cache(self):
        request = {"model": {"preset": "llama-3.2-1b"}, "gpu": "l40s-48gb",
                   "workload": {"kind": "inference", "prompt_tokens": 512, "output_tokens": 16,
                                "concurrency": 4}}
        code, out, calls = execute(generate(request))
        self.assertEqual(code, 0, out)
        self.assertEqual(only(calls, "randint")["size"], [4, 512])
        reps = WARMUP + MEASURED
        self.assertEqual(count(calls, "forward", shape=[4, 512], use_cache=True, past=False), reps)
        # 16 output tokens: the prefill gives the first, 15 decode steps give the rest.
        self.assertEqual(count(calls, "forward", shape=[4, 1], use_cache=True, past=True), 15 * reps)
        self.assertEqual(count(calls, "inference_mode_enter"), 1)
        for q in ("ttft_ms_p50", "ttft_ms_p99", "tpot_ms_p90", "decode_tokens_per_s"):
            self.assertIn(q, out)

    def test_a_format_it_cannot_build_is_refused_by_name(self):
        request = {"model": {"preset": "llama-3.2-1b"}, "gpu": "l40s-48gb",
                   "workload": {"kind": "inference"}, "precision": {"weights": "gptq_int4"}}
        code, out, calls = execute(generate(request))
        self.assertNotEqual(code, 0)
        self.assertIn("weights gptq_int4", out)
        self.assertEqual(count(calls, "forward"), 0)

    def test_a_multi_gpu_layout_is_recorded_and_measured_on_one_gpu(self):
        request = {"model": {"preset": "llama-3.2-1b"}, "gpu": "h100-sxm-80gb",
                   "workload": {"kind": "pretrain", "seq_len": 2048},
                   "parallel": {"gpus": 8, "zero": 3}}
        source = generate(request)
        self.assertIn("# The request's layout uses 8 GPUs; this script measures one GPU", source)
        self.assertIn('"layout": {"gpus": 8, "tp": 1, "pp": 1, "cp": 1, "ep": 1, "zero": 3}',
                      source)
        code, out, _ = execute(source)
        self.assertEqual(code, 0, out)


if __name__ == "__main__":
    unittest.main()
