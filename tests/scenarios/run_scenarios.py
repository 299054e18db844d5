#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs the planning scenarios (tests/scenarios/cases/*.json) through `gpuplan plan` and checks
the first recommendation (and the named extra fields) against each scenario's `expect`.

Usage: run_scenarios.py GPUPLAN SCENARIO_DIR [--report] [--only ID[,ID...]] [--verbose]

One line per scenario: PASS/FAIL, then the first recommendation in short (card x count,
tp/pp/zero, time or tok/s, cost, rank_code); a FAIL lists each broken expectation below it.
Exit 0 when all pass, 1 when any fails, 2 on bad usage or an unreadable scenario.
--report prints a Markdown table of the first recommendation per scenario on stdout (the
lines then go to stderr), for before/after notes. Python 3 standard library only.

The expectation vocabulary is documented in tests/scenarios/README.md. A field the planner
does not (yet) report is a failure with a message saying so, never a crash."""
import json
import os
import subprocess
import sys

PCIE_KINDS = ("pcie",)  # intra_node.kind prefixes that mean "PCIe only"


class Missing(Exception):
    """A field the expectation needs is absent from the planner's answer."""


def pointer(doc, path):
    """The value at a JSON pointer; Missing when any step is absent."""
    if path in ("", "/"):
        return doc
    cur = doc
    for raw in path.lstrip("/").split("/"):
        key = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(cur, list):
            try:
                cur = cur[int(key)]
            except (ValueError, IndexError):
                raise Missing(f"{path}: no element {key}")
        elif isinstance(cur, dict):
            if key not in cur:
                raise Missing(f"{path}: no field '{key}'")
            cur = cur[key]
        else:
            raise Missing(f"{path}: '{key}' under a {type(cur).__name__}")
    return cur


def get(doc, path):
    """Like pointer, but a JSON null also counts as missing."""
    v = pointer(doc, path)
    if v is None:
        raise Missing(f"{path} is null")
    return v


def num(x, what):
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise Missing(f"{what} is not a number ({x!r})")
    return float(x)


def in_range(v, rng):
    lo, hi = rng
    return (lo is None or v >= lo) and (hi is None or v <= hi)


def fmt_num(v):
    if v is None:
        return "-"
    a = abs(v)
    if a >= 1e6 or (a and a < 1e-2):
        return f"{v:.3g}"
    if a >= 100:
        return f"{v:.0f}"
    return f"{v:.3g}"


def fmt_time(s):
    if s is None:
        return "-"
    if s >= 2 * 86400:
        return f"{s / 86400:.1f} d"
    if s >= 3600:
        return f"{s / 3600:.1f} h"
    if s >= 60:
        return f"{s / 60:.1f} min"
    return f"{s:.0f} s"


class Rec:
    """Derived facts about one recommendation, each raising Missing when it cannot be known."""

    def __init__(self, rec, result, catalog):
        self.r = rec
        self.result = result
        self.catalog = catalog

    def gpu(self):
        g = get(self.r, "/gpu")
        if isinstance(g, dict):
            g = g.get("id")
        if not isinstance(g, str):
            raise Missing("/gpu is not a card id")
        return g

    def card(self):
        g = self.gpu()
        if g not in self.catalog:
            raise Missing(f"card '{g}' is not in `gpuplan catalog --gpus`")
        return self.catalog[g]

    def count(self):
        return num(get(self.r, "/count"), "/count")

    def par(self, key, default=None):
        try:
            return num(get(self.r, f"/parallel/{key}"), f"/parallel/{key}")
        except Missing:
            if default is None:
                raise
            return default

    def replica_gpus(self):
        try:
            return self.par("gpus")
        except Missing:
            return self.count()

    def replicas(self):
        try:
            return num(get(self.r, "/replicas"), "/replicas")
        except Missing:
            return 1.0

    def memory_gib(self):
        return num(self.card().get("memory_gib"), "catalog memory_gib")

    def price(self):
        # The row's own price: the offer of the request's market (pricing.market) it was
        # ranked by, not a catalog figure of some other market.
        try:
            return get(self.r, "/estimate/cost/usd_per_gpu_hour")
        except Missing:
            return None

    def warning_codes(self):
        try:
            return [w.get("code") for w in get(self.r, "/estimate/warnings")]
        except Missing:
            return []

    def intra_kind(self):
        return str((self.card().get("intra_node") or {}).get("kind", ""))

    def per_node(self):
        return num(self.card().get("gpus_per_node"), "catalog gpus_per_node")

    def is_training(self):
        return "training" in (self.r.get("estimate", {}).get("performance") or {})

    def seq_len(self):
        for path in ("/request_normalized/workload/seq_len",):
            try:
                return num(get(self.result, path), path)
            except Missing:
                pass
        raise Missing("/request_normalized/workload/seq_len")

    def global_batch_seqs(self):
        if "global_batch" in self.r and self.r["global_batch"] is not None:
            return num(self.r["global_batch"], "/global_batch")
        mb = num(get(self.r, "/micro_batch"), "/micro_batch")
        ga = num(get(self.r, "/grad_accum"), "/grad_accum")
        dp = self.replica_gpus() / (self.par("tp", 1) * self.par("pp", 1) * self.par("cp", 1))
        return mb * ga * dp

    def served(self):
        try:
            per = num(get(self.r, "/concurrency_per_replica"), "/concurrency_per_replica")
        except Missing:
            per = num(get(self.r, "/estimate/performance/inference/max_concurrency"),
                      "max_concurrency")
        return per * self.replicas()

    def concurrency_per_replica(self):
        try:
            return num(get(self.r, "/concurrency_per_replica"), "/concurrency_per_replica")
        except Missing:
            return num(get(self.r, "/estimate/performance/inference/max_concurrency"),
                       "max_concurrency")


