#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Mechanism probes for gpuplan's models, run once on one H200 (run.sh starts this file).

Every model is built from a config with random weights, directly on the GPU; nothing is
downloaded. Each probe runs in its own try/except and $OUT/probes.json is rewritten after every
probe and after most sub-measurements, so a probe that fails or is killed keeps what it had.
No new probe starts past PROBES_DEADLINE_S seconds (or when its estimate would end past
PROBES_HARD_S); the long loops inside probes stop at PROBES_HARD_S.

Keys carry their unit: _ms, _s, _bytes, _tflops, _gb_per_s, _tokens_per_s. Conventions (FLOP
counts, what each memory figure is) are written into probes.json under _meta.conventions.

Environment: OUT (folder for probes.json; default .), PROBES_DEADLINE_S (default 170),
PROBES_HARD_S (default deadline + 25), PROBES_ONLY (comma-separated probe names, optional),
PROBES_NO_HF_STATIC=1 (decode: skip transformers' StaticCache step).
"""
import contextlib
import gc
import json
import math
import os
import signal
import statistics
import sys
import time
import traceback

T0 = time.monotonic()
OUT = os.environ.get("OUT") or "."
DEADLINE_S = float(os.environ.get("PROBES_DEADLINE_S", "170"))
HARD_S = float(os.environ.get("PROBES_HARD_S", str(DEADLINE_S + 25)))
ONLY = [s.strip() for s in os.environ.get("PROBES_ONLY", "").split(",") if s.strip()]
PATH = os.path.join(OUT, "probes.json")
PEAK_BF16_DENSE_TFLOPS = 989.0  # H100/H200 SXM dense bf16 (no sparsity)

torch = None  # imported in main(), so that --help-less failures still write probes.json
F = None
BF16 = None
CURRENT = [None]

RESULTS = {
    "_meta": {
        "started_unix_s": time.time(),
        "deadline_s": DEADLINE_S,
        "hard_s": HARD_S,
        "only": ONLY,
        "conventions": {
            "gemm": "out[M,N] = a[M,K] @ w[N,K].t() (nn.Linear's layout); FLOPs 2*M*N*K; "
                    "time = CUDA events around `iters` back-to-back calls after 3 warm-up calls, "
                    "mean per call",
            "fp8_gemm": "torch._scaled_mm(a_e4m3[M,K] row-major, w_e4m3[N,K].t() column-major, "
                        "per-tensor fp32 scales of 1.0, out_dtype bf16), use_fast_accum both ways",
            "attention": "F.scaled_dot_product_attention(q,k,v,is_causal=True), bf16, MHA, "
                         "[b,h,s,d] with b*s = 32768 tokens and h*d = 4096; causal forward "
                         "FLOPs = 4*b*h*s*s*d/2; backward counted as 2.5x forward, so "
                         "fwd+bwd FLOPs = 3.5x forward (FlashAttention's benchmark convention); "
                         "forward timed with autograd enabled (training forward)",
            "training_flops_per_token": "6*N + 12*layers*hidden*seq (the attention term "
                                        "without causal halving); N = parameters used in "
                                        "matmuls: all parameters, less the input embedding "
                                        "when it is not tied to lm_head; MFU against "
                                        f"{PEAK_BF16_DENSE_TFLOPS} TFLOP/s dense bf16; "
                                        "recomputation is not counted (model FLOPs)",
            "memory": "torch.cuda.max_memory_allocated / memory_allocated (the caching "
                      "allocator's tensor bytes, no CUDA context); *_peak_* of a phase is read "
                      "after reset_peak_memory_stats() at the phase's start",
            "step_timing": "training steps: wall clock around each step with "
                           "torch.cuda.synchronize(); warm-up steps excluded; median reported",
        },
    }
}


# ----------------------------------------------------------------------------- bookkeeping


def elapsed():
    return time.monotonic() - T0


def log(*parts):
    print(f"[probes {elapsed():7.1f}s]", *parts, flush=True)


def clean(value):
    """JSON-safe copy: non-finite floats become None, unknown objects their str()."""
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return str(value)


def save():
    try:
        RESULTS["_meta"]["elapsed_s"] = elapsed()
        tmp = PATH + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(clean(RESULTS), f, indent=1)
        os.replace(tmp, PATH)
    except Exception as ex:  # never let bookkeeping kill a probe
        print("probes.json not written:", repr(ex), flush=True)


def on_signal(signum, _frame):
    name = CURRENT[0]
    if name and isinstance(RESULTS.get(name), dict):
        RESULTS[name]["status"] = "killed"
        RESULTS[name]["error"] = f"signal {signum} at {elapsed():.1f}s"
    RESULTS["_meta"]["killed_at_s"] = elapsed()
    save()
    os._exit(124)


def error_text(ex):
    return f"{type(ex).__name__}: {ex}"[:1500]


def time_left():
    return HARD_S - elapsed()


def cleanup():
    try:
        gc.collect()
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    except Exception as ex:
        log("cleanup failed:", error_text(ex))


def allocated():
    return torch.cuda.memory_allocated()


def peak():
    return torch.cuda.max_memory_allocated()


def reset_peak():
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()


def events_ms(fn, warmup, iters):
    """Mean GPU time of one call over `iters` back-to-back calls (CUDA events)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / iters


def wall_ms(fn, iters):
    """Wall time of each call, synchronised before and after."""
    times = []
    for _ in range(iters):
        torch.cuda.synchronize()
        t = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t) * 1e3)
    return times


def tensor_bytes(tensors):
    return sum(t.numel() * t.element_size() for t in tensors if t is not None)


def optimizer_state_bytes(opt):
    total = 0
    for state in opt.state.values():
        for v in state.values():
            if torch.is_tensor(v):
                total += v.numel() * v.element_size()
    return total


# ----------------------------------------------------------------------------- models

LLAMA_1B = dict(vocab_size=128256, hidden_size=2048, intermediate_size=8192,
                num_hidden_layers=16, num_attention_heads=32, num_key_value_heads=8,
                head_dim=64, tie_word_embeddings=True, max_position_embeddings=8192,
                use_cache=False)
