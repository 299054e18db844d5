#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Translates the training and inference measurements of ../shared/dev-cases/cases.json into
gpuplan requests (tests/reference/perf_cases.json). Run from the repository root:

    python3 tests/reference/make_perf_cases.py ../shared/dev-cases/cases.json

Each case keeps its dev-cases id, group, source and confidence; `compare` is the JSON pointer
of the result figure that corresponds to what the source measured. Where the source leaves a
setting out, the choice made here is written in the case's `notes`.
"""
import json
import sys

GIB = 2**30

# Megatron-LM 2021 table: attention heads are not in the dev-case (Narayanan et al. 2021,
# Table 1 gives them); FLOPs do not depend on them, only on the hidden size.
MEGATRON_HEADS = {2304: 24, 3072: 32, 4096: 32, 6144: 48, 8192: 64, 10240: 80, 12288: 96,
                  16384: 128, 20480: 128, 25600: 160}

# The RTX 3090 Ti is not in the shipped catalog: an inline card from NVIDIA's specifications
# (24 GB GDDR6X, 1008 GB/s, 450 W; GA102 tensor cores as the 3090's, scaled by clock).
RTX_3090_TI = {"id": "rtx-3090-ti-24gb", "name": "NVIDIA GeForce RTX 3090 Ti 24GB",
               "vendor": "nvidia", "generation": "ampere", "memory_gib": 24,
               "mem_bandwidth_gb_per_s": 1008, "sm_count": 84, "fp32_tflops": 40,
               "bf16_dense_tflops": 80,
               "fp16_dense_tflops": 80, "board_power_w": 450, "form_factor": "pcie",
               "intra_node": {"kind": "pcie4", "gb_per_s_per_direction": 32}, "gpus_per_node": 4,
               "sources": {"bandwidth": "NVIDIA GeForce RTX 3090 Ti specifications",
                           "sm_count": "the full GA102 die: 84 SMs, 10,752 CUDA cores (NVIDIA "
                                       "Ampere GA102 whitepaper, Appendix A)"}}


def gpu_id(text):
    t = text.lower()
    if "h100" in t:
        return "h100-sxm-80gb"
    if "a100" in t and "40" in t:
        return "a100-sxm-40gb"
    if "a100" in t:
        return "a100-sxm-80gb"
    if "4090" in t:
        return "rtx-4090-24gb"
    if "a6000" in t:
        return "rtx-a6000-48gb"
    if "3090 ti" in t:
        return RTX_3090_TI
    raise ValueError(text)


def base_case(c, compare, value, unit, notes=""):
    return {"id": c["id"], "group": c["group"],
            "source": c["source"]["title"] + " (" + c["source"]["where"] + ")",
            "confidence": c["confidence"], "compare": compare, "measured_value": value,
            "measured_unit": unit, "scored": c["measurement_type"] == "measured",
            "notes": notes}


def mpt_model(m):
    return {"name": m["name"], "layers": m["layers"], "hidden": m["hidden"], "heads": m["heads"],
            "vocab": m["vocab"], "intermediate": m["intermediate"], "mlp": "plain",
            "norm": "layer", "tied_embeddings": True}


def training_case(c):
    m, w, h, ms = c["model"], c["workload"], c["hardware"], c["measured"]
    g = c["group"]
    req = {"gpu": gpu_id(h["gpu"]), "optimizer": "adamw",
           "memory_techniques": {"flash_attention": True}}
    notes = ""
    if g == "llm-foundry-mpt-benchmarks":
        req["model"] = mpt_model(m)
        ac = w.get("activation_checkpointing")
        req["workload"] = {"kind": "pretrain", "micro_batch": w["micro_batch_size"],
                           "seq_len": w["seq_len"], "grad_accum": 1}
        req["memory_techniques"]["recompute"] = "full" if ac else "none"
        req["precision"] = {"weights": "fp8" if "fp8" in w["precision"] else "bf16"}
        req["parallel"] = {"gpus": h["count"], "zero": 3}
        return dict(base_case(c, "/performance/training/tokens_per_s_per_gpu", ms["value"],
                              "tokens/s/GPU"), request=req)
    if g == "torchtitan-perf-2024-04":
        preset = {"Llama-3-8B": "llama-3-8b", "Llama-3-70B": "llama-3-70b",
                  "Llama-2-13B": "llama-2-13b", "Llama-2-70B": "llama-2-70b"}[m["name"]]
        ac = w["activation_checkpointing"]
        req["model"] = {"preset": preset}
        req["workload"] = {"kind": "pretrain", "micro_batch": w["micro_batch_size"],
                           "seq_len": w["seq_len"], "grad_accum": 1}
        req["memory_techniques"]["recompute"] = ("full" if ac == "full" else
                                                 "none" if ac == "none" else "selective")
        req["parallel"] = {"gpus": h["count"], "zero": 3}
        return dict(base_case(c, "/performance/training/tokens_per_s_per_gpu", ms["value"],
                              "tokens/s/GPU"), request=req)
    if g == "megatron-lm-2021-a100":
        p = w["parallelism"]
        heads = MEGATRON_HEADS[m["hidden"]]
        req["model"] = {"name": m["name"], "layers": m["layers"], "hidden": m["hidden"],
                        "heads": heads, "vocab": m["vocab"], "intermediate": m["intermediate"],
                        "mlp": "plain", "norm": "layer", "tied_embeddings": True}
        dp = p["dp"]
        # Micro-batch 1 (the paper's runs for the largest models); the rest of the global batch
        # is gradient accumulation, which is also the pipeline's micro-batch count.
        req["workload"] = {"kind": "pretrain", "micro_batch": 1, "seq_len": w["seq_len"],
                           "grad_accum": w["global_batch_size"] // dp}
        req["memory_techniques"] = {"recompute": "full", "flash_attention": False}
        req["parallel"] = {"gpus": h["count"], "tp": p["tp"], "pp": p["pp"], "zero": 1}
        notes = ("heads from Narayanan et al. 2021 Table 1; micro-batch 1 assumed; Megatron "
                 "counts recomputation, so the hardware TFLOP/s are compared")
        return dict(base_case(c, "/performance/training/achieved_tflops_per_gpu", ms["value"],
                              "TFLOP/s per GPU", notes), request=req)
    if g == "published-gpu-hours":
        preset = {"Llama-2-7B": "llama-2-7b", "Llama-2-13B": "llama-2-13b",
                  "Llama-2-70B": "llama-2-70b", "Llama-3-8B": "llama-3-8b",
                  "Llama-3-70B": "llama-3-70b", "Llama-3.1-8B": "llama-3.1-8b",
                  "Llama-3.1-70B": "llama-3.1-70b", "Llama-3.1-405B": "llama-3.1-405b"}[m["name"]]
        tokens = w["tokens"] if isinstance(w["tokens"], (int, float)) else 15e12
        seq = w["seq_len"] if isinstance(w["seq_len"], int) else 8192
        big = "405B" in m["name"]
        req["model"] = {"preset": preset}
        req["workload"] = {"kind": "pretrain", "micro_batch": 1, "seq_len": seq,
                           "grad_accum": 16 if big else 1, "tokens": tokens}
        req["memory_techniques"]["recompute"] = "full" if "70B" in m["name"] or big else "selective"
        req["parallel"] = ({"gpus": 16384, "tp": 8, "pp": 16, "zero": 1} if big else
                           {"gpus": 2048, "zero": 3})
        req["gpu"] = "h100-sxm-80gb" if "H100" in h["gpu"] else "a100-sxm-80gb"
        notes = ("run totals (restarts, evaluation, stragglers) against a steady-state estimate: "
                 "expect an under-estimate; job size and layout assumed (2048 GPUs FSDP; 405B: "
                 "16384 GPUs, tp 8 x pp 16 as in the Llama 3 paper); 15T tokens where the card "
                 "says '15T+'")
        case = dict(base_case(c, "/performance/training/gpu_hours",
                              ms.get("value_numeric", ms["value"]), "GPU-hours", notes),
                    request=req)
        # The job size, layout and batch per GPU are not published: the comparison cannot test
        # the model, only show where a steady-state estimate lands against a run total.
        case["scored"] = False
        return case
    if g == "torchtune-readme-2024-09":
        if h["count"] != 1:
            return None  # multi-GPU rows: the README does not say per GPU or total
        kind = w["type"]
        preset = "llama-3.1-8b"
        peft = w.get("peft") or {}
        wl = {"kind": kind, "micro_batch": 2, "seq_len": 2048, "grad_accum": 1}
        if peft:
            wl["lora_rank"] = peft["rank"]
            wl["lora_targets"] = [t for t in peft["target"]] + (
                ["gate_proj", "up_proj", "down_proj"] if peft.get("mlp") else [])
        req["model"] = {"preset": preset}
        req["workload"] = wl
        req["memory_techniques"] = {"recompute": "full", "flash_attention": True,
                                    "chunked_loss": True}
        # The README's runs set compile: True (the case's workload.torch_compile).
        if w.get("torch_compile"):
            req["memory_techniques"]["compile"] = True
        # The optimizer and dtypes of torchtune's single-device configs, as the memory cases of
        # the same runs have them: the full finetune steps PagedAdamW8bit in backward on bf16
        # weights without an fp32 master copy; the adapters are bf16. The optimizer step's time
        # depends on them.
        notes = ""
        if kind == "full_finetune":
            req["optimizer"] = "paged_adamw_8bit"
            req["precision"] = {"weights": "bf16", "master_weights": "none"}
            req["memory_techniques"]["optimizer_in_backward"] = True
            notes = ("torchtune full_finetune_single_device: PagedAdamW8bit, bf16, optimizer "
                     "in backward")
        elif kind == "qlora":
            req["precision"] = {"weights": "nf4", "adapters": "bf16", "quantize_lm_head": True}
        else:
            req["precision"] = {"weights": "bf16", "adapters": "bf16"}
        return dict(base_case(c, "/performance/training/tokens_per_s_per_gpu", ms["value"],
                              "tokens/s", notes), request=req)
    return None


def inference_case(c):
    m, w, h, ms = c["model"], c["workload"], c["hardware"], c["measured"]
    names = {"Llama-2-7B": "llama-2-7b", "Llama-2-13B": "llama-2-13b",
             "Llama-2-70B": "llama-2-70b", "Llama-3.1-8B": "llama-3.1-8b",
             "Llama-3.1-70B": "llama-3.1-70b", "Llama-3.1-405B": "llama-3.1-405b"}
    req = {"model": {"preset": names[m["name"]]}, "gpu": gpu_id(h["gpu"])}
    prec = w["precision"].lower()
    notes = ""
    if c["group"] == "gpt-fast":
        req["workload"] = {"kind": "inference", "prompt_tokens": 5, "output_tokens": 100,
                           "concurrency": 1}
        if "int8" in prec:
            req["precision"] = {"weights": "int8", "quantize_lm_head": True}
        elif "int4" in prec:
            req["precision"] = {"weights": "int4", "group_size": 32, "quantize_lm_head": True}
        else:
            req["precision"] = {"weights": "bf16"}
        tp = w["parallelism"].get("tp", 1)
        req["parallel"] = {"gpus": tp, "tp": tp}
        notes = "gpt-fast quantises every linear layer, lm_head included"
    else:
        req["workload"] = {"kind": "inference", "prompt_tokens": 7, "output_tokens": 256,
                           "concurrency": 1}
        engine = w["engine"].lower()
        if "q4f16" in prec or "q4_0" in prec:
            # MLC q4f16_1 and llama.cpp Q4_0 both store 4.5 bits per weight (4-bit codes, one
            # 16-bit scale per 32): the same bytes as int4 with a scale and zero per 64.
            req["precision"] = {"weights": "int4", "group_size": 64}
        elif "gptq" in prec:
            req["precision"] = {"weights": "gptq_int4"}
        elif "awq" in prec:
            req["precision"] = {"weights": "awq_int4"}
        else:
            req["precision"] = {"weights": "fp16"}
        n = w["parallelism"].get("gpus", 1)
        if n > 1 and "a100" in h["gpu"].lower():
            # dev-cases README: the multi-GPU rows of this benchmark ran over PCIe.
            req["gpu"] = "a100-pcie-80gb"
        if n > 1 and "llama.cpp" in engine:
            req["parallel"] = {"gpus": n, "pp": n}  # layer split: stages run one after another
        else:
            req["parallel"] = {"gpus": n, "tp": n}
        notes = "engine: " + w["engine"]
    return dict(base_case(c, "/performance/inference/decode_tokens_per_s_per_seq", ms["value"],
                          "tokens/s", notes), request=req)


# The framework profile (catalog/stacks.json) each source ran on, where there is one:
# validate reports the error per framework.
STACKS = {"llm-foundry-mpt-benchmarks": "pytorch_fsdp", "torchtitan-perf-2024-04": "pytorch_fsdp",
          "megatron-lm-2021-a100": "megatron", "torchtune-readme-2024-09": "torchtune"}
ENGINES = {"vllm": "vllm", "llama.cpp": "llama_cpp"}


def framework_of(c):
    if c["group"] in STACKS:
        return STACKS[c["group"]]
    engine = (c["workload"].get("engine") or "").lower()
    return ENGINES.get(engine)


def main():
    cases = json.load(open(sys.argv[1]))
    out = []
    for c in cases:
        case = None
        if c["kind"] == "training":
            case = training_case(c)
        elif c["kind"] == "inference":
            case = inference_case(c)
        if case is not None:
            fw = framework_of(c)
            if fw:
                case["request"]["framework"] = fw
            out.append(case)
    doc = {"about": __doc__.strip().splitlines()[0] + " Generated by make_perf_cases.py.",
           "fitted": True, "cases": out}
    json.dump(doc, open("tests/reference/perf_cases.json", "w"), indent=1)
    print(len(out), "cases")


if __name__ == "__main__":
    main()