def check_rec(rec, exp, label):
    """Failures (strings) of one recommendation against a dict of expectations."""
    fails = []

    def fail(msg):
        fails.append(f"{label}: {msg}")

    # Each check reads its figure through value(): an absent expectation is skipped, and a figure
    # the planner does not report fails with why, in one place.
    none = object()

    def value(name, value_fn, with_expected=True):
        if name not in exp:
            return none
        try:
            return value_fn()
        except Missing as e:
            fail(f"{name} {exp[name]}: cannot tell ({e})" if with_expected
                 else f"{name}: cannot tell ({e})")
            return none

    def rng(name, value_fn, unit=""):
        v = value(name, value_fn)
        if v is not none and not in_range(v, exp[name]):
            fail(f"{name} = {fmt_num(v)}{unit}, expected in {exp[name]}")

    def bound(name, value_fn, unit, upper):
        v = value(name, value_fn)
        if v is none:
            return
        if (v > exp[name]) if upper else (v < exp[name]):
            shown = name.replace("_max", "") if upper else name.replace("_min", "")
            fail(f"{shown} = {fmt_num(v)}{unit}, expected {'<=' if upper else '>='} {exp[name]}")

    def maxi(name, value_fn, unit=""):
        bound(name, value_fn, unit, upper=True)

    def mini(name, value_fn, unit=""):
        bound(name, value_fn, unit, upper=False)

    def member(name, value_fn):
        v = value(name, value_fn, with_expected=False)
        if v is not none and v not in exp[name]:
            fail(f"{name.replace('_in', '')} = {v!r}, expected one of {exp[name]}")

    def flag(name, value_fn, why=""):
        v = value(name, value_fn)
        if v is not none and bool(v) != bool(exp[name]):
            fail(f"{name} is {v}, expected {exp[name]}{why}")

    est = lambda p: get(rec.r, "/estimate" + p)  # noqa: E731

    member("gpu_in", rec.gpu)
    if "gpu_not_in" in exp:
        try:
            if rec.gpu() in exp["gpu_not_in"]:
                fail(f"gpu = {rec.gpu()}, which a practitioner would not pick here")
        except Missing as e:
            fail(f"gpu_not_in: cannot tell ({e})")
    rng("memory_gib", rec.memory_gib, " GiB")
    flag("priced", lambda: rec.price() is not None)
    if "warnings_absent" in exp:
        try:
            present = [c for c in rec.warning_codes() if c in exp["warnings_absent"]]
            if present:
                fail(f"warnings {present} present, expected none of {exp['warnings_absent']}")
        except Missing as e:
            fail(f"warnings_absent: cannot tell ({e})")
    flag("pcie", lambda: rec.intra_kind().startswith(PCIE_KINDS),
         " (card's intra-node link: PCIe)")
    member("cooling_in", lambda: rec.card().get("cooling"))
    rng("count", rec.count)
    rng("replica_gpus", rec.replica_gpus)
    rng("tp", lambda: rec.par("tp"))
    rng("pp", lambda: rec.par("pp"))
    member("zero_in", lambda: int(rec.par("zero")))
    member("recompute_in", lambda: get(rec.r, "/memory_techniques/recompute"))
    member("weights_in", lambda: get(rec.r, "/precision/weights"))
    flag("tp_within_node", lambda: rec.par("tp") <= rec.per_node())
    flag("model_parallel_within_node",
         lambda: rec.par("tp") * rec.par("pp", 1) * rec.par("cp", 1) <= rec.per_node())
    flag("single_node", lambda: rec.count() <= rec.per_node())
    flag("fits", lambda: est("/memory/fits"))
    flag("headroom_ok", lambda: num(est("/memory/total_with_headroom_bytes"), "headroom")
         <= num(est("/memory/capacity_bytes"), "capacity"))
    maxi("time_s_max", lambda: num(est("/performance/training/time_s"), "time_s"), " s")
    flag("cost_present", lambda: pointer(rec.r, "/estimate/cost/usd_total") is not None)
    maxi("usd_total_max", lambda: num(est("/cost/usd_total"), "usd_total"), " USD")
    flag("usd_per_mtok_present",
         lambda: pointer(rec.r, "/estimate/cost/usd_per_million_tokens") is not None)
    maxi("tpot_ms_max", lambda: num(est("/performance/inference/tpot_ms"), "tpot_ms"), " ms")
    maxi("ttft_ms_max", lambda: num(est("/performance/inference/ttft_ms"), "ttft_ms"), " ms")
    flag("meets_targets", lambda: est("/performance/inference/meets_targets"))
    mini("served_concurrency_min", rec.served)
    mini("concurrency_per_replica_min", rec.concurrency_per_replica)
    maxi("node_watts_max", lambda: num(est("/power/node_watts"), "node_watts"), " W")
    rng("bytes_per_parameter", lambda: num(est("/memory/bytes_per_parameter"), "bytes/param"))
    mini("replica_weights_gib_min", lambda: num(est("/memory/per_gpu_bytes/weights"), "weights")
         * rec.par("tp", 1) * rec.par("pp", 1) / 2**30, " GiB")
    mini("replica_memory_gib_min", lambda: rec.memory_gib() * rec.replica_gpus(), " GiB")
    rng("global_batch_seqs", rec.global_batch_seqs, " sequences")
    rng("global_batch_tokens", lambda: rec.global_batch_seqs() * rec.seq_len(), " tokens")
    if exp.get("rank_code_present") and not rec.r.get("rank_code"):
        fail("rank_code absent (every recommendation says why it ranks where it does)")
    if exp.get("rank_reason_present") and not rec.r.get("rank_reason"):
        fail("rank_reason absent")
    member("rank_code_in", lambda: get(rec.r, "/rank_code"))
    # The market of the offer that priced the row: a buyer's answer is priced where they buy.
    member("offer_market_in", lambda: get(rec.r, "/estimate/cost/offer/market"))
    for c in exp.get("checks", []):
        why = f" ({c['why']})" if c.get("why") else ""
        try:
            v = num(get(rec.r, c["path"]), c["path"])
            ref = (num(get(rec.r, c["value_path"]), c["value_path"]) if "value_path" in c
                   else num(c["value"], "value"))
        except Missing as e:
            fail(f"{c['path']} {c['op']} ...: cannot tell ({e}){why}")
            continue
        ok = {">=": v >= ref, "<=": v <= ref, ">": v > ref, "<": v < ref, "==": v == ref}.get(c["op"])
        if ok is None:
            raise ValueError(f"unknown op {c['op']!r}")
        if not ok:
            rhs = c.get("value_path", fmt_num(ref))
            fail(f"{c['path']} = {fmt_num(v)}, expected {c['op']} {rhs} = {fmt_num(ref)}{why}")
    return fails