LLAMA_3B = dict(vocab_size=128256, hidden_size=3072, intermediate_size=8192,
                num_hidden_layers=28, num_attention_heads=24, num_key_value_heads=8,
                head_dim=128, tie_word_embeddings=True, max_position_embeddings=8192,
                use_cache=False)
LLAMA_8B = dict(vocab_size=128256, hidden_size=4096, intermediate_size=14336,
                num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8,
                head_dim=128, tie_word_embeddings=False, max_position_embeddings=8192)
LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def make_config(cls, **kw):
    """cls(**kw); where the config class refuses a key (transformers 5's strict dataclass
    configs), builds it from the keys it declares and sets the rest as attributes."""
    try:
        return cls(**kw), {}
    except Exception as first:
        import dataclasses
        import inspect
        names = set()
        try:
            names = {f.name for f in dataclasses.fields(cls)}
        except TypeError:
            try:
                names = set(inspect.signature(cls.__init__).parameters)
            except (TypeError, ValueError):
                names = set()
        base = {k: v for k, v in kw.items() if k in names}
        config = cls(**base)
        late = []
        for k, v in kw.items():
            if k not in base:
                try:
                    setattr(config, k, v)
                    late.append(k)
                except Exception as ex:
                    late.append(f"{k} (not set: {error_text(ex)})")
        return config, {"config_first_attempt_error": error_text(first),
                        "config_keys_set_as_attributes": late}


def llama_config(kw):
    from transformers import LlamaConfig
    return make_config(LlamaConfig, **kw)


def build_lm(config, dtype, attn="sdpa"):
    """AutoModelForCausalLM.from_config built on the GPU (torch.device context): random init
    happens there, not on the CPU."""
    from transformers import AutoModelForCausalLM
    info = {}
    t = time.perf_counter()
    with torch.device("cuda"):
        try:
            model = AutoModelForCausalLM.from_config(config, dtype=dtype, attn_implementation=attn)
            info["dtype_kwarg"] = "dtype"
        except TypeError as ex:  # transformers before 4.56 knows only torch_dtype
            info["dtype_kwarg_error"] = error_text(ex)
            model = AutoModelForCausalLM.from_config(config, torch_dtype=dtype,
                                                     attn_implementation=attn)
            info["dtype_kwarg"] = "torch_dtype"
    first = next(model.parameters())
    if first.device.type != "cuda":
        info["built_on"] = str(first.device)
        model.to("cuda")
    if first.dtype != dtype:
        info["built_dtype"] = str(first.dtype)
        model.to(dtype)
    torch.cuda.synchronize()
    info["build_s"] = time.perf_counter() - t
    info["model_class"] = type(model).__name__
    info["params"] = sum(p.numel() for p in model.parameters())
    info["param_bytes"] = tensor_bytes(model.parameters())
    info["attn_implementation"] = getattr(model.config, "_attn_implementation", None)
    return model, info


def matmul_params(model):
    """Parameters used in matmuls: all of them, less the input embedding when untied."""
    total = sum(p.numel() for p in model.parameters())
    emb = model.get_input_embeddings().weight
    head = model.get_output_embeddings()
    tied = head is not None and head.weight.data_ptr() == emb.data_ptr()
    return total - (0 if tied else emb.numel()), tied


def causal_lm_loss(model, ids, autocast=False):
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
        return model(input_ids=ids, labels=ids, use_cache=False).loss


# ----------------------------------------------------------------------------- probes


