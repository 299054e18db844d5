#!/usr/bin/env python3
"""Writes tests/reference/engine_logs.json: the serving engines' start-up logs gathered from
public threads (engine_logs_vllm.json and engine_logs_other.json, each log with its source,
quoted lines, settings and notes), and for the logs whose model architecture and card are
known, the gpuplan request that reproduces the run and the figures `gpuplan validate`
compares (`checks`: a JSON pointer into the result and the logged value in bytes or tokens).

A log gets a request only where the thread shows the model (or its architecture, checked
against the logged KV bytes per token) and either the card or a figure that does not depend
on it; what each request assumes is in its `assumed` line. Run from the repository root:
    python3 tests/reference/engine_logs_build.py
"""
import json

GIB = 2**30
MIB = 2**20

# Mistral 7B v0.1's geometry without the sliding window: llama.cpp runs llama-architecture
# GGUFs (WizardLM-2 7B, Mistral-7B bases) with a full cache.
MISTRAL_NO_SWA = {
    "architectures": ["MistralForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
    "vocab_size": 32000, "max_position_embeddings": 32768, "rms_norm_eps": 1e-5,
    "tie_word_embeddings": False, "hidden_act": "silu", "sliding_window": None}
# Qwen3-0.6B's config.json (huggingface.co/Qwen/Qwen3-0.6B): the logged q8_0 KV of 1175.12 MiB
# at n_ctx 20224 is 28 layers x 8 KV heads x 128 x 2 x 34/32 B a token, and the compute buffer
# of 298.75 MiB is 512 x (151936 + 1024) x 4 B.
QWEN3_06B = {
    "architectures": ["Qwen3ForCausalLM"], "hidden_size": 1024, "intermediate_size": 3072,
    "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 8,
    "head_dim": 128, "vocab_size": 151936, "max_position_embeddings": 40960,
    "tie_word_embeddings": True, "hidden_act": "silu"}


def inference(model, gpu, framework, serving, precision=None, tp=1, flash=None):
    q = {"model": model, "gpu": gpu, "framework": framework,
         "workload": {"kind": "inference", "prompt_tokens": 1, "output_tokens": 1,
                      "concurrency": 1},
         "serving": serving}
    if precision:
        q["precision"] = precision
    if tp > 1:
        q["parallel"] = {"gpus": tp, "tp": tp} if framework != "llama_cpp" else {"gpus": tp, "pp": tp}
    if flash is not None:
        q["memory_techniques"] = {"flash_attention": flash}
    return q


KV_TOKENS = "/framework/kv_pool_tokens"
WEIGHTS = "/memory/per_gpu_bytes/weights"
ACTIVATIONS = "/memory/per_gpu_bytes/activations"
KV_BYTES = "/memory/per_gpu_bytes/kv_cache"
GRAPHS = "/memory/detail/runtime.cuda_graphs"

# id: (request, assumed, [(what, pointer, measured key, scale)])
RUNS = {
    "vllm-na-llama3.1-8b-rtx3090-10517-20k": (
        inference({"preset": "llama-3.1-8b"}, "rtx-3090-24gb", "vllm",
                  {"version": "0.6.4", "gpu_memory_utilization": 0.9, "max_model_len": 20000}),
        "V0 worker (log format, about v0.6.4): whole prompts per batch, so the profile pass is "
        "max(max_model_len, 2048) tokens; 16-token blocks: 1952 blocks = 31,232 tokens",
        [("kv tokens", KV_TOKENS, "gpu_blocks", 16), ("weights", WEIGHTS, "weights_gib", GIB)]),
    "vllm-na-llama3.1-8b-rtx3090-10517-29k": (
        inference({"preset": "llama-3.1-8b"}, "rtx-3090-24gb", "vllm",
                  {"version": "0.6.4", "gpu_memory_utilization": 0.9, "max_model_len": 29000}),
        "as the 20k run", [("kv tokens", KV_TOKENS, "kv_cache_tokens", 1),
                           ("weights", WEIGHTS, "weights_gib", GIB)]),
    "vllm-na-llama2-13b-a100-40gb-upb-modelsize": (
        inference({"preset": "llama-2-13b"}, "a100-sxm-40gb", "vllm",
                  {"version": "0.10.1.1", "gpu_memory_utilization": 0.9, "max_model_len": 4096}),
        "V1 at the repository's pinned 0.10.1.1; utilization 0.9 (35.54 of 39.49 GiB); "
        "A100 40GB form factor not stated (SXM taken; the same memory)",
        [("kv tokens", KV_TOKENS, "kv_cache_tokens", 1), ("weights", WEIGHTS, "weights_gib", GIB),
         ("profile peak", ACTIVATIONS, "activation_peak_gib", GIB),
         ("cuda graphs", GRAPHS, "graph_gib", GIB)]),
}
for name, preset in [("llama2-7b", "llama-2-7b"), ("llama2-13b", "llama-2-13b"),
                     ("falcon-7b", "falcon-7b"), ("llama3-3b", "llama-3.2-3b")]:
    RUNS["vllm-0.10.1.1-%s-node5-48gbclass-upb-modelsize" % name] = (
        inference({"preset": preset}, "l40s-48gb", "vllm",
                  {"version": "0.10.1.1", "gpu_memory_utilization": 0.9}),
        "a 48 GB-class card that the log does not name (44.39 GiB total): L40S taken for the "
        "figures that do not depend on the card's size (weights, the profile's peak at the "
        "under-70-GiB limits of 2048 tokens and 256 sequences, graphs); KV tokens not compared",
        [("weights", WEIGHTS, "weights_gib", GIB),
         ("profile peak", ACTIVATIONS, "activation_peak_gib", GIB),
         ("cuda graphs", GRAPHS, "graph_gib", GIB)])
RUNS.update({
    "sglang-unk-llama-8b-class-l40s-13023": (
        inference({"preset": "llama-3.1-8b"}, "l40s-48gb", "sglang", {}),
        "checkpoint not named: Llama 3 8B geometry from the logged K size per token (11.18 GiB "
        "/ 183,133 tokens = 64 KiB); mem_fraction_static not shown, so SGLang's default rule",
        [("kv tokens", KV_TOKENS, "kv_cache_tokens", 1), ("weights", WEIGHTS, "weights_gib", GIB)]),
    "tensorrt_llm-unk-llama-2-7b-fp16-a10-224": (
        inference({"preset": "llama-2-7b"}, "a10-24gb", "tensorrt_llm",
                  {"kv_cache_free_gpu_mem_fraction": 0.95, "block_size": 16,
                   "max_num_seqs": 25},
                  precision={"weights": "fp16", "kv_cache": "fp16"}),
        "TensorRT-LLM version not shown (October 2023)",
        [("kv tokens", KV_TOKENS, "kv_cache_tokens", 1)]),
    "llama_cpp-unk-wizardlm2-7b-q8_0-rtx2080ti22gb-8096": (
        inference({"hf_config": MISTRAL_NO_SWA}, "rtx-3090-24gb", "llama_cpp",
                  {"n_ctx": 8192, "n_batch": 2048, "n_ubatch": 512},
                  precision={"weights": "gguf_q8_0"}, flash=False),
        "WizardLM-2 7B is Mistral 7B v0.1's architecture; llama.cpp's buffers do not depend on "
        "the card (a 2080 Ti 22GB here; a 24 GB card stands in)",
        [("model buffer", WEIGHTS, "model_buffer_mib", MIB),
         ("kv buffer", KV_BYTES, "kv_buffer_mib", MIB),
         ("compute buffer", ACTIVATIONS, "compute_buffer_mib", MIB)]),
    "llama_cpp-b7495-qwen3-0.6b-q8_0-draft-rtx3090-18258": (
        inference({"hf_config": QWEN3_06B}, "rtx-3090-24gb", "llama_cpp",
                  {"version": "7495", "n_ctx": 20224, "n_batch": 20224, "n_ubatch": 512,
                   "cache_type_k": "q8_0", "cache_type_v": "q8_0"},
                  precision={"weights": "gguf_q8_0"}, flash=True),
        "the draft model's context (28 layers) of a speculative-decoding run",
        [("kv buffer", KV_BYTES, "kv_buffer_mib", MIB),
         ("compute buffer", ACTIVATIONS, "compute_buffer_mib", MIB)]),
    "llama_cpp-unk-unknown-7b-class-gpu-unknown-ctx2048-logdetective106": (
        inference({"hf_config": MISTRAL_NO_SWA}, "rtx-3090-24gb", "llama_cpp",
                  {"n_ctx": 2048, "n_batch": 512, "n_ubatch": 512},
                  precision={"weights": "gguf_q4_k_m"}, flash=False),
        "model not named: a 32-layer, 8-KV-head 7B (128 KiB of f16 KV a token) whose 164 MiB "
        "compute buffer rules out Llama 3's 128K vocabulary; Mistral 7B's geometry taken",
        [("kv buffer", KV_BYTES, "kv_buffer_mib", MIB),
         ("compute buffer", ACTIVATIONS, "compute_buffer_mib", MIB)]),
    "llama_cpp-unk-unknown-7b-class-gpu-unknown-ctx32768-logdetective106": (
        inference({"hf_config": MISTRAL_NO_SWA}, "rtx-3090-24gb", "llama_cpp",
                  {"n_ctx": 32768, "n_batch": 512, "n_ubatch": 512},
                  precision={"weights": "gguf_q4_k_m"}, flash=False),
        "as the 2048-token run",
        [("kv buffer", KV_BYTES, "kv_buffer_mib", MIB),
         ("compute buffer", ACTIVATIONS, "compute_buffer_mib", MIB)]),
    "llama_cpp-1e0e873c-llava-7b-q5_k-rtx3090-3616": (
        inference({"preset": "llama-2-7b"}, "rtx-3090-24gb", "llama_cpp",
                  {"n_ctx": 2048, "n_batch": 512, "n_ubatch": 512},
                  precision={"weights": "gguf_q5_k_m"}, flash=False),
        "LLaVA 7B's language model is Llama 2 7B's architecture (512 KiB of f16 KV a token); "
        "2023 llama.cpp: n_batch 512, no flash attention",
        [("kv buffer", KV_BYTES, "kv_buffer_mib", MIB),
         ("compute buffer", ACTIVATIONS, "compute_buffer_mib", MIB)]),
})


def main():
    logs = []
    abouts = []
    for path in ["tests/reference/engine_logs_vllm.json", "tests/reference/engine_logs_other.json"]:
        data = json.load(open(path))
        abouts.append(data["about"])
        logs.extend(data["logs"])
    ids = {log["id"] for log in logs}
    missing = set(RUNS) - ids
    assert not missing, missing
    for log in logs:
        run = RUNS.get(log["id"])
        if run is None:
            continue
        request, assumed, checks = run
        log["request"] = request
        log["assumed"] = assumed
        log["checks"] = []
        for what, pointer, key, scale in checks:
            value = log["measured"].get(key)
            assert value is not None, (log["id"], key)
            log["checks"].append({"what": what, "compare": pointer, "measured": value * scale})
    out = {"about": "Serving engines' start-up logs from public issue threads, pull requests, "
                    "blog pages and one public benchmark repository, none on shared/"
                    "RESERVED.md, gathered in 2026-12 (issue #17). Built by tests/reference/"
                    "engine_logs_build.py from the two files beside it: " + " | ".join(abouts),
           "logs": logs}
    with open("tests/reference/engine_logs.json", "w") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")
    scored = sum(1 for log in logs if "checks" in log)
    print("%d logs, %d with a request" % (len(logs), scored))


if __name__ == "__main__":
    main()
