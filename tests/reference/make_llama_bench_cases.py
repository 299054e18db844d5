#!/usr/bin/env python3
"""Writes tests/reference/cases/llama-bench-decode.json from decode_bench_rows.json (published
llama-bench and similar single-stream decode figures, each with its source): every decode row
("tg") on one catalog card, for a catalog model, in a GGUF type the engine models, becomes a
case that `gpuplan validate` scores against decode_tokens_per_s_per_seq. llama-bench's tg128
generates 128 tokens after an empty prompt. Vulkan rows are kept but not scored: the engine
models the CUDA and ROCm kernels' reads, not another backend's. Run from the repository root:
    python3 tests/reference/make_llama_bench_cases.py
"""
import json

QUANT = {"Q4_0": "gguf_q4_0", "Q4_K_M": "gguf_q4_k_m", "Q5_K_M": "gguf_q5_k_m",
         "Q6_K": "gguf_q6_k", "Q8_0": "gguf_q8_0", "Q2_K": "gguf_q2_k", "F16": "fp16"}


def main():
    src = json.load(open("tests/reference/decode_bench_rows.json"))
    cases = []
    for row in src["rows"]:
        if not row["test"].startswith("tg") or row.get("gpus", 1) != 1:
            continue
        if not row["gpu_id"] or not row["model_preset"] or row["quant"] not in QUANT:
            continue
        tokens = int(row["test"][2:]) if row["test"][2:].isdigit() else 128
        request = {"model": {"preset": row["model_preset"]}, "gpu": row["gpu_id"],
                   "framework": "llama_cpp", "precision": {"weights": QUANT[row["quant"]]},
                   "workload": {"kind": "inference", "prompt_tokens": 1,
                                "output_tokens": tokens, "concurrency": 1}}
        if row.get("flash_attn") is not None:
            request["memory_techniques"] = {"flash_attention": bool(row["flash_attn"])}
        url = row["source"].split()[0]
        group = "llama-bench " + ("/".join(url.split("/")[3:5]) if "github.com" in url else url)
        cases.append({
            "id": "llamabench-" + row["id"], "group": group, "source": row["source"],
            "confidence": "medium", "stack": "llama.cpp (%s, build %s)" % (row["backend"], row["build"]),
            "compare": "/performance/inference/decode_tokens_per_s_per_seq",
            "measured_value": row["tokens_per_s"],
            "scored": row["backend"] in ("CUDA", "ROCm") and row["tool"] == "llama-bench",
            "notes": (row.get("notes") or "") + " Quoted: " + row["quoted"],
            "request": request})
    out = {"about": "Single-stream decode of llama.cpp from published llama-bench tables (built by "
                    "tests/reference/make_llama_bench_cases.py from decode_bench_rows.json; "
                    "sources per case). " + src["about"],
           "fitted": False, "cases": cases}
    with open("tests/reference/cases/llama-bench-decode.json", "w") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(len(cases), "cases,", sum(c["scored"] for c in cases), "scored")


if __name__ == "__main__":
    main()