def probe_env(e):
    import importlib
    import platform
    e["python"] = sys.version
    e["platform"] = platform.platform()
    e["torch"] = torch.__version__
    e["cuda_runtime"] = torch.version.cuda
    e["cudnn"] = torch.backends.cudnn.version()
    e["nccl"] = None
    with contextlib.suppress(Exception):
        e["nccl"] = str(torch.cuda.nccl.version())
    import importlib.util
    for name in ("bitsandbytes", "flash_attn", "kernels", "vllm"):  # present or not; not imported
        with contextlib.suppress(Exception):
            e[f"{name}_installed"] = importlib.util.find_spec(name) is not None
    for name in ("transformers", "peft", "accelerate", "triton", "numpy"):
        t = time.perf_counter()
        try:
            mod = importlib.import_module(name)
            e[f"{name}_version"] = getattr(mod, "__version__", "?")
            e[f"{name}_import_s"] = time.perf_counter() - t
        except Exception as ex:
            e[f"{name}_version"] = None
            e[f"{name}_import_error"] = error_text(ex)[:200]
    props = torch.cuda.get_device_properties(0)
    e["device_name"] = props.name
    e["device_count"] = torch.cuda.device_count()
    e["capability"] = list(torch.cuda.get_device_capability(0))
    e["sm_count"] = props.multi_processor_count
    e["total_memory_bytes"] = props.total_memory
    e["l2_cache_bytes"] = getattr(props, "L2_cache_size", None)
    free, total = torch.cuda.mem_get_info()
    e["mem_get_info_free_bytes"], e["mem_get_info_total_bytes"] = free, total
    e["used_outside_allocator_bytes"] = total - free - torch.cuda.memory_reserved()
    e["bf16_supported"] = torch.cuda.is_bf16_supported()
    e["float32_matmul_precision"] = torch.get_float32_matmul_precision()
    sdp = {}
    for flag in ("flash_sdp_enabled", "mem_efficient_sdp_enabled", "math_sdp_enabled",
                 "cudnn_sdp_enabled", "is_flash_attention_available"):
        fn = getattr(torch.backends.cuda, flag, None)
        try:
            sdp[flag] = fn() if fn else None
        except Exception as ex:
            sdp[flag] = error_text(ex)[:200]
    e["sdpa_flags"] = sdp
    e["alloc_conf"] = {k: os.environ.get(k) for k in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF")}
    with contextlib.suppress(Exception):
        e["fp8_dtypes"] = [n for n in ("float8_e4m3fn", "float8_e5m2") if hasattr(torch, n)]


def probe_gemm(e):
    shapes = [(2048, 2048), (4096, 4096), (14336, 4096), (4096, 14336), (8192, 8192),
              (28672, 8192), (1024, 4096), (512, 4096)]
    ms_list = [512, 2048, 8192, 16384]
    e["settings"] = {"m_tokens": ms_list, "n_k": shapes, "warmup": 3,
                     "iters": "max(10, min(200, 5e12 / flops))"}
    e["bf16"], e["fp8"] = [], []
    one = torch.tensor(1.0, device="cuda", dtype=torch.float32)
    e4m3 = getattr(torch, "float8_e4m3fn", None)

    def mm8(a8, w8, fast):
        r = torch._scaled_mm(a8, w8.t(), scale_a=one, scale_b=one, out_dtype=BF16,
                             use_fast_accum=fast)
        return r[0] if isinstance(r, tuple) else r  # torch <= 2.3 answered (out, amax)

    fp8_ok = False
    try:
        a = torch.randn(64, 64, device="cuda").to(e4m3)
        w = torch.randn(64, 64, device="cuda").to(e4m3)
        out = mm8(a, w, False)
        torch.cuda.synchronize()
        fp8_ok = tuple(out.shape) == (64, 64)
        e["fp8_check"] = {"ok": fp8_ok, "out_dtype": str(out.dtype)}
    except Exception as ex:
        e["fp8_check"] = {"ok": False, "error": error_text(ex)}
    for n, k in shapes:
        if time_left() < 5:
            e["truncated_at"] = [n, k]
            break
        w = torch.randn(n, k, device="cuda", dtype=BF16)
        w8 = w.to(e4m3) if fp8_ok else None
        for m in ms_list:
            a = torch.randn(m, k, device="cuda", dtype=BF16)
            flops = 2 * m * n * k
            iters = int(max(10, min(200, 5e12 / flops)))
            row = {"m": m, "n": n, "k": k, "iters": iters}
            try:
                t = events_ms(lambda: torch.matmul(a, w.t()), 3, iters)
                row.update(ms=t, tflops=flops / t / 1e9)
            except Exception as ex:
                row["error"] = error_text(ex)
            e["bf16"].append(row)
            if fp8_ok:
                a8 = a.to(e4m3)
                for fast in (False, True):
                    row8 = {"m": m, "n": n, "k": k, "iters": iters, "use_fast_accum": fast}
                    try:
                        t = events_ms(lambda: mm8(a8, w8, fast), 3, iters)
                        row8.update(ms=t, tflops=flops / t / 1e9)
                    except Exception as ex:
                        row8["error"] = error_text(ex)
                    e["fp8"].append(row8)
                a8 = None
            a = None
        w = w8 = None
        save()


def probe_attention(e):
    from torch.nn.functional import scaled_dot_product_attention as sdpa
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except Exception as ex:
        SDPBackend = sdpa_kernel = None
        e["sdpa_kernel_import_error"] = error_text(ex)
    tokens, hidden = 32768, 4096
    e["settings"] = {"tokens": tokens, "hidden": hidden, "causal": True, "dtype": "bf16",
                     "warmup": 2, "iters": 5}
    e["rows"] = []
    backends = ["default"] + ([] if SDPBackend is None else
                              ["FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION"])
    for d in (128, 64):
        h = hidden // d
        for s in (1024, 4096, 16384):
            if time_left() < 5:
                e["truncated_at"] = [d, s]
                break
            b = tokens // s
            q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=BF16, requires_grad=True)
                       for _ in range(3))
            go = torch.randn(b, h, s, d, device="cuda", dtype=BF16)
            fwd_flops = 4 * b * h * s * s * d / 2

            def fwd():
                return sdpa(q, k, v, is_causal=True)

            def fwd_bwd():
                o = sdpa(q, k, v, is_causal=True)
                torch.autograd.grad(o, (q, k, v), go)

            row = {"b": b, "h": h, "s": s, "d": d, "fwd_flops": fwd_flops}
            for name in backends:
                ctx = (contextlib.nullcontext() if name == "default"
                       else sdpa_kernel([getattr(SDPBackend, name)]))
                try:
                    with ctx:
                        fms = events_ms(fwd, 2, 5)
                        fbms = events_ms(fwd_bwd, 2, 5)
                    r = {"fwd_ms": fms, "fwd_tflops": fwd_flops / fms / 1e9,
                         "fwd_bwd_ms": fbms, "fwd_bwd_tflops": 3.5 * fwd_flops / fbms / 1e9}
                    if fbms > fms:
                        r["bwd_ms"] = fbms - fms
                        r["bwd_tflops"] = 2.5 * fwd_flops / (fbms - fms) / 1e9
                    row[name] = r
                except Exception as ex:
                    row[name] = {"error": error_text(ex)[:400]}
            # Which backend the default picked: the forced backend whose time is closest, and
            # (at s=4096) the kernel names the profiler saw.
            dflt = row.get("default", {}).get("fwd_bwd_ms")
            if dflt:
                close = [(abs(row[n]["fwd_bwd_ms"] - dflt) / dflt, n) for n in backends[1:]
                         if "fwd_bwd_ms" in row.get(n, {})]
                if close:
                    row["default_closest_backend"] = min(close)[1]
            if s == 4096:
                try:
                    from torch.profiler import ProfilerActivity, profile
                    with profile(activities=[ProfilerActivity.CUDA]) as prof:
                        fwd_bwd()
                        torch.cuda.synchronize()
                    names = sorted({evt.key for evt in prof.key_averages()})
                    keys = ("flash", "fmha", "cudnn", "attention", "attn", "sdpa", "efficient",
                            "mha", "softmax", "cutlass")
                    row["default_kernels"] = [n[:160] for n in names
                                              if any(t in n.lower() for t in keys)][:16]
                except Exception as ex:
                    row["profiler_error"] = error_text(ex)[:300]
            e["rows"].append(row)
            q = k = v = go = None
            save()


