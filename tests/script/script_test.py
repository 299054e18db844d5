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

from script_cli import script_for

GPUPLAN = sys.argv.pop(1) if len(sys.argv) > 1 else "build/native-release/bin/gpuplan"
STANDIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "standin")
WARMUP, MEASURED = 3, 10  # the method the script states (warm-up excluded)


def generate(request):
    return script_for(GPUPLAN, request)


def execute(source, **env_vars):
    """Runs the script on the stand-ins (with `env_vars`, e.g. torchrun's WORLD_SIZE and RANK);
    answers (exit code, stdout+stderr, recorded calls)."""
    with tempfile.TemporaryDirectory() as tmp:
        path, record = os.path.join(tmp, "gpuplan_measure.py"), os.path.join(tmp, "calls.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(source)
        compile(source, path, "exec")  # valid Python before anything runs
        env = dict(os.environ, PYTHONPATH=STANDIN, GPUPLAN_RECORD=record, **env_vars)
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


def measurement(out):
    line = [l for l in out.splitlines() if l.startswith("GPUPLAN_MEASUREMENT ")][-1]
    return json.loads(line[len("GPUPLAN_MEASUREMENT "):])["measured"]


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
        self.assertEqual((built["dtype"], built["attn_implementation"]),
                         ("torch.float32", "sdpa"))
        self.assertEqual(only(calls, "randint")["size"], [2, 1024])
        # (3 warm-up + 10 measured) steps x 4 micro-batches = 52 forward passes, all with labels.
        self.assertEqual(count(calls, "forward", shape=[2, 1024], labels=True), 52)
        # 52 under autocast, plus the precision check's low-precision pass.
        self.assertEqual(count(calls, "autocast_enter", dtype="torch.bfloat16", enabled=True), 53)
        self.assertEqual(count(calls, "loss_scaled", divisor=4), 52)
        self.assertEqual(count(calls, "optimizer_step"), 13)
        # torch.optim's implementation as estimated: plain PyTorch's default, foreach.
        opt = only(calls, "optimizer")
        self.assertEqual((opt["name"], opt["lr"], opt["foreach"]), ("AdamW", 1e-5, True))
        self.assertNotIn("fused", opt)
        # The Hugging Face Trainer's stack steps fused; a request may name the kernel too.
        for named in ({"framework": "hf_transformers"}, {"optimizer_kernel": "fused"}):
            code, out, calls = execute(generate({**request, **named}))
            self.assertEqual(code, 0, out)
            self.assertEqual(only(calls, "optimizer")["fused"], True, named)
        code, out, calls = execute(generate({**request, "optimizer_kernel": "for_loop"}))
        self.assertEqual(only(calls, "optimizer")["foreach"], False)
        code, out, calls = execute(generate(request))
        self.assertEqual(only(calls, "gradient_checkpointing_enable"),
                         {"call": "gradient_checkpointing_enable",
                          "gradient_checkpointing_kwargs": {"use_reentrant": False}})
        # The peak counters are reset once, after the warm-up steps and before step 4.
        reset = calls.index(only(calls, "reset_peak_memory_stats"))
        steps_before = sum(1 for c in calls[:reset] if c["call"] == "optimizer_step")
        self.assertEqual(steps_before, WARMUP)
        self.assertIn("peak_allocated_bytes", out)
        self.assertIn("tokens_per_s", out)
        # Monitoring, one sample per measured step: the stand-in reports 95% utilisation, 30 of
        # 80 GiB free (62.5% in use), and clocks falling from 1980 to 1500 MHz after 5 samples.
        self.assertEqual(count(calls, "utilization"), MEASURED)
        m = measurement(out)
        self.assertEqual(m["gpu_utilization"], 0.95)
        self.assertEqual(m["gpu_memory_share"], 0.625)
        self.assertEqual((m["clock_mhz_min"], m["clock_mhz_max"], m["temperature_c_max"]),
                         (1500, 1980, 70))
        self.assertIn("clocks fell from 1980 to 1500 MHz", out)
        self.assertIn("a larger batch, or a smaller card, would serve", out)  # 62.5% < 85%
        # The peaks are read before the precision check runs.
        peak = next(i for i, c in enumerate(calls) if c["call"] == "no_grad_enter")
        self.assertEqual(count(calls[peak:], "optimizer_step"), 0)
        # Mixed precision: the check runs the same sequence (1 x 512 tokens) under bf16
        # autocast and without it, on the fp32 parameters it already has.
        self.assertEqual(count(calls, "forward", shape=[1, 512], use_cache=False), 2)
        self.assertEqual(count(calls, "model_float"), 0)
        self.assertEqual(m["precision_check"], {"logits_relative_error": 1.0,
                                                "top1_agreement": 1.0})

    def test_lora_targets_rank_optimizer_and_no_recompute(self):
        request = {"model": {"preset": "llama-3.2-1b"}, "gpu": "rtx-4090-24gb",
                   "workload": {"kind": "lora", "micro_batch": 1, "seq_len": 2048,
                                "lora_rank": 8, "lora_targets": "qv"},
                   "optimizer": "sgd_momentum",
                   "memory_techniques": {"recompute": "none", "flash_attention": False}}
        code, out, calls = execute(generate(request))
        self.assertEqual(code, 0, out)
        built = only(calls, "from_config")
        self.assertEqual((built["dtype"], built["attn_implementation"]),
                         ("torch.bfloat16", "eager"))
        lora = only(calls, "lora_config")
        self.assertEqual((lora["r"], lora["lora_alpha"], lora["target_modules"]),
                         (8, 16, ["q_proj", "v_proj"]))
        self.assertEqual(count(calls, "gradient_checkpointing_enable"), 0)
        opt = only(calls, "optimizer")
        self.assertEqual((opt["name"], opt["momentum"]), ("SGD", 0.9))
        # LoRA trains in the base's dtype: autocast is present but off (13 steps, plus the
        # precision check's low-precision pass).
        self.assertEqual(count(calls, "autocast_enter", enabled=False), 14)
        # bf16 parameters: the check casts the model to fp32 for its reference pass.
        self.assertEqual(count(calls, "model_float"), 1)
        self.assertIn("precision check (bf16 vs fp32", out)

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
        # A 4-bit base cannot be cast up: no precision check.
        self.assertEqual(count(calls, "forward", use_cache=False), 0)
        self.assertNotIn("precision_check", measurement(out))

    def test_serving_prefill_then_decode_with_the_cache(self):
        request = {"model": {"preset": "llama-3.2-1b"}, "gpu": "l40s-48gb",
                   "workload": {"kind": "inference", "prompt_tokens": 512, "output_tokens": 16,
                                "concurrency": 4}}
        code, out, calls = execute(generate(request))
        self.assertEqual(code, 0, out)
        self.assertEqual(only(calls, "randint")["size"], [4, 512])
        reps = WARMUP + MEASURED
        # Serving as engines serve: one static KV cache for prompt plus output, reset per
        # repetition; prefill keeps the last position's logits only; every decode step runs
        # through torch.compile's CUDA-graph mode.
        self.assertEqual(only(calls, "static_cache")["max_cache_len"], 512 + 16)
        self.assertEqual(count(calls, "cache_reset"), reps)
        self.assertEqual(only(calls, "compile"), {"call": "compile", "mode": "reduce-overhead",
                                                  "fullgraph": True})
        self.assertEqual(count(calls, "forward", shape=[4, 512], use_cache=True,
                               static_cache=True, logits_to_keep=1), reps)
        # 16 output tokens: the prefill gives the first, 15 decode steps give the rest.
        self.assertEqual(count(calls, "forward", shape=[4, 1], use_cache=True, static_cache=True,
                               logits_to_keep=1), 15 * reps)
        self.assertEqual(count(calls, "forward"), 16 * reps + 2)  # and the precision check's two
        self.assertEqual(measurement(out)["decode"], "cuda graph")
        self.assertRegex(out, r"tpot_ms +\S+ +\S+ +[+-]\d")  # compared with the estimate
        # A step the compiler cannot capture falls back to eager steps at its first call, says
        # so, and its TPOT (host launch overhead included) is not compared.
        code, out, calls = execute(generate(request), STANDIN_COMPILE_FAILS="1")
        self.assertEqual(code, 0, out)
        self.assertIn("could not be captured (RuntimeError", out)
        self.assertEqual(count(calls, "forward", shape=[4, 1], static_cache=True), 15 * reps)
        self.assertTrue(measurement(out)["decode"].startswith("eager (RuntimeError"))
        self.assertIn("TPOT is not compared", out)
        self.assertNotRegex(out, r"tpot_ms +\S+ +\S+ +[+-]\d")
        self.assertEqual(count(calls, "inference_mode_enter"), 1)
        for q in ("ttft_ms_p50", "ttft_ms_p99", "tpot_ms_p90", "decode_tokens_per_s"):
            self.assertIn(q, out)
        self.assertEqual(count(calls, "utilization"), MEASURED)
        self.assertEqual(measurement(out)["gpu_utilization"], 0.95)

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
        self.assertIn("# The request's layout uses 8 GPUs; run alone, this script measures one GPU",
                      source)
        self.assertIn('"layout": {"gpus": 8, "tp": 1, "pp": 1, "cp": 1, "ep": 1, "zero": 3}',
                      source)
        code, out, calls = execute(source)
        self.assertEqual(code, 0, out)
        self.assertEqual(count(calls, "init_process_group"), 0)
        self.assertEqual(measurement(out)["gpus"], 1)

    # Under torchrun the same program measures data parallelism: the speed-up curve's points.
    def test_torchrun_ddp_exchanges_gradients_once_a_step(self):
        request = {"model": {"preset": "llama-3.2-1b"}, "gpu": "h100-sxm-80gb",
                   "workload": {"kind": "full_finetune", "micro_batch": 2, "seq_len": 1024,
                                "grad_accum": 4},
                   "parallel": {"gpus": 2, "zero": 0}}
        code, out, calls = execute(generate(request), WORLD_SIZE="2", RANK="0", LOCAL_RANK="0")
        self.assertEqual(code, 0, out)
        self.assertEqual(only(calls, "init_process_group")["backend"], "nccl")
        self.assertEqual(only(calls, "ddp")["device_ids"], [0])
        # 4 micro-batches a step: the first 3 skip the gradient all-reduce; 13 steps.
        self.assertEqual(count(calls, "no_sync"), 3 * 13)
        self.assertEqual(only(calls, "optimizer")["name"], "AdamW")
        self.assertEqual(count(calls, "destroy_process_group"), 1)
        m = measurement(out)
        self.assertEqual(m["gpus"], 2)
        self.assertNotIn("precision_check", m)  # replicated weights are not cast in place
        # The most loaded GPU's peak: the stand-in's other rank is 1 GiB above rank 0's 10 GiB.
        self.assertEqual(only(calls, "all_reduce")["op"], "max")
        self.assertEqual(m["peak_allocated_bytes"], 11 * 2**30)
        # Two GPUs is the request's own layout: compared with the engine's estimate of it.
        self.assertNotIn("no estimate for 2 GPUs", out)

    def test_torchrun_zero3_is_fsdp_per_decoder_layer_and_zero1_shards_the_optimizer(self):
        base = {"model": {"preset": "llama-3.2-1b"}, "gpu": "h100-sxm-80gb",
                "workload": {"kind": "pretrain", "seq_len": 1024, "grad_accum": 2}}
        code, out, calls = execute(generate({**base, "parallel": {"gpus": 8, "zero": 3}}),
                                   WORLD_SIZE="4", RANK="0", LOCAL_RANK="0")
        self.assertEqual(code, 0, out)
        fsdp = only(calls, "fsdp")
        self.assertEqual((fsdp["layers"], fsdp["use_orig_params"]), (["LlamaDecoderLayer"], True))
        self.assertEqual(count(calls, "no_sync"), 0)  # FSDP reduce-scatters every micro-batch
        self.assertIn("no estimate for 4 GPUs here", out)  # 4 of the layout's 8
        code, out, calls = execute(generate({**base, "parallel": {"gpus": 2, "zero": 1}}),
                                   WORLD_SIZE="2", RANK="0", LOCAL_RANK="0")
        self.assertEqual(code, 0, out)
        self.assertEqual(only(calls, "zero_redundancy_optimizer"),
                         {"call": "zero_redundancy_optimizer", "optimizer_class": "AdamW",
                          "lr": 1e-5, "foreach": True})
        self.assertEqual(count(calls, "optimizer"), 0)
        self.assertEqual(count(calls, "fsdp"), 0)

    def test_torchrun_zero2_and_lora_under_fsdp_say_what_they_measure(self):
        base = {"model": {"preset": "llama-3.2-1b"}, "gpu": "h100-sxm-80gb",
                "workload": {"kind": "full_finetune", "seq_len": 1024}}
        code, out, _ = execute(generate({**base, "parallel": {"gpus": 2, "zero": 2}}),
                               WORLD_SIZE="2", RANK="0", LOCAL_RANK="0")
        self.assertEqual(code, 0, out)
        self.assertIn("ZeRO-2 ran as ZeRO-1", out)
        self.assertNotRegex(out, r"peak_allocated_bytes +\S+ +\S+ +[+-]")  # no estimate column
        lora = {**base, "workload": {"kind": "lora", "seq_len": 1024},
                "parallel": {"gpus": 2, "zero": 3}}
        code, out, calls = execute(generate(lora), WORLD_SIZE="2", RANK="0", LOCAL_RANK="0")
        self.assertEqual(code, 0, out)
        # FSDP needs one dtype per layer: the trainable (adapter) tensors join bf16.
        self.assertGreater(count(calls, "param_to", dtype="torch.bfloat16"), 0)
        self.assertIn("LoRA adapters are kept in the base's dtype", out)
        # The layout's estimate counts them so too: 16-bit adapters, gradients and no input
        # copies, as a request for bf16 adapters under the program's model code gets.
        import ast
        written = {n.targets[0].id: ast.literal_eval(n.value)
                   for n in ast.parse(generate(lora)).body
                   if isinstance(n, ast.Assign) and len(n.targets) == 1
                   and getattr(n.targets[0], "id", "") == "ESTIMATE_LAYOUT"}
        same = dict(lora, precision={"adapters": "bf16"}, framework="hf_transformers",
                    optimizer_kernel="foreach")
        run = subprocess.run([GPUPLAN, "estimate", "-"], input=json.dumps(same), text=True,
                             capture_output=True, check=True)
        self.assertEqual(written["ESTIMATE_LAYOUT"]["peak_allocated_bytes"],
                         json.loads(run.stdout)["memory"]["allocated_bytes"])

    def test_torchrun_other_ranks_are_silent_and_model_parallel_is_refused(self):
        request = {"model": {"preset": "llama-3.2-1b"}, "gpu": "h100-sxm-80gb",
                   "workload": {"kind": "lora"}, "parallel": {"gpus": 2}}
        code, out, _ = execute(generate(request), WORLD_SIZE="2", RANK="1", LOCAL_RANK="1")
        self.assertEqual(code, 0, out)
        self.assertNotIn("GPUPLAN_MEASUREMENT", out)
        request["parallel"] = {"gpus": 2, "tp": 2}
        code, out, calls = execute(generate(request), WORLD_SIZE="2", RANK="0", LOCAL_RANK="0")
        self.assertNotEqual(code, 0)
        self.assertIn("measures data parallelism", out)
        self.assertEqual(count(calls, "forward"), 0)


if __name__ == "__main__":
    unittest.main()
