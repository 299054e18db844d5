# SPDX-License-Identifier: MIT
"""The stand-in serving tools' log: each appends its command line, as JSON, to the file named by
GPUPLAN_TOOLS_LOG, and reads its canned timings from there too."""
import json
import os
import sys


def log(tool):
    path = os.environ.get("GPUPLAN_TOOLS_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"tool": tool, "argv": sys.argv[1:]}) + "\n")


def flag(name, default=None):
    argv = sys.argv
    return argv[argv.index(name) + 1] if name in argv else default