def probe_adamw(e):
    ids = torch.randint(0, LLAMA_1B["vocab_size"], (1, 1024), device="cuda")
    e["settings"] = {"model": "llama-3.2-1b shape (tied embeddings)", "micro_batch": 1,
                     "seq_len": 1024, "lr": 1e-5, "steps": 2,
                     "note": "step 1 creates the optimizer state (its peak includes it); "
                             "step 2 shows the pure temporaries: step_peak - after_backward "
                             "(state already there)"}
    e["variants"] = {}

    def run(model, opt, autocast):
        steps = []
        for _ in range(2):
            r = {}
            reset_peak()
            r["before_forward_allocated_bytes"] = allocated()
            t = time.perf_counter()
            loss = causal_lm_loss(model, ids, autocast)
            torch.cuda.synchronize()
            r["forward_ms"] = (time.perf_counter() - t) * 1e3
            r["forward_peak_allocated_bytes"] = peak()
            r["after_forward_allocated_bytes"] = allocated()
            reset_peak()
            t = time.perf_counter()
            loss.backward()
            del loss
            torch.cuda.synchronize()
            r["backward_ms"] = (time.perf_counter() - t) * 1e3
            r["backward_peak_allocated_bytes"] = peak()
            r["after_backward_allocated_bytes"] = allocated()
            r["grad_bytes"] = tensor_bytes(p.grad for p in model.parameters())
            reset_peak()
            t = time.perf_counter()
            opt.step()
            torch.cuda.synchronize()
            r["optimizer_step_ms"] = (time.perf_counter() - t) * 1e3
            r["step_peak_allocated_bytes"] = peak()
            r["after_step_allocated_bytes"] = allocated()
            r["step_peak_over_after_backward_bytes"] = (r["step_peak_allocated_bytes"]
                                                       - r["after_backward_allocated_bytes"])
            r["step_peak_over_after_step_bytes"] = (r["step_peak_allocated_bytes"]
                                                   - r["after_step_allocated_bytes"])
            r["optimizer_state_bytes"] = optimizer_state_bytes(opt)
            opt.zero_grad(set_to_none=True)
            steps.append(r)
        return steps

    plans = [("bf16", "bf16_foreach", {"foreach": True}),
             ("bf16", "bf16_fused", {"fused": True}),
             ("bf16", "bf16_forloop", {"foreach": False}),
             ("fp32", "fp32_autocast_bf16_fused", {"fused": True}),
             ("fp32", "fp32_autocast_bf16_foreach", {"foreach": True})]
    model, built, opt = None, None, None
    for dtype_name, name, kwargs in plans:
        if time_left() < 8:
            e["truncated_at"] = name
            break
        v = {"param_dtype": dtype_name, "optimizer_kwargs": kwargs}
        e["variants"][name] = v
        opt = None
        try:
            if built != dtype_name:
                model = None
                cleanup()
                config, notes = llama_config(LLAMA_1B)
                model, info = build_lm(config, BF16 if dtype_name == "bf16" else torch.float32)
                info.update(notes)
                e[f"model_{dtype_name}"] = info
                built = dtype_name
                model.train()
            v["param_bytes"] = tensor_bytes(model.parameters())
            opt = torch.optim.AdamW(model.parameters(), lr=1e-5, **kwargs)
            v["optimizer_defaults"] = {k: opt.defaults.get(k) for k in ("foreach", "fused")}
            v["steps"] = run(model, opt, autocast=dtype_name == "fp32")
        except Exception as ex:
            v["error"] = error_text(ex)
            v["traceback"] = traceback.format_exc()[-2000:]
        opt = None
        if model is not None:
            model.zero_grad(set_to_none=True)
        cleanup()
        save()
    model = None


def probe_peft(e):
    import peft
    from peft import LoraConfig, get_peft_model
    e["peft_version"] = peft.__version__
    mb, seq = 4, 1024
    ids = torch.randint(0, LLAMA_1B["vocab_size"], (mb, seq), device="cuda")
    e["settings"] = {"model": "llama-3.2-1b shape, bf16", "micro_batch": mb, "seq_len": seq,
                     "lora_r": 16, "lora_alpha": 32, "lora_dropout": 0.0,
                     "targets": LORA_TARGETS, "gradient_checkpointing": False,
                     "timed_steps": 3, "warmup_steps": 1,
                     "saved_activation_bytes": "memory_allocated after forward (loss alive) "
                                               "minus before forward"}
    e["variants"] = {}
    for name in ("lora_default", "lora_autocast_adapter_dtype_false", "frozen_input_requires_grad"):
        if time_left() < 8:
            e["truncated_at"] = name
            break
        v = {}
        e["variants"][name] = v
        model = pm = opt = None
        try:
            config, notes = llama_config(LLAMA_1B)
            model, info = build_lm(config, BF16)
            v["model"] = info
            v["model"].update(notes)
            seen = []
            if name.startswith("lora"):
                lcfg = LoraConfig(r=16, lora_alpha=32, lora_dropout=0.0,
                                  target_modules=LORA_TARGETS, task_type="CAUSAL_LM")
                if name == "lora_default":
                    pm = get_peft_model(model, lcfg)
                else:
                    try:
                        pm = get_peft_model(model, lcfg, autocast_adapter_dtype=False)
                    except TypeError as ex:
                        v["unsupported"] = error_text(ex)
                        continue
                lora_a = None
                for mod_name, mod in pm.named_modules():
                    la = getattr(mod, "lora_A", None)
                    if la is not None and hasattr(la, "keys") and "default" in la.keys():
                        lora_a = la["default"]
                        v["hooked_module"] = mod_name
                        v["base_layer_dtype"] = str(mod.base_layer.weight.dtype)
                        break
                if lora_a is not None:
                    v["adapter_dtype"] = str(lora_a.weight.dtype)
                    lora_a.register_forward_pre_hook(
                        lambda m, args: seen.append(str(args[0].dtype)) if len(seen) < 4 else None)
                trainable = [p for p in pm.parameters() if p.requires_grad]
                v["trainable_params"] = sum(p.numel() for p in trainable)
                v["trainable_bytes"] = tensor_bytes(trainable)
                v["trainable_dtypes"] = sorted({str(p.dtype) for p in trainable})
                opt = torch.optim.AdamW(trainable, lr=1e-4)
            else:
                pm = model
                pm.requires_grad_(False)
                try:
                    pm.enable_input_require_grads()
                    v["input_grads_by"] = "enable_input_require_grads"
                except Exception as ex:
                    v["enable_input_require_grads_error"] = error_text(ex)
                    pm.get_input_embeddings().register_forward_hook(
                        lambda m, i, o: o.requires_grad_(True))
                    v["input_grads_by"] = "forward hook on the embedding"
                v["trainable_params"] = 0
            pm.train()

            def step():
                loss = pm(input_ids=ids, labels=ids, use_cache=False).loss
                loss.backward()
                if opt is not None:
                    opt.step()
                    opt.zero_grad(set_to_none=True)

            step()  # warm-up (creates the optimizer state)
            torch.cuda.synchronize()
            reset_peak()
            before = allocated()
            v["before_forward_allocated_bytes"] = before
            loss = pm(input_ids=ids, labels=ids, use_cache=False).loss
            torch.cuda.synchronize()
            v["forward_peak_over_before_bytes"] = peak() - before
            v["saved_activation_bytes"] = allocated() - before
            reset_peak()
            loss.backward()
            del loss
            torch.cuda.synchronize()
            v["backward_peak_over_before_bytes"] = peak() - before
            if opt is not None:
                opt.step()
                opt.zero_grad(set_to_none=True)
            v["lora_A_input_dtypes_seen"] = seen[:4]
            times = wall_ms(step, 3)
            v["step_ms_all"] = times
            v["step_ms"] = statistics.median(times)
            v["tokens_per_s"] = mb * seq / (v["step_ms"] / 1e3)
        except Exception as ex:
            v["error"] = error_text(ex)
            v["traceback"] = traceback.format_exc()[-2000:]
        finally:
            opt = pm = model = None
            cleanup()
            save()