def check(result, exp, catalog):
    """All failures of one plan result against a scenario's `expect`."""
    fails = []
    recs = result.get("recommendations")
    if not isinstance(recs, list):
        return ["result has no 'recommendations' list"]
    if len(recs) < exp.get("min_recommendations", 1):
        rej = result.get("rejected") or []
        codes = sorted({str(r.get("code")) for r in rej if isinstance(r, dict)})
        fails.append(f"{len(recs)} recommendations, expected >= "
                     f"{exp.get('min_recommendations', 1)}; {len(rej)} cards rejected "
                     f"(codes: {', '.join(codes) or 'none'})")
        return fails
    first = Rec(recs[0], result, catalog) if recs else None
    if first is not None and "first" in exp:
        fails += check_rec(first, exp["first"], "first")
    if "all" in exp:
        for i, r in enumerate(recs):
            fails += check_rec(Rec(r, result, catalog), exp["all"], f"recommendation {i}")
    rec_gpus = [r.get("gpu") for r in recs]
    for g in exp.get("recommended_all", []):
        if g not in rec_gpus:
            why = [r for r in (result.get("rejected") or []) if r.get("gpu") == g]
            fails.append(f"{g} is not among the recommendations"
                         + (f" (rejected: {why[0].get('code')}: {why[0].get('reason')})"
                            if why else ""))
    advice = [a.get("code") for a in (result.get("advice") or []) if isinstance(a, dict)]
    for code in exp.get("advice_must", []):
        if code not in advice:
            fails.append(f"advice '{code}' expected, got {advice}")
    for code in exp.get("advice_must_not", []):
        if code in advice:
            fails.append(f"advice '{code}' must not appear here")
    rejected = {r.get("gpu"): r for r in (result.get("rejected") or []) if isinstance(r, dict)}
    for g, codes in exp.get("rejected", {}).items():
        if g not in rejected:
            where = "recommended" if g in rec_gpus else "neither recommended nor rejected"
            fails.append(f"{g} expected rejected ({'/'.join(codes)}), but it is {where}")
        elif rejected[g].get("code") is None:
            fails.append(f"{g} rejected without a code (expected {'/'.join(codes)}): "
                         f"{rejected[g].get('reason')}")
        elif rejected[g]["code"] not in codes:
            fails.append(f"{g} rejected as '{rejected[g]['code']}', expected "
                         f"{'/'.join(codes)}")
    if exp.get("fewest_cards_alternative"):
        codes = [r.get("rank_code") for r in recs]
        if not (recs[0].get("fewest_cards") or "fewest_cards" in codes):
            fails.append("no fewest_cards alternative (first.fewest_cards or a "
                         "recommendation with rank_code 'fewest_cards')")
    if "almost_fits" in exp:
        fails += check_almost(recs[0], result, exp["almost_fits"])
    for w in exp.get("when", []):
        if first is not None and not check_rec(first, w["if"], "if"):
            sub = check(result, dict(w["then"], min_recommendations=0), catalog)
            why = f" [{w['why']}]" if w.get("why") else ""
            fails += [f"{f}{why}" for f in sub]
    return fails


