#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The measurement script's template, engine/src/after/measure.py, as Python: it compiles, it
runs on its own placeholder settings against the recording stand-ins (standin/), its
placeholders have the shape the engine writes, every script `gpuplan script` writes is the
engine's settings followed by the template's program byte for byte, and the build's embedding
(cmake/EmbedScript.cmake) refuses a template it would embed wrongly. Linting is a CTest of its
own (pyflakes3), registered where pyflakes3 is installed.

Usage: template_test.py PATH/TO/gpuplan PATH/TO/cmake"""
import ast
import json
import os
import py_compile
import subprocess
import sys
import tempfile
import unittest

from script_cli import script_for

CMAKE = sys.argv.pop(2) if len(sys.argv) > 2 else "cmake"
GPUPLAN = sys.argv.pop(1) if len(sys.argv) > 1 else "build/native-release/bin/gpuplan"
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TEMPLATE = os.path.join(ROOT, "engine", "src", "after", "measure.py")
EMBED = os.path.join(ROOT, "cmake", "EmbedScript.cmake")
STANDIN = os.path.join(HERE, "standin")
END = "\n# gpuplan: settings end\n"
BLOCK = ("SETTINGS", "ESTIMATE", "ESTIMATE_LAYOUT")


def read_template():
    with open(TEMPLATE, encoding="utf-8") as f:
        return f.read()


def program(template):
    """What the build embeds: everything after the settings block."""
    return template[template.index(END) + len(END):]


def literals(source):
    """The top-level names the source assigns a literal to, with their values."""
    found = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            try:
                found[node.targets[0].id] = ast.literal_eval(node.value)
            except (AttributeError, ValueError):
                pass
    return found


def shape(value):
    """Keys and value types, down through dicts: what the program reads, not the numbers."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    return type(value).__name__


def generate(request):
    return script_for(GPUPLAN, request)


LLAMA_1B = {"model": {"preset": "llama-3.2-1b"}}
REQUESTS = {
    "lora": {**LLAMA_1B, "gpu": "rtx-4090-24gb",
             "workload": {"kind": "lora", "micro_batch": 1, "seq_len": 2048, "lora_rank": 8,
                          "lora_targets": "qv"}},
    "qlora": {**LLAMA_1B, "gpu": "rtx-4090-24gb", "workload": {"kind": "qlora"},
              "precision": {"weights": "nf4"}, "optimizer": "paged_adamw_8bit"},
    "pretrain_layout": {**LLAMA_1B, "gpu": "h100-sxm-80gb",
                        "workload": {"kind": "pretrain", "seq_len": 2048},
                        "parallel": {"gpus": 8, "zero": 3}},
    "inference": {**LLAMA_1B, "gpu": "l40s-48gb",
                  "workload": {"kind": "inference", "prompt_tokens": 512, "output_tokens": 16,
                               "concurrency": 4}},
}