def probe_train_speed(e):
    e["settings"] = {"dtype": "bf16 parameters (pure bf16)", "optimizer": "AdamW fused=True",
                     "attn_implementation": "sdpa", "warmup_steps": 2, "timed_steps": 5,
                     "checkpointing": "model.gradient_checkpointing_enable(use_reentrant=False)",
                     "peak_tflops": PEAK_BF16_DENSE_TFLOPS}
    e["rows"] = []
    for label, cfg in (("llama_1b", LLAMA_1B), ("llama_3b", LLAMA_3B)):
        if elapsed() > DEADLINE_S or time_left() < 15:
            e["truncated_at"] = label
            break
        model = opt = None
        try:
            config, notes = llama_config(cfg)
            model, info = build_lm(config, BF16)
            info.update(notes)
            e[f"model_{label}"] = info
            n_mm, tied = matmul_params(model)
            info["matmul_params"], info["tied_embeddings"] = n_mm, tied
            opt = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True)
            model.train()
            for mb, seq in ((4, 2048), (8, 2048)):
                for ckpt in (False, True):
                    if time_left() < 6:
                        e["truncated_at"] = [label, mb, seq, ckpt]
                        break
                    row = {"model": label, "micro_batch": mb, "seq_len": seq,
                           "gradient_checkpointing": ckpt}
                    e["rows"].append(row)
                    try:
                        if ckpt:
                            model.gradient_checkpointing_enable(
                                gradient_checkpointing_kwargs={"use_reentrant": False})
                        else:
                            model.gradient_checkpointing_disable()
                        ids = torch.randint(0, cfg["vocab_size"], (mb, seq), device="cuda")

                        def step():
                            loss = model(input_ids=ids, labels=ids, use_cache=False).loss
                            loss.backward()
                            opt.step()
                            opt.zero_grad(set_to_none=True)

                        wall_ms(step, 2)
                        reset_peak()
                        times = wall_ms(step, 5)
                        step_ms = statistics.median(times)
                        tps = mb * seq / (step_ms / 1e3)
                        fpt = 6 * n_mm + 12 * cfg["num_hidden_layers"] * cfg["hidden_size"] * seq
                        row.update(step_ms=step_ms, step_ms_all=times, tokens_per_s=tps,
                                   flops_per_token=fpt,
                                   achieved_tflops=fpt * tps / 1e12,
                                   mfu=fpt * tps / (PEAK_BF16_DENSE_TFLOPS * 1e12),
                                   peak_allocated_bytes=peak(),
                                   peak_reserved_bytes=torch.cuda.max_memory_reserved())
                    except Exception as ex:
                        row["error"] = error_text(ex)
                    finally:
                        ids = None
                        if opt is not None:
                            opt.zero_grad(set_to_none=True)
                        cleanup()
                        save()
        except Exception as ex:
            e[f"error_{label}"] = error_text(ex)
            e[f"traceback_{label}"] = traceback.format_exc()[-2000:]
        finally:
            opt = model = None
            cleanup()
            save()


