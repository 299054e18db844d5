#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Rewrites the band table of engine/src/physics/error_bands.cpp from `gpuplan validate` over
every reference file (the dev-cases translations, tests/reference/cases/*.json and the engines'
start-up logs, tests/reference/engine_logs.json). Run from the
repository root after the physics moves:

    python3 tests/reference/refresh_bands.py build/native-release/bin/gpuplan

tests/unit/physics/error_bands_test.cpp fails until the table is today's.
"""
import glob
import re
import subprocess
import sys

FILES = (["tests/reference/memory_cases.json", "tests/reference/perf_cases.json"] +
         sorted(glob.glob("tests/reference/cases/*.json")) +
         ["tests/reference/engine_logs.json"])


def main():
    out = subprocess.run([sys.argv[1], "validate"] + FILES, capture_output=True, text=True,
                         check=True).stdout
    rows = []
    table = out[out.index("\nband ") + 1:].splitlines()[1:]
    for line in table:
        f = line.split()
        if len(f) < 7 or not f[2].isdigit():
            continue
        fw = "" if f[1] == "(all)" else f[1]
        med = float(f[6].rstrip("%")) / 100
        rows.append('      {"%s", "%s", %s, %s, %s, %s, %.4f},' % (f[0], fw, f[2], f[3], f[4], f[5],
                                                                   med))
    path = "engine/src/physics/error_bands.cpp"
    src = open(path).read()
    src = re.sub(r"(static const std::vector<ErrorBand> bands = \{\n)(.*?)(\n  \};)",
                 lambda m: m.group(1) + "\n".join(rows) + m.group(3), src, flags=re.S)
    open(path, "w").write(src)
    print(len(rows), "bands")


if __name__ == "__main__":
    main()
