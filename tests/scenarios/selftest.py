#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Shows that run_scenarios.py catches what it is meant to catch.

Against a stand-in planner (a script printing a canned plan): a met expectation passes; a
doctored one fails with exit 1; fields the planner does not report (rank_code, almost_fits,
cost) fail with a message, not a traceback; a planner error, non-JSON output, a wrong
rejection code, forbidden advice and a triggered `when` all fail; --report prints the table.
With the real CLI (optional argument): a doctored copy of a shipped scenario fails, and the
whole suite runs without the runner itself breaking on the real answers.

Usage: selftest.py [GPUPLAN]"""
import copy
import json
import os
import stat
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "run_scenarios.py")
CASES = os.path.join(HERE, "cases")

CATALOG = {"version": "test", "gpus": [
    {"id": "card-a", "name": "Test A 48GB", "memory_gib": 48, "price": {"usd_per_hour": 1.0},
     "cooling": "air", "intra_node": {"kind": "pcie4"}, "gpus_per_node": 8},
    {"id": "card-b", "name": "Test B 24GB", "memory_gib": 24, "price": None,
     "cooling": "liquid", "intra_node": {"kind": "nvlink4"}, "gpus_per_node": 8}]}

PLAN = {
    "request_normalized": {"workload": {"kind": "lora", "seq_len": 2048}},
    "recommendations": [{
        "gpu": "card-a", "count": 1, "replicas": 1, "micro_batch": 4, "grad_accum": 4,
        "parallel": {"gpus": 1, "tp": 1, "pp": 1, "cp": 1, "zero": 0},
        "memory_techniques": {"recompute": "selective"}, "precision": {"weights": "bf16"},
        "rank_code": "lowest_cost_per_job", "rank_reason": "cheapest job that fits",
        "almost_fits": {"count": 1, "total_with_headroom_bytes": 5.3e10,
                        "capacity_bytes": 5.15e10,
                        "levers": [{"code": "full_recompute", "path": "/memory_techniques/recompute",
                                    "value": "full", "saved_bytes": 4e9, "fits": True,
                                    "time_factor": 1.3, "cost": 1.3}]},
        "estimate": {"memory": {"fits": True, "total_with_headroom_bytes": 4.0e10,
                                "capacity_bytes": 5.15e10, "bytes_per_parameter": 4.2,
                                "per_gpu_bytes": {"weights": 1.6e10, "kv_cache": 0}},
                     "performance": {"training": {"time_s": 3600, "tokens_per_s": 1.0e4}},
                     "power": {"node_watts": 2000},
                     "cost": {"usd_total": 1.0, "usd_per_gpu_hour": 1.0,
                              "usd_per_million_tokens": None},
                     "warnings": [{"code": "end_of_life_card"}]}}],
    "rejected": [{"gpu": "card-b", "code": "exceeds_memory", "reason": "24 GB is too small"}],
    "advice": [{"code": "one_big_card", "params": {}, "message": "..."}]}

GOOD = {"min_recommendations": 1,
        "first": {"gpu_in": ["card-a"], "count": [1, 1], "tp": [1, 1], "pp": [1, 1],
                  "zero_in": [0], "memory_gib": [40, 80], "priced": True, "pcie": True,
                  "cooling_in": ["air"], "fits": True, "headroom_ok": True,
                  "time_s_max": 7200, "cost_present": True, "usd_total_max": 5,
                  "bytes_per_parameter": [0, 10], "global_batch_seqs": [16, 16],
                  "global_batch_tokens": [32768, 32768], "node_watts_max": 2500,
                  "rank_code_present": True, "rank_reason_present": True,
                  "warnings_absent": ["card_not_sold_in_market"],
                  "checks": [{"path": "/estimate/memory/per_gpu_bytes/weights", "op": ">=",
                              "value_path": "/estimate/memory/per_gpu_bytes/kv_cache"}]},
        "rejected": {"card-b": ["exceeds_memory"]},
        "advice_must": ["one_big_card"], "advice_must_not": ["model_parallel_over_pcie"],
        "almost_fits": {"present": True, "count": [1, 1], "levers_min": 1, "lever_fits": True},
        "when": [{"if": {"count": [1, 1]}, "then": {"first": {"gpu_in": ["card-a"]}}}]}

FAKE = """#!{python}
import json, os, sys
d = os.path.dirname(os.path.abspath(__file__))
if sys.argv[1:] == ["catalog", "--gpus"]:
    print(open(os.path.join(d, "catalog.json")).read()); sys.exit(0)
sys.stdin.read()
mode = open(os.path.join(d, "mode")).read().strip()
if mode == "error":
    print("/workload/seq_len: must be a positive integer, got -4", file=sys.stderr); sys.exit(2)
if mode == "garbage":
    print("not json {"); sys.exit(0)
print(open(os.path.join(d, "plan.json")).read())
"""

failures = []


def expect(cond, what, detail=""):
    """Prints one line per check; the runner's output only when the check fails."""
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        print(detail)
        failures.append(what)


def run(binary, folder, *extra):
    p = subprocess.run([sys.executable, RUNNER, binary, folder, *extra], capture_output=True,
                       text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


def scenario(tmp, expectation, name="s"):
    folder = os.path.join(tmp, "cases-" + name)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "a.json"), "w") as f:
        json.dump({"id": name, "question": "q", "request": {"model": {"preset": "x"}},
                   "expert_answer": "a", "expect": expectation}, f)
    return folder