def probe_moe(e):
    from transformers import Qwen3Config, Qwen3MoeConfig
    mb, seq = 4, 2048
    common = dict(vocab_size=151936, hidden_size=2048, num_hidden_layers=4,
                  num_attention_heads=32, num_key_value_heads=4, head_dim=128,
                  tie_word_embeddings=False, max_position_embeddings=8192, use_cache=False)
    moe_kw = dict(common, intermediate_size=6144, moe_intermediate_size=768, num_experts=128,
                  num_experts_per_tok=8, norm_topk_prob=True, decoder_sparse_step=1,
                  mlp_only_layers=[], output_router_logits=False)
    dense_kw = dict(common, intermediate_size=8 * 768)
    e["settings"] = {"widths": "Qwen3-30B-A3B (hidden 2048, 128 experts of 768, top-8, "
                               "32 heads, 4 KV heads, head_dim 128), 4 layers",
                     "micro_batch": mb, "seq_len": seq, "dtype": "bf16",
                     "measured": "forward + backward (loss from labels), no optimizer",
                     "warmup_steps": 2, "timed_steps": 3,
                     "dense_twin": "Qwen3 with intermediate 8*768 = 6144 (same active FLOPs)"}
    ids = torch.randint(0, 151936, (mb, seq), device="cuda")
    tokens = mb * seq
    e["batched_mm_skipped"] = ("batched_mm copies each token's expert weights: "
                               f"{tokens} tokens x 8 experts x 3 x 2048 x 768 x 2 bytes = "
                               f"{tokens * 8 * 3 * 2048 * 768 * 2 / 1e9:.0f} GB")

    def time_fwd_bwd(model):
        def step():
            loss = model(input_ids=ids, labels=ids, use_cache=False).loss
            loss.backward()
            model.zero_grad(set_to_none=True)
        wall_ms(step, 2)
        reset_peak()
        times = wall_ms(step, 3)
        return {"step_ms": statistics.median(times), "step_ms_all": times,
                "tokens_per_s": tokens / (statistics.median(times) / 1e3),
                "peak_allocated_bytes": peak()}

    model = None
    try:
        config, notes = make_config(Qwen3MoeConfig, **moe_kw)
        model, info = build_lm(config, BF16)
        info.update(notes)
        e["moe_model"] = info
        layer = model.model.layers[0]
        mlp = layer.mlp
        e["moe_block_class"] = type(mlp).__name__
        e["moe_block_module"] = type(mlp).__module__
        experts = getattr(mlp, "experts", None)
        e["experts_class"] = type(experts).__name__ if experts is not None else None
        e["experts_params"] = [[n, list(p.shape)] for n, p in mlp.named_parameters()][:8]
        e["q_proj_out_features"] = getattr(layer.self_attn.q_proj, "out_features", None)
        e["config_expert_attrs"] = {k: repr(v)[:120] for k, v in vars(config).items()
                                    if "expert" in k.lower() or "moe" in k.lower()}
        e["config_experts_implementation"] = getattr(model.config, "_experts_implementation",
                                                     "attribute absent")
        getter = getattr(model, "get_experts_implementation", None)
        if getter is not None:
            with contextlib.suppress(Exception):
                e["get_experts_implementation"] = getter()
        e["has_set_experts_implementation"] = hasattr(model, "set_experts_implementation")
        try:
            from transformers.integrations import moe as hf_moe
            registry = getattr(hf_moe, "ALL_EXPERTS_FUNCTIONS", None)
            if registry is not None:
                e["registered_experts_implementations"] = sorted(
                    getattr(registry, "_global_mapping", {}).keys()
                    or [k for k in dir(registry) if not k.startswith("_")])[:20]
        except Exception as ex:
            e["experts_registry_error"] = error_text(ex)[:200]
        model.train()
        e["moe_runs"] = {}
        for impl in ("default", "eager", "grouped_mm"):
            if time_left() < 8:
                e["truncated_at"] = impl
                break
            r = {}
            e["moe_runs"][impl] = r
            try:
                if impl != "default":
                    if hasattr(model, "set_experts_implementation"):
                        model.set_experts_implementation(impl)
                        r["set_by"] = "set_experts_implementation"
                    else:
                        model.config._experts_implementation = impl
                        r["set_by"] = "config._experts_implementation"
                r["config_experts_implementation"] = getattr(model.config,
                                                             "_experts_implementation", None)
                r.update(time_fwd_bwd(model))
            except Exception as ex:
                r["error"] = error_text(ex)
                r["traceback"] = traceback.format_exc()[-1500:]
            cleanup()
            save()
    except Exception as ex:
        e["moe_error"] = error_text(ex)
        e["moe_traceback"] = traceback.format_exc()[-2000:]
    finally:
        model = None
        cleanup()
        save()
    if time_left() < 6:
        e["dense_skipped"] = "time"
        return
    try:
        config, notes = make_config(Qwen3Config, **dense_kw)
        model, info = build_lm(config, BF16)
        info.update(notes)
        e["dense_model"] = info
        model.train()
        e["dense_run"] = time_fwd_bwd(model)
    except Exception as ex:
        e["dense_error"] = error_text(ex)
        e["dense_traceback"] = traceback.format_exc()[-2000:]
    finally:
        model = None
        cleanup()


def make_static_cache(config, batch, max_len):
    """transformers 5: StaticCache(config=, max_cache_len=) (lazy, extra kwargs ignored);
    4.4x: also max_batch_size, device, dtype."""
    from transformers import StaticCache
    try:
        return StaticCache(config=config, max_cache_len=max_len, max_batch_size=batch,
                           device="cuda", dtype=BF16), "config,max_cache_len,max_batch_size,device,dtype"
    except TypeError:
        return StaticCache(config=config, max_cache_len=max_len), "config,max_cache_len"


def static_step_factory(model, cache, tok, pos):
    """One decode step of transformers' forward on a StaticCache at a fixed position (the
    inputs are bound here, so each batch's step keeps its own cache and token)."""
    def step():
        return model(input_ids=tok, past_key_values=cache, cache_position=pos,
                     use_cache=True).logits
    return step


