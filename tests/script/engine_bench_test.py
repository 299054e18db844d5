#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A serving request that names an engine is measured by that engine's own benchmark: the
generated program drives vLLM's latency benchmark (twice: one output token, then the request's),
SGLang's one-batch benchmark and llama.cpp's llama-bench / llama-batched-bench with the
request's settings, parses their figures and compares them with the estimate of that engine.
Stand-ins for the tools (standin/bin, standin/sglang) log their command lines and answer canned
timings in each tool's own output format, so the figures below are worked from those timings.

Usage: engine_bench_test.py PATH/TO/gpuplan"""
import json
import os
import sys
import tempfile
import unittest

from script_cli import script_for
from script_test import GPUPLAN, STANDIN, execute, measurement

BIN = os.path.join(STANDIN, "bin")


def bench(request, **env_vars):
    """(exit code, output, the tools' logged command lines, the measurement record)."""
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "tools.jsonl")
        code, out, _ = execute(script_for(GPUPLAN, request), GPUPLAN_TOOLS_LOG=log,
                               PATH=BIN + os.pathsep + os.environ.get("PATH", ""), **env_vars)
        tools = []
        if os.path.exists(log):
            with open(log, encoding="utf-8") as f:
                tools = [json.loads(line) for line in f]
    return code, out, tools, measurement(out) if code == 0 else None


def serving(framework, **extra):
    request = {"model": {"preset": "llama-3.1-8b"}, "gpu": "h100-sxm-80gb",
               "workload": {"kind": "inference", "prompt_tokens": 1024, "output_tokens": 128,
                            "concurrency": 8},
               "framework": framework}
    request.update(extra)
    return request


def flag(argv, name):
    return argv[argv.index(name) + 1]


class EngineBenchmarks(unittest.TestCase):
    def test_vllm_latency_twice_gives_ttft_and_tpot(self):
        code, out, tools, m = bench(serving("vllm", serving={"gpu_memory_utilization": 0.85,
                                                             "max_num_seqs": 64}))
        self.assertEqual(code, 0, out)
        self.assertEqual([t["tool"] for t in tools], ["vllm", "vllm"])
        first, full = tools[0]["argv"], tools[1]["argv"]
        for argv in (first, full):
            self.assertEqual(argv[:2], ["bench", "latency"])
            self.assertIn("--skip-tokenizer-init", argv)
            self.assertEqual(flag(argv, "--load-format"), "dummy")
            self.assertEqual((flag(argv, "--input-len"), flag(argv, "--batch-size")),
                             ("1024", "8"))
            self.assertEqual(flag(argv, "--gpu-memory-utilization"), "0.85")
            self.assertEqual(flag(argv, "--max-num-seqs"), "64")
            self.assertEqual(flag(argv, "--max-model-len"), str(1024 + 128))
            self.assertEqual(flag(argv, "--num-iters"), "10")
        self.assertEqual((flag(first, "--output-len"), flag(full, "--output-len")), ("1", "128"))
        # The stand-in: 50 ms for prefill and the first token, 6 ms for each of the other 127.
        self.assertAlmostEqual(m["ttft_ms"], 50.0, places=6)
        self.assertAlmostEqual(m["tpot_ms"], 6.0, places=6)
        self.assertAlmostEqual(m["decode_tokens_per_s"], 8 * 1000 / 6.0, places=3)
        self.assertEqual(m["decode"], "vllm's benchmark")
        # Compared with the estimate of vLLM serving it (a diff column on TTFT and TPOT).
        self.assertRegex(out, r"ttft_ms +\S+ +\S+ +[+-]\d")
        self.assertRegex(out, r"tpot_ms +\S+ +\S+ +[+-]\d")
        # Nothing of its own was built or run on the GPU.
        self.assertNotIn("built ", out)

    def test_sglang_one_batch_needs_a_tokenizer_and_reads_its_result_lines(self):
        code, out, tools, _ = bench(serving("sglang"))
        self.assertNotEqual(code, 0)
        self.assertIn("set GPUPLAN_TOKENIZER", out)
        self.assertEqual(tools, [])
        code, out, tools, m = bench(serving("sglang", serving={"mem_fraction_static": 0.8}),
                                    GPUPLAN_TOKENIZER="/models/llama-3.1-8b")
        self.assertEqual(code, 0, out)
        argv = tools[0]["argv"]
        self.assertEqual(tools[0]["tool"], "sglang.bench_one_batch")
        self.assertEqual(flag(argv, "--tokenizer-path"), "/models/llama-3.1-8b")
        self.assertEqual(flag(argv, "--mem-fraction-static"), "0.8")
        self.assertEqual((flag(argv, "--batch-size"), flag(argv, "--input-len"),
                          flag(argv, "--output-len")), ("8", "1024", "128"))
        self.assertAlmostEqual(m["ttft_ms"], 40.0, places=6)
        self.assertAlmostEqual(m["tpot_ms"], 5.0, places=6)

    def test_llama_cpp_bench_for_one_sequence_and_batched_bench_for_a_batch(self):
        code, out, _, _ = bench(serving("llama_cpp"))
        self.assertNotEqual(code, 0)
        self.assertIn("set GPUPLAN_GGUF", out)
        one = serving("llama_cpp", precision={"weights": "gguf_q4_k_m"})
        one["workload"]["concurrency"] = 1
        code, out, tools, m = bench(one, GPUPLAN_GGUF="/models/llama-8b-q4_k_m.gguf")
        self.assertEqual(code, 0, out)
        self.assertEqual(tools[0]["tool"], "llama-bench")
        self.assertEqual((flag(tools[0]["argv"], "-p"), flag(tools[0]["argv"], "-n")),
                         ("1024", "128"))
        # 1024 prompt tokens at 4000 a second = 256 ms; 125 tokens a second = 8 ms each.
        self.assertAlmostEqual(m["ttft_ms"], 256.0, places=6)
        self.assertAlmostEqual(m["tpot_ms"], 8.0, places=6)
        batch = serving("llama_cpp", precision={"weights": "gguf_q4_k_m"})
        code, out, tools, m = bench(batch, GPUPLAN_GGUF="/models/llama-8b-q4_k_m.gguf")
        self.assertEqual(code, 0, out)
        argv = tools[0]["argv"]
        self.assertEqual(tools[0]["tool"], "llama-batched-bench")
        self.assertEqual((flag(argv, "-npp"), flag(argv, "-ntg"), flag(argv, "-npl")),
                         ("1024", "128", "8"))
        self.assertEqual(flag(argv, "-c"), str(8 * (1024 + 128)))
        # The batch's prefill 0.8 s; 128 steps in 2.56 s: 20 ms each.
        self.assertAlmostEqual(m["ttft_ms"], 800.0, places=6)
        self.assertAlmostEqual(m["tpot_ms"], 20.0, places=6)

    def test_other_engines_and_formats_are_refused_by_name(self):
        code, out, tools, _ = bench(serving("tensorrt_llm"))
        self.assertNotEqual(code, 0)
        self.assertIn("trtllm-bench", out)
        code, out, tools, _ = bench(serving("vllm", precision={"weights": "awq_int4"}))
        self.assertNotEqual(code, 0)
        self.assertIn("weights awq_int4", out)
        self.assertEqual(tools, [])


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
