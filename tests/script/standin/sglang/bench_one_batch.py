# SPDX-License-Identifier: MIT
"""Stand-in for `python -m sglang.bench_one_batch`: prefill 40 ms, median decode step 5 ms,
appended to --result-filename as sglang/bench_one_batch.py writes its JSON lines."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from toollog import flag, log  # noqa: E402

log("sglang.bench_one_batch")
with open(flag("--result-filename"), "a", encoding="utf-8") as f:
    f.write(json.dumps({"run_name": "default", "batch_size": int(flag("--batch-size")),
                        "input_len": int(flag("--input-len")),
                        "output_len": int(flag("--output-len")), "prefill_latency": 0.040,
                        "median_decode_latency": 0.005}) + "\n")