def capture_graph(fn):
    """Warm up on a side stream, then capture fn() into a CUDA graph; returns (graph, out)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = fn()
    torch.cuda.synchronize()
    return g, out


def probe_decode(e):
    ctx = 1024
    e["settings"] = {"model": "llama-3.1-8b shape, bf16, random init on the GPU",
                     "context_tokens": ctx, "batches": [1, 8, 32],
                     "decode_timing": "CUDA events over 20 steps after 3 warm-up steps "
                                      "(HF dynamic cache: 10 steps, the cache grows by one "
                                      "token each)",
                     "manual_step": "one decode step written by hand over the model's own "
                                    "modules: static K/V buffers of context+1 positions, "
                                    "index_copy_ at a device-side position, SDPA (GQA) over "
                                    "all positions, no mask, full-vocab logits for the new "
                                    "token; graph-capturable",
                     "bandwidth": "bytes read per step = parameters less the input embedding "
                                  "+ the K/V cache read; / step time"}
    config, notes = llama_config(LLAMA_8B)
    model, info = build_lm(config, BF16)
    info.update(notes)
    e["model"] = info
    model.eval()
    cfg = model.config
    layers = model.model.layers
    L, H, KV = cfg.num_hidden_layers, cfg.num_attention_heads, cfg.num_key_value_heads
    D = getattr(cfg, "head_dim", None) or cfg.hidden_size // H
    emb_bytes = tensor_bytes([model.get_input_embeddings().weight])
    weight_read = info["param_bytes"] - emb_bytes
    e["weights_read_per_step_bytes"] = weight_read
    vocab = cfg.vocab_size

    # -- prefill: full-vocabulary logits for every position vs logits_to_keep=1
    e["prefill"] = {}
    ids8 = torch.randint(0, vocab, (8, ctx), device="cuda")
    for label, keep in (("all_positions", None), ("last_position_only", 1)):
        if time_left() < 10:
            break
        r = {"batch": 8, "prompt_tokens": ctx, "use_cache": False}
        e["prefill"][label] = r
        try:
            kw = {}
            if keep is not None:
                kw = {"logits_to_keep": keep}
            cleanup()
            with torch.no_grad():
                before = allocated()
                reset_peak()
                try:
                    out = model(input_ids=ids8, use_cache=False, **kw)
                except TypeError as ex:
                    if keep is None:
                        raise
                    r["logits_to_keep_error"] = error_text(ex)[:200]
                    kw = {"num_logits_to_keep": keep}
                    out = model(input_ids=ids8, use_cache=False, **kw)
                torch.cuda.synchronize()
                r["kwarg"] = next(iter(kw), None)
                r["peak_over_before_bytes"] = peak() - before
                r["logits_shape"] = list(out.logits.shape)
                r["logits_dtype"] = str(out.logits.dtype)
                r["logits_bytes"] = tensor_bytes([out.logits])
                del out
                times = wall_ms(lambda: model(input_ids=ids8, use_cache=False, **kw), 3)
                r["prefill_ms_all"] = times
                r["prefill_ms"] = statistics.median(times)
                r["prefill_tokens_per_s"] = 8 * ctx / (r["prefill_ms"] / 1e3)
        except Exception as ex:
            r["error"] = error_text(ex)
        cleanup()
        save()
    ids8 = None

    # -- hand-written decode step: eager vs CUDA graph
    def manual_step_factory(batch):
        kc = [torch.randn(batch, KV, ctx + 1, D, device="cuda", dtype=BF16) * 0.1
              for _ in range(L)]
        vc = [torch.randn(batch, KV, ctx + 1, D, device="cuda", dtype=BF16) * 0.1
              for _ in range(L)]
        pos = torch.tensor([ctx], device="cuda", dtype=torch.long)
        tok = torch.randint(0, vocab, (batch, 1), device="cuda")
        inv_freq = 1.0 / (10000.0 ** (torch.arange(0, D, 2, device="cuda",
                                                   dtype=torch.float32) / D))
        norm_eps = getattr(cfg, "rms_norm_eps", 1e-5)

        def rms(x, w):
            x32 = x.float()
            x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + norm_eps)
            return x32.to(BF16) * w

        def rope(x, cos, sin):
            x1, x2 = x[..., : D // 2], x[..., D // 2:]
            return x * cos + torch.cat((-x2, x1), dim=-1) * sin

        def attend(q, k, v):
            try:
                return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
            except TypeError:  # torch < 2.5
                rep = H // KV
                return F.scaled_dot_product_attention(q, k.repeat_interleave(rep, 1),
                                                      v.repeat_interleave(rep, 1))

        def step():
            h = model.model.embed_tokens(tok)
            f = pos.float()[:, None] * inv_freq[None, :]
            emb = torch.cat((f, f), dim=-1)
            cos, sin = emb.cos().to(BF16), emb.sin().to(BF16)
            for i, layer in enumerate(layers):
                a = layer.self_attn
                x = rms(h, layer.input_layernorm.weight)
                q = a.q_proj(x).view(batch, 1, H, D).transpose(1, 2)
                k = a.k_proj(x).view(batch, 1, KV, D).transpose(1, 2)
                v = a.v_proj(x).view(batch, 1, KV, D).transpose(1, 2)
                q, k = rope(q, cos, sin), rope(k, cos, sin)
                kc[i].index_copy_(2, pos, k)
                vc[i].index_copy_(2, pos, v)
                o = attend(q, kc[i], vc[i]).transpose(1, 2).reshape(batch, 1, H * D)
                h = h + a.o_proj(o)
                m = layer.mlp
                x = rms(h, layer.post_attention_layernorm.weight)
                h = h + m.down_proj(F.silu(m.gate_proj(x)) * m.up_proj(x))
            return model.lm_head(rms(h, model.model.norm.weight))

        kv_bytes = 2 * L * batch * KV * (ctx + 1) * D * 2
        return step, kv_bytes

    e["decode"] = {}
    for batch in (1, 8, 32):
        if time_left() < 12:
            e["decode_truncated_at"] = batch
            break
        r = {"batch": batch}
        e["decode"][str(batch)] = r
        # hand-written, eager then graph
        try:
            with torch.no_grad():
                step, kv_bytes = manual_step_factory(batch)
                r["kv_cache_bytes"] = kv_bytes
                t = events_ms(step, 3, 20)
                r["manual_eager_ms"] = t
                r["manual_eager_gb_per_s"] = (weight_read + kv_bytes) / t / 1e6
                try:
                    g, _ = capture_graph(step)
                    t = events_ms(g.replay, 3, 20)
                    r["manual_graph_ms"] = t
                    r["manual_graph_gb_per_s"] = (weight_read + kv_bytes) / t / 1e6
                    r["manual_graph_speedup"] = r["manual_eager_ms"] / t
                    del g
                except Exception as ex:
                    r["manual_graph_error"] = error_text(ex)
                    with contextlib.suppress(Exception):
                        torch.cuda.synchronize()
                step = None
        except Exception as ex:
            r["manual_error"] = error_text(ex)
        cleanup()
        save()
        # transformers' own forward with its default (dynamic) cache, as generate() runs it
        try:
            with torch.no_grad():
                ids = torch.randint(0, vocab, (batch, ctx), device="cuda")
                try:
                    out = model(input_ids=ids, use_cache=True, logits_to_keep=1)
                except TypeError:
                    out = model(input_ids=ids, use_cache=True)
                pkv = out.past_key_values
                r["hf_dynamic_cache_class"] = type(pkv).__name__
                tok = out.logits[:, -1:].argmax(-1)
                del out
                holder = [pkv]

                def hf_step():
                    o = model(input_ids=tok, past_key_values=holder[0], use_cache=True)
                    holder[0] = o.past_key_values

                for _ in range(3):
                    hf_step()
                torch.cuda.synchronize()
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                t = time.perf_counter()
                start.record()
                for _ in range(10):
                    hf_step()
                end.record()
                end.synchronize()
                r["hf_dynamic_eager_ms"] = start.elapsed_time(end) / 10
                r["hf_dynamic_eager_wall_ms"] = (time.perf_counter() - t) * 1e3 / 10
                holder = pkv = ids = tok = None
        except Exception as ex:
            r["hf_dynamic_error"] = error_text(ex)
        cleanup()
        save()
        # transformers with a StaticCache at a fixed shape (eager); the graph comes last below.
        # PROBES_NO_HF_STATIC=1 skips it: on transformers 5.17 its index_copy_ hit a device-side
        # assert that poisoned the CUDA context for every later batch (first run, 2026-12-04).
        try:
            if os.environ.get("PROBES_NO_HF_STATIC") == "1":
                raise RuntimeError("skipped: PROBES_NO_HF_STATIC=1")
            with torch.no_grad():
                cache, sig = make_static_cache(cfg, batch, ctx + 16)
                r["static_cache_signature"] = sig
                ids = torch.randint(0, vocab, (batch, ctx), device="cuda")
                cpos = torch.arange(ctx, device="cuda")
                try:
                    model(input_ids=ids, past_key_values=cache, cache_position=cpos,
                          use_cache=True, logits_to_keep=1)
                except TypeError:
                    model(input_ids=ids, past_key_values=cache, cache_position=cpos,
                          use_cache=True)
                ids = None
                hf_static_step = static_step_factory(
                    model, cache, torch.randint(0, vocab, (batch, 1), device="cuda"),
                    torch.tensor([ctx], device="cuda", dtype=torch.long))
                t = events_ms(hf_static_step, 3, 20)
                r["hf_static_eager_ms"] = t
                STATIC[batch] = hf_static_step
        except Exception as ex:
            r["hf_static_error"] = error_text(ex)
        cleanup()
        save()
    # transformers' forward captured as a CUDA graph (last: a failed capture must not spoil
    # the figures above)
    for batch, hf_static_step in list(STATIC.items()):
        r = e["decode"][str(batch)]
        if time_left() < 6:
            r["hf_static_graph_skipped"] = "time"
            continue
        try:
            with torch.no_grad():
                g, _ = capture_graph(hf_static_step)
                t = events_ms(g.replay, 3, 20)
                r["hf_static_graph_ms"] = t
                if r.get("hf_static_eager_ms"):
                    r["hf_static_graph_speedup"] = r["hf_static_eager_ms"] / t
                del g
        except Exception as ex:
            r["hf_static_graph_error"] = error_text(ex)
            with contextlib.suppress(Exception):
                torch.cuda.synchronize()
        hf_static_step = None
        STATIC.pop(batch, None)
        cleanup()
        save()
    STATIC.clear()
    model = layers = None
    cleanup()


STATIC = {}

PROBES = [  # name, function, estimated seconds on an H200
    ("env", probe_env, 8),
    ("gemm", probe_gemm, 10),
    ("attention", probe_attention, 12),
    ("adamw_step", probe_adamw, 15),
    ("peft_lora_cast", probe_peft, 14),
    ("train_speed", probe_train_speed, 40),
    ("moe_experts", probe_moe, 20),
    ("decode", probe_decode, 35),
]


def run_probe(name, fn, estimate_s):
    if ONLY and name not in ONLY:
        return
    if elapsed() > DEADLINE_S or elapsed() + estimate_s > HARD_S:
        RESULTS[name] = {"status": "skipped", "reason": "deadline",
                         "at_s": elapsed(), "estimated_s": estimate_s}
        log(f"{name}: skipped (deadline)")
        save()
        return
    entry = {"status": "running", "started_at_s": elapsed(), "estimated_s": estimate_s}
    RESULTS[name] = entry
    CURRENT[0] = name
    save()
    log(f"{name}: start (estimate {estimate_s}s)")
    t = time.monotonic()
    try:
        fn(entry)
        entry["status"] = "ok"
    except Exception as ex:
        entry["status"] = "error"
        entry["error"] = error_text(ex)
        entry["traceback"] = traceback.format_exc()[-3000:]
    entry["wall_s"] = time.monotonic() - t
    CURRENT[0] = None
    cleanup()
    save()
    log(f"{name}: {entry['status']} in {entry['wall_s']:.1f}s"
        + (f" ({entry.get('error')})" if entry.get("error") else ""))


def main():
    global torch, F, BF16
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    os.makedirs(OUT, exist_ok=True)
    save()
    t = time.perf_counter()
    try:
        import torch as _torch
        import torch.nn.functional as _F
        torch, F, BF16 = _torch, _F, _torch.bfloat16
        if not torch.cuda.is_available():
            raise RuntimeError("no CUDA device")
        torch.cuda.init()
        torch.zeros(1, device="cuda")
        torch.backends.cuda.matmul.allow_tf32 = False
    except Exception as ex:
        RESULTS["_meta"]["fatal"] = error_text(ex)
        save()
        log("fatal:", error_text(ex))
        return 1
    RESULTS["_meta"]["torch_import_and_cuda_init_s"] = time.perf_counter() - t
    for name, fn, estimate_s in PROBES:
        run_probe(name, fn, estimate_s)
    RESULTS["_meta"]["finished"] = True
    save()
    log("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