def check_almost(rec, result, exp):
    af = rec.get("almost_fits", result.get("almost_fits"))
    if not exp.get("present", True):
        return ["almost_fits present, expected none"] if af else []
    if not isinstance(af, dict):
        return ["almost_fits absent (a smaller count that just misses should say which "
                "lever makes it fit)"]
    fails = []
    if "count" in exp:
        c = af.get("count")
        if not isinstance(c, (int, float)) or not in_range(c, exp["count"]):
            fails.append(f"almost_fits.count = {c!r}, expected in {exp['count']}")
    levers = af.get("levers")
    if not isinstance(levers, list):
        fails.append("almost_fits.levers absent")
        return fails
    if len(levers) < exp.get("levers_min", 0):
        fails.append(f"almost_fits has {len(levers)} levers, expected >= {exp['levers_min']}")
    if exp.get("lever_fits") and not any(isinstance(lv, dict) and lv.get("fits") for lv in levers):
        fails.append("no almost_fits lever makes it fit")
    for lv in levers:
        if isinstance(lv, dict):
            for k in ("code", "saved_bytes", "fits"):
                if k not in lv:
                    fails.append(f"almost_fits lever {lv.get('code')!r} lacks '{k}'")
    return fails


def summary(result, catalog):
    """(card x count, setup, speed, cost, rank_code) of the first recommendation."""
    recs = result.get("recommendations") or []
    if not recs:
        return ("none", "-", "-", "-", "-")
    r = recs[0]
    g = r.get("gpu")
    if isinstance(g, dict):
        g = g.get("id")
    rep = r.get("replicas")
    card = f"{g} x{r.get('count')}" + (f" ({rep} replicas)" if isinstance(rep, int) and rep > 1
                                       else "")
    p = r.get("parallel") or {}
    setup = f"tp{p.get('tp')}/pp{p.get('pp')}/z{p.get('zero')}"
    mt = r.get("memory_techniques") or {}
    if mt.get("recompute") not in (None, "selective"):
        setup += f" rc:{mt.get('recompute')}"
    w = (r.get("precision") or {}).get("weights")
    if w and w != "bf16":
        setup += f" {w}"
    perf = (r.get("estimate") or {}).get("performance") or {}
    cost = (r.get("estimate") or {}).get("cost") or {}
    if "training" in perf:
        t = perf["training"]
        speed = f"{fmt_time(t.get('time_s'))}, {fmt_num(t.get('tokens_per_s'))} tok/s"
        c = cost.get("usd_total")
        money = f"${fmt_num(c)}" if c is not None else "unpriced"
    elif "inference" in perf:
        i = perf["inference"]
        rate = i.get("max_throughput_tokens_per_s", i.get("decode_tokens_per_s_total"))
        speed = f"{fmt_num(rate)} tok/s, tpot {fmt_num(i.get('tpot_ms'))} ms"
        c = cost.get("usd_per_million_tokens")
        money = f"${fmt_num(c)}/Mtok" if c is not None else "unpriced"
    else:
        speed, money = "-", "-"
    return (card, setup, speed, money, str(r.get("rank_code") or "-"))


