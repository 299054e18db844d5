#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Rewrites catalog/bands.json (the engine compiles it in: cmake/EmbedBands.cmake) from
`gpuplan validate` over
every reference file (the dev-cases translations, tests/reference/cases/*.json and the engines'
start-up logs, tests/reference/engine_logs.json). Run from the
repository root after the physics moves:

    python3 tests/reference/refresh_bands.py build/native-release/bin/gpuplan

tests/unit/physics/error_bands_test.cpp fails until the file is today's.
"""
import datetime
import glob
import json
import re
import subprocess
import sys

FILES = (["tests/reference/memory_cases.json", "tests/reference/perf_cases.json"] +
         sorted(glob.glob("tests/reference/cases/*.json")) +
         ["tests/reference/engine_logs.json"])


def main():
    gpuplan = sys.argv[1]
    out = subprocess.run([gpuplan, "validate"] + FILES, capture_output=True, text=True,
                         check=True).stdout
    bands = []
    table = out[out.index("\nband ") + 1:].splitlines()[1:]
    for line in table:
        f = line.split()
        if len(f) < 8 or not f[3].isdigit():
            continue
        bands.append({"kind": f[0], "framework": "" if f[1] == "(all)" else f[1],
                      "generation": "" if f[2] == "(all)" else f[2],
                      "cases": int(f[3]), "groups": int(f[4]), "low": float(f[5]),
                      "high": float(f[6]), "median_abs": round(float(f[7].rstrip("%")) / 100, 4)})
    path = "catalog/bands.json"
    doc = json.load(open(path))
    catalog = json.loads(subprocess.run([gpuplan, "catalog", "--gpus"], capture_output=True,
                                        text=True, check=True).stdout)["version"]
    engine = subprocess.run([gpuplan, "--version"], capture_output=True, text=True,
                            check=True).stdout.split()[-1]
    doc["measured_with"] = {"engine_version": engine, "catalog_version": catalog,
                            "date": datetime.date.today().isoformat(),
                            "command": "gpuplan validate " + " ".join(
                                FILES[:2] + ["tests/reference/cases/*.json", FILES[-1]])}
    doc["bands"] = bands
    text = json.dumps(doc, indent=1)
    # One band a line.
    text = re.sub(r'\{\n\s+"kind": .*?\n\s+\}',
                  lambda m: "{" + re.sub(r"\n\s+", " ", m.group(0)[1:-1]).strip() + "}", text,
                  flags=re.S)
    open(path, "w").write(text + "\n")
    print(len(bands), "bands")


if __name__ == "__main__":
    main()
