#!/usr/bin/env python3
"""Writes tests/reference/cases/serving-bench.json from serving_bench_rows.json (published
serving benchmarks at saturation, each with its source): every row of vLLM, SGLang or
TensorRT-LLM on catalog cards, for a catalog model, with mean prompt and output lengths,
becomes a finite offline batch (workload.requests: the prompt count and mean lengths) that
`gpuplan validate` scores against max_throughput_tokens_per_s, the output rate at saturation.
The benchmarks ran at request rate inf (or a saturating rate): every prompt queued at once.
Run from the repository root:
    python3 tests/reference/make_serving_bench_cases.py
"""
import json


def main():
    src = json.load(open("tests/reference/serving_bench_rows.json"))
    cases = []
    for row in src["rows"]:
        if row["engine"] not in ("vllm", "sglang", "tensorrt_llm"):
            continue
        if not row["gpu_id"] or not row["model_preset"]:
            continue
        p, o = row["input_tokens"].get("mean"), row["output_tokens"].get("mean")
        if not p or not o or not row.get("num_prompts"):
            continue
        fp8 = "fp8" in str(row.get("dtype", "")).lower() or "fp8" in str(row.get("quantization") or "").lower()
        request = {"model": {"preset": row["model_preset"]}, "gpu": row["gpu_id"],
                   "framework": row["engine"],
                   "precision": {"weights": "fp8" if fp8 else "bf16"},
                   "parallel": {"gpus": row["gpus"], "tp": row["tp"]},
                   "workload": {"kind": "inference", "mode": "offline",
                                "requests": {"count": row["num_prompts"],
                                             "prompt_tokens": {"mean": p},
                                             "output_tokens": {"mean": o}}}}
        version = row.get("version")
        if version and version[0].isdigit():
            request["serving"] = {"version": version.split()[0]}
        url = row["source"].split()[0]
        group = "serving " + ("/".join(url.split("/")[3:5]) if "github.com" in url
                              else url.split("/")[2] if "//" in url else url)
        cases.append({
            "id": "servebench-" + row["id"], "group": group, "source": row["source"],
            "confidence": "medium", "stack": "%s %s" % (row["engine"], version),
            "compare": "/performance/inference/max_throughput_tokens_per_s",
            "kind": "saturation",
            "measured_value": row["output_tokens_per_s"],
            # A dataset of varied lengths (ShareGPT) ends on its longest outputs, which the
            # sources do not state (only the means): scored only for fixed lengths.
            "scored": (row.get("request_rate") == "inf" and row.get("max_concurrency") is None
                       and row.get("dataset") == "random"),
            "notes": (row.get("notes") or "") + " Quoted: " + " | ".join(row.get("quoted", []))[:600],
            "request": request})
    out = {"about": "Serving throughput at saturation from published benchmarks (built by "
                    "tests/reference/make_serving_bench_cases.py from serving_bench_rows.json; "
                    "sources per case). Offline batches of each benchmark's prompt count at its "
                    "mean lengths; the engines' own defaults otherwise. " + src["about"],
           "fitted": False, "cases": cases}
    with open("tests/reference/cases/serving-bench.json", "w") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(len(cases), "cases,", sum(c["scored"] for c in cases), "scored")


if __name__ == "__main__":
    main()