def load_scenarios(folder):
    out = []
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            data = json.load(f)
        for s in data if isinstance(data, list) else [data]:
            for k in ("id", "question", "request", "expert_answer", "expect"):
                if k not in s:
                    raise ValueError(f"{name}: scenario lacks '{k}'")
            out.append(s)
    ids = [s["id"] for s in out]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise ValueError(f"duplicate scenario ids: {sorted(dup)}")
    return out


def run_cli(binary, args, stdin=None):
    try:
        p = subprocess.run([binary] + args, input=stdin, capture_output=True, text=True,
                           timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"could not run {binary}: {e}"
    if p.returncode != 0:
        err = (p.stderr.strip().splitlines() or ["(no stderr)"])
        return None, f"exit {p.returncode}: " + " | ".join(err[:3])
    try:
        return json.loads(p.stdout), None
    except ValueError as e:
        return None, f"output is not JSON ({e})"


def load_catalog(binary):
    data, err = run_cli(binary, ["catalog", "--gpus"])
    if err:
        return {}, err
    return {g["id"]: g for g in data.get("gpus", []) if isinstance(g, dict) and "id" in g}, None


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    opts = [a for a in argv if a.startswith("--")]
    only = None
    for o in list(opts):
        if o.startswith("--only="):
            only = set(o.split("=", 1)[1].split(","))
            opts.remove(o)
    report = "--report" in opts
    verbose = "--verbose" in opts
    unknown = [o for o in opts if o not in ("--report", "--verbose")]
    if len(args) != 2 or unknown:
        print(__doc__, file=sys.stderr)
        return 2
    binary, folder = args
    try:
        scenarios = load_scenarios(folder)
    except (OSError, ValueError) as e:
        print(f"cannot read scenarios: {e}", file=sys.stderr)
        return 2
    if only:
        scenarios = [s for s in scenarios if s["id"] in only]
    log = sys.stderr if report else sys.stdout
    catalog, cat_err = load_catalog(binary)
    if cat_err:
        print(f"warning: `gpuplan catalog --gpus` failed ({cat_err}); card facts unknown",
              file=log)
    rows, failed = [], 0
    for s in scenarios:
        # The complete answer: the checks read figures (model, bytes per parameter) that the
        # lean default leaves to `estimate`.
        result, err = run_cli(binary, ["plan", "--full", "-"], json.dumps(s["request"]))
        if err:
            fails, summ = [f"planner: {err}"], ("error", "-", "-", "-", "-")
        else:
            try:
                fails = check(result, s["expect"], catalog)
            except Exception as e:  # a malformed answer must not stop the suite
                fails = [f"runner could not check this answer: {type(e).__name__}: {e}"]
            try:
                summ = summary(result, catalog)
            except Exception as e:
                summ = (f"? ({type(e).__name__})", "-", "-", "-", "-")
        failed += bool(fails)
        verdict = "FAIL" if fails else "PASS"
        print(f"{verdict} {s['id']:<32} {summ[0]}  {summ[1]}  {summ[2]}  {summ[3]}  "
              f"rank={summ[4]}", file=log)
        for f in fails:
            print(f"       - {f}", file=log)
        if verbose:
            print(f"       question: {s['question']}", file=log)
        rows.append((s["id"], summ, verdict, fails))
    print(f"{len(scenarios) - failed}/{len(scenarios)} scenarios pass", file=log)
    if report:
        print("| scenario | first recommendation | setup | time / rate | cost | rank_code "
              "| verdict |")
        print("|---|---|---|---|---|---|---|")
        for sid, summ, verdict, fails in rows:
            # The substantive failures first, the absent ranking labels last.
            fails = sorted(fails, key=lambda f: "rank_code absent" in f or "rank_reason" in f)
            v = verdict if not fails else f"FAIL ({len(fails)}): " + "; ".join(fails[:3]) \
                + (" ..." if len(fails) > 3 else "")
            cells = [sid, *summ, v]
            print("| " + " | ".join(str(c).replace("|", "/") for c in cells) + " |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