class Template(unittest.TestCase):
    def test_compiles(self):
        with tempfile.TemporaryDirectory() as tmp:  # no __pycache__ in the source tree
            py_compile.compile(TEMPLATE, cfile=os.path.join(tmp, "measure.pyc"), doraise=True)

    def test_settings_block_holds_the_three_literals_the_engine_writes(self):
        template = read_template()
        begin = template.index("\n# gpuplan: settings begin\n")
        block = template[begin:template.index(END)]
        self.assertEqual(sorted(literals(block)), sorted(BLOCK))
        # The program reads them and never assigns them itself.
        self.assertEqual([n for n in BLOCK if n in literals(program(template))], [])

    def test_runs_on_its_placeholders_against_the_standins(self):
        settings = literals(read_template())["SETTINGS"]
        with tempfile.TemporaryDirectory() as tmp:
            record = os.path.join(tmp, "calls.json")
            env = dict(os.environ, PYTHONPATH=STANDIN, GPUPLAN_RECORD=record)
            run = subprocess.run([sys.executable, "-B", TEMPLATE], env=env, text=True,
                                 capture_output=True, check=False)
            with open(record, encoding="utf-8") as f:
                calls = json.load(f)
        out = run.stdout + run.stderr
        self.assertEqual(run.returncode, 0, out)
        line = [l for l in out.splitlines() if l.startswith("GPUPLAN_MEASUREMENT ")][-1]
        self.assertEqual(json.loads(line[len("GPUPLAN_MEASUREMENT "):])["settings"], settings)
        config = [c for c in calls if c["call"] == "config"]
        self.assertEqual(len(config), 1)
        # The config as the engine read it, less what is not the architecture (the checkpoint's
        # dtype and class names), with room for the request's context.
        for key, value in settings["config"].items():
            if key == "model_type":  # the family: for_model's first argument
                self.assertEqual(config[0][key], settings["model_type"])
            elif key in ("architectures", "torch_dtype"):
                self.assertNotIn(key, config[0])
            elif key == "max_position_embeddings":
                self.assertEqual(config[0][key], max(value, settings["positions"]))
            else:
                self.assertEqual(config[0][key], value, key)
        lora = [c for c in calls if c["call"] == "lora_config"]
        self.assertEqual([(c["r"], c["target_modules"]) for c in lora],
                         [(settings["lora_rank"], settings["lora_targets"])])
        steps = settings["warmup_steps"] + settings["measured_steps"]
        self.assertEqual(sum(1 for c in calls if c["call"] == "optimizer_step"), steps)
        # Compared with the placeholder estimate: a diff column on the step time.
        self.assertRegex(out, r"step_s +\S+ +\S+ +[+-]\d")

    def test_placeholders_have_the_shape_the_engine_writes(self):
        placeholders = literals(read_template())
        written = literals(generate(REQUESTS[placeholders["SETTINGS"]["kind"]]))
        # The config is the model's own config.json, whatever fields its family has: a dict.
        ours, theirs = shape(placeholders["SETTINGS"]), shape(written["SETTINGS"])
        self.assertIsInstance(ours.pop("config"), dict)
        self.assertIsInstance(theirs.pop("config"), dict)
        self.assertEqual(ours, theirs)
        # Estimate figures are ints or floats as they fall: keys only.
        for name in ("ESTIMATE", "ESTIMATE_LAYOUT"):
            self.assertEqual(sorted(placeholders[name]), sorted(written[name]), name)

    def test_every_script_is_the_engines_settings_then_the_template_program(self):
        tail = program(read_template())
        for what, request in REQUESTS.items():
            with self.subTest(what):
                source = generate(request)
                self.assertTrue(source.endswith(tail))
                head = source[:-len(tail)]
                # Above the program: comments, then the three literals and nothing else.
                tree = ast.parse(head)
                self.assertEqual([n.targets[0].id for n in tree.body], list(BLOCK))
                self.assertEqual(sorted(literals(head)), sorted(BLOCK))

    def test_embedding_refuses_a_template_it_would_embed_wrongly(self):
        template = read_template()
        begin, end = "# gpuplan: settings begin\n", END.lstrip("\n")
        cases = {
            "delimiter": (template + 'x = ")gpuplan_script_"\n', "raw-string delimiter"),
            "no block": (template.replace(begin, "").replace(end, ""), "exactly one line"),
            "two ends": (template + end, "exactly one line"),
            "reversed": (template.replace(begin, "\0").replace(end, begin).replace("\0", end),
                         "ends before it begins"),
        }
        with tempfile.TemporaryDirectory() as tmp:
            good = os.path.join(tmp, "good.cpp")
            self.assertEqual(self.embed(TEMPLATE, good).returncode, 0)
            with open(good, encoding="utf-8") as f:
                self.assertIn(program(template), f.read())
            for what, (text, message) in cases.items():
                with self.subTest(what):
                    path = os.path.join(tmp, "bad.py")
                    with open(path, "w", encoding="utf-8") as f:
                        f.write(text)
                    run = self.embed(path, os.path.join(tmp, "bad.cpp"))
                    self.assertNotEqual(run.returncode, 0)
                    self.assertIn(message, run.stderr)
                    self.assertFalse(os.path.exists(os.path.join(tmp, "bad.cpp")))

    @staticmethod
    def embed(template, out):
        return subprocess.run([CMAKE, f"-DTEMPLATE={template}", f"-DOUT={out}", "-P", EMBED],
                              text=True, capture_output=True, check=False)


if __name__ == "__main__":
    unittest.main()
