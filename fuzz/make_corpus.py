#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the fuzzers' seed corpus from the tests' own requests and the shipped catalog:
OUT/estimate (every reference request, the CLI examples, calibrate requests, and the hand-made
hostile requests of fuzz/seeds/), OUT/plan (the same requests without a card), OUT/catalog
(gpus.json NUL models.json, and each half alone).

Usage: make_corpus.py SOURCE_DIR OUT_DIR"""
import json
import os
import sys

src, out = sys.argv[1], sys.argv[2]
requests = []
for name in ("memory_cases.json", "perf_cases.json"):
    with open(os.path.join(src, "tests/reference", name), encoding="utf-8") as f:
        requests += [c["request"] for c in json.load(f)["cases"]]
for name in sorted(os.listdir(os.path.join(src, "tests/cli"))):
    if name.endswith(".json"):
        with open(os.path.join(src, "tests/cli", name), encoding="utf-8") as f:
            requests.append(json.load(f))
# A few with the calibration fields, so the fuzzer starts from inputs that reach Calibrate.
requests.append({"model": {"preset": "llama-3.2-1b"}, "gpu": "h100-sxm-80gb",
                 "workload": {"kind": "full_finetune"}, "parallel": {"gpus": 4, "zero": 2},
                 "calibration": {"compute": 0.8, "interconnect": 0.5, "measured_on": "h100-sxm-80gb"},
                 "measured": {"peak_allocated_bytes": 4e10, "peak_reserved_bytes": 4.4e10,
                              "out_of_memory": False, "gpu_utilization": 0.9,
                              "scaling": [{"gpus": 1, "tokens_per_s": 5e4},
                                          {"gpus": 4, "tokens_per_s": 1.8e5}]}})
requests.append({"model": {"preset": "llama-3.1-8b"}, "gpu": "l40s-48gb",
                 "workload": {"kind": "inference", "concurrency": 8},
                 "measured": {"ttft_ms": 80, "tpot_ms": 20, "host_ram_share": 0.75}})

for kind in ("estimate", "plan", "catalog"):
    os.makedirs(os.path.join(out, kind), exist_ok=True)
# The fleet example (plan's target also runs fleet).
with open(os.path.join(src, "tests/cli/fleet_example.json"), "rb") as f:
    fleet = f.read()
with open(os.path.join(out, "plan", "fleet-example.json"), "wb") as f:
    f.write(fleet)
# Hand-made hostile requests (odd encodings, extreme sizes, wrong types): as they are, bytes
# and all, for estimate and plan alike.
seeds = os.path.join(src, "fuzz/seeds")
for name in sorted(os.listdir(seeds)):
    with open(os.path.join(seeds, name), "rb") as f:
        data = f.read()
    for kind in ("estimate", "plan"):
        with open(os.path.join(out, kind, f"hostile-{name}"), "wb") as f:
            f.write(data)
for i, r in enumerate(requests):
    with open(os.path.join(out, "estimate", f"seed-{i:03d}.json"), "w", encoding="utf-8") as f:
        json.dump(r, f)
    planned = {k: v for k, v in r.items() if k not in ("gpu", "parallel", "measured")}
    planned.setdefault("constraints", {})["max_gpus"] = 16
    with open(os.path.join(out, "plan", f"seed-{i:03d}.json"), "w", encoding="utf-8") as f:
        json.dump(planned, f)
with open(os.path.join(src, "catalog/gpus.json"), "rb") as f:
    gpus = f.read()
with open(os.path.join(src, "catalog/models.json"), "rb") as f:
    models = f.read()
for name, data in (("both", gpus + b"\0" + models), ("gpus", gpus), ("models-only", b"\0" + models)):
    with open(os.path.join(out, "catalog", f"seed-{name}"), "wb") as f:
        f.write(data)
print(f"corpus: {len(requests)} requests, 3 catalogs in {out}")
