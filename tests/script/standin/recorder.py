# SPDX-License-Identifier: MIT
"""The recording stand-in's log: every call the measurement script makes into torch,
transformers, peft or bitsandbytes is appended here and written, as JSON, to the file named by
GPUPLAN_RECORD when the script exits (also when it exits with an error)."""
import atexit
import json
import os

EVENTS = []


def record(call_name, **fields):
    EVENTS.append({"call": call_name, **fields})


def _plain(value):
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return repr(value)


@atexit.register
def _write():
    path = os.environ.get("GPUPLAN_RECORD")
    if path:
        with open(path, "w", encoding="utf-8") as f:
            json.dump([_plain(e) for e in EVENTS], f, indent=1)