def stand_in(tmp, plan, mode="plan"):
    fake = os.path.join(tmp, "gpuplan")
    with open(fake, "w") as f:
        f.write(FAKE.replace("{python}", sys.executable))
    os.chmod(fake, os.stat(fake).st_mode | stat.S_IXUSR)
    with open(os.path.join(tmp, "catalog.json"), "w") as f:
        json.dump(CATALOG, f)
    with open(os.path.join(tmp, "plan.json"), "w") as f:
        json.dump(plan, f)
    with open(os.path.join(tmp, "mode"), "w") as f:
        f.write(mode)
    return fake


def with_stand_in(tmp):
    fake = stand_in(tmp, PLAN)
    rc, out, err = run(fake, scenario(tmp, GOOD, "good"))
    expect(rc == 0 and out.startswith("PASS good"), "met expectations pass", out + err)

    bad = copy.deepcopy(GOOD)
    bad["first"]["count"] = [2, 2]
    rc, out, _ = run(fake, scenario(tmp, bad, "doctored"))
    expect(rc == 1 and "FAIL doctored" in out and "count = 1" in out,
           "a doctored count fails", out)

    eol = copy.deepcopy(GOOD)
    eol["first"]["warnings_absent"] = ["end_of_life_card"]
    rc, out, _ = run(fake, scenario(tmp, eol, "eol"))
    expect(rc == 1 and "warnings ['end_of_life_card'] present" in out,
           "a warning the first must not carry fails", out)

    bare = copy.deepcopy(PLAN)
    rec = bare["recommendations"][0]
    for k in ("rank_code", "almost_fits", "parallel"):
        del rec[k]
    del rec["estimate"]["cost"]
    rc, out, err = run(stand_in(tmp, bare), scenario(tmp, GOOD, "absent"))
    expect(rc == 1 and "rank_code absent" in out and "almost_fits absent" in out
           and "cannot tell" in out and "Traceback" not in out + err,
           "absent fields fail with a message, no traceback", out + err)

    rc, out, _ = run(stand_in(tmp, PLAN, "error"), scenario(tmp, GOOD, "error"))
    expect(rc == 1 and "exit 2" in out and "seq_len" in out, "a planner error fails", out)
    rc, out, _ = run(stand_in(tmp, PLAN, "garbage"), scenario(tmp, GOOD, "garbage"))
    expect(rc == 1 and "not JSON" in out, "non-JSON output fails", out)

    fake = stand_in(tmp, PLAN)
    wrong = copy.deepcopy(GOOD)
    wrong["rejected"] = {"card-b": ["node_power"], "card-a": ["exceeds_memory"]}
    wrong["advice_must_not"] = ["one_big_card"]
    wrong["when"] = [{"if": {"gpu_in": ["card-a"]}, "then": {"first": {"count": [4, 8]}}}]
    rc, out, _ = run(fake, scenario(tmp, wrong, "wrong"))
    expect(rc == 1 and "rejected as 'exceeds_memory', expected node_power" in out
           and "card-a expected rejected" in out and "must not appear" in out
           and "count = 1, expected in [4, 8]" in out,
           "wrong rejection, forbidden advice and a triggered `when` fail", out)

    skipped = copy.deepcopy(GOOD)
    skipped["when"] = [{"if": {"gpu_in": ["card-b"]}, "then": {"first": {"count": [4, 8]}}}]
    rc, out, _ = run(fake, scenario(tmp, skipped, "skipped"))
    expect(rc == 0, "a `when` whose condition does not hold is not applied", out)

    rc, out, err = run(fake, scenario(tmp, bad, "report"), "--report")
    expect(rc == 1 and out.startswith("| scenario |") and "| report | card-a x1 |" in out
           and "FAIL report" in err, "--report prints the table on stdout", out + err)


def with_real_cli(binary, tmp):
    with open(os.path.join(CASES, "01-lora-8b-budget.json"), encoding="utf-8") as f:
        s = json.load(f)
    s["expect"]["first"]["count"] = [1000, 1000]
    s["expect"]["first"]["gpu_in"] = ["no-such-card"]
    folder = os.path.join(tmp, "real-doctored")
    os.makedirs(folder)
    with open(os.path.join(folder, "s.json"), "w", encoding="utf-8") as f:
        json.dump(s, f)
    rc, out, err = run(binary, folder)
    expect(rc == 1 and "FAIL 01-lora-8b-budget" in out and "expected in [1000, 1000]" in out
           and "no-such-card" in out, "a doctored shipped scenario fails on the real CLI", out + err)
    rc, out, err = run(binary, CASES)
    expect(rc in (0, 1) and "runner could not check" not in out and "Traceback" not in err
           and out.count("\n") >= 15, "the suite runs on the real CLI without the runner breaking", out + err)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        with_stand_in(tmp)
        if len(sys.argv) > 1:
            with_real_cli(sys.argv[1], tmp)
    if failures:
        print(f"{len(failures)} self-test checks failed")
        return 1
    print("runner self-test: all checks pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())
