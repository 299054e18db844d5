#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The program `gpuplan script` writes, kept as a Python file so it is compiled, linted and run
# as one (tests/script/template_test.py). The build embeds everything after the "settings end"
# line verbatim (cmake/EmbedScript.cmake); the engine (after/script.cpp) writes its own header
# and settings in place of the lines above it. The placeholders are what the engine wrote for a
# LoRA (rank 8 on q and v) of Llama 3.2 1B on one RTX 4090, so that the file runs as it stands;
# nothing reads them but the tests.
# gpuplan: settings begin
SETTINGS = {
    "kind": "lora",
    "model": "llama-3.2-1b",
    "model_type": "llama",
    "unbuildable": "",
    "config": {
     "architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 128256,
     "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16,
     "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 64,
     "tie_word_embeddings": True, "max_position_embeddings": 131072, "hidden_act": "silu",
     "rms_norm_eps": 1e-05, "rope_theta": 500000.0,
     "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                      "original_max_position_embeddings": 8192, "rope_type": "llama3"},
     "torch_dtype": "bfloat16"},
    "positions": 131072,
    "vocab": 128256,
    "moe": False,
    "weights": "bf16",
    "double_quant": True,
    "master_weights": "none",
    "kv_cache": "bf16",
    "optimizer": "adamw",
    "optimizer_kernel": "foreach",
    "micro_batch": 1,
    "seq_len": 2048,
    "grad_accum": 1,
    "recompute": "selective",
    "flash_attention": True,
    "chunked_loss": False,
    "lora_rank": 8,
    "lora_targets": ["q_proj", "v_proj"],
    "prompt_tokens": 1024,
    "output_tokens": 256,
    "concurrency": 1,
    "gpu": "rtx-4090-24gb",
    "serving": {"framework": "", "gpu_memory_utilization": None, "mem_fraction_static": None,
                "max_num_seqs": None, "max_num_batched_tokens": None, "max_model_len": 0,
                "enforce_eager": False, "n_gpu_layers": -1},
    "layout": {"gpus": 1, "tp": 1, "pp": 1, "cp": 1, "ep": 1, "zero": 0},
    "warmup_steps": 3,
    "measured_steps": 10,
}

ESTIMATE = {
    "params_total": 1235814400,
    "trainable_params": 851968,
    "peak_allocated_bytes": 8153862144,
    "peak_reserved_bytes": 8561555251.2,
    "step_s": 0.123,
    "tokens_per_s": 16653.0,
}
ESTIMATE_LAYOUT = {}
# gpuplan: settings end

import contextlib
import json
import os
import statistics
import sys
import time

FLOAT = {"fp32": "float32", "tf32": "float32", "bf16": "bfloat16", "fp16": "float16"}
TRAINING = ("pretrain", "full_finetune", "lora", "qlora")


def quantization_config(torch, s):
    w = s["weights"]
    if w in FLOAT:
        return None
    from transformers import BitsAndBytesConfig
    if w in ("nf4", "int4"):
        return BitsAndBytesConfig(load_in_4bit=True,
                                  bnb_4bit_quant_type="nf4" if w == "nf4" else "fp4",
                                  bnb_4bit_use_double_quant=s["double_quant"],
                                  bnb_4bit_compute_dtype=torch.bfloat16)
    if w == "int8":
        return BitsAndBytesConfig(load_in_8bit=True)
    sys.exit(f"weights {w}: this script builds float and bitsandbytes int8/int4/nf4 models; "
             f"measure {w} with its own runtime (GPTQ, AWQ, llama.cpp or an fp8 engine)")


# What a config.json holds that is not the architecture: the checkpoint's own quantisation (the
# request's weights format decides what is built), its dtype, remote code, bookkeeping.
NOT_ARCHITECTURE = ("quantization_config", "torch_dtype", "dtype", "architectures", "auto_map",
                    "_name_or_path", "transformers_version", "model_type", "text_config",
                    "vision_config", "audio_config")


def architecture(s):
    """The config transformers builds: the one the engine read (a multimodal wrapper's
    text_config: its language model alone), with room for the request's context."""
    if s["model_type"] is None:
        sys.exit(f"not measured: {s['unbuildable']}. Measuring a model of another "
                 "architecture would calibrate the estimate on something else")
    config = s["config"]
    if isinstance(config.get("text_config"), dict):
        config = config["text_config"]
    fields = {k: v for k, v in config.items() if k not in NOT_ARCHITECTURE}
    fields["max_position_embeddings"] = max(fields.get("max_position_embeddings") or 0,
                                            s["positions"])
    return fields


def as_declared(transformers, model_type, fields):
    """The config's fields with the types its transformers class declares. A whole float is
    written as an integer here (8.0 as 8, as JavaScript writes it), and transformers 5's
    configs are strict dataclasses that refuse an int where they declare a float
    (huggingface_hub's @strict): each such field is made a float again."""
    import typing
    try:
        hints = typing.get_type_hints(transformers.CONFIG_MAPPING[model_type])
    except Exception:  # an older transformers without annotations, or one it cannot resolve
        return fields
    out = dict(fields)
    for name, value in fields.items():
        hint = hints.get(name)
        if hint is None or isinstance(value, bool) or not isinstance(value, int):
            continue
        allowed = typing.get_args(hint) or (hint,)
        if float in allowed and int not in allowed:
            out[name] = float(value)
    return out


def dtype_argument(transformers):
    """transformers 4.56 renamed from_pretrained's and from_config's torch_dtype to dtype (the
    old name warns in 5)."""
    try:
        major, minor = (int(x) for x in transformers.__version__.split(".")[:2])
    except ValueError:
        return "dtype"
    return "dtype" if (major, minor) >= (4, 56) else "torch_dtype"


def build_model(torch, s):
    import transformers
    from transformers import AutoConfig, AutoModelForCausalLM
    compute = getattr(torch, FLOAT.get(s["weights"], "bfloat16"))
    if s["weights"] == "tf32":
        torch.backends.cuda.matmul.allow_tf32 = True
    # Mixed precision keeps fp32 parameters (the master copy) and runs matmuls under autocast.
    mixed = s["kind"] in ("pretrain", "full_finetune") and s["master_weights"] == "fp32"
    params = torch.float32 if mixed else compute
    attn = "sdpa" if s["flash_attention"] else "eager"
    try:
        fields = as_declared(transformers, s["model_type"], architecture(s))
        config = AutoConfig.for_model(s["model_type"], **fields)
    except (KeyError, ValueError) as e:
        sys.exit(f"not measured: transformers {transformers.__version__} has no model_type "
                 f"{s['model_type']!r} ({e}); a newer transformers may")
    quant = quantization_config(torch, s)
    dtype = dtype_argument(transformers)
    if quant is None:
        model = AutoModelForCausalLM.from_config(config, **{dtype: params},
                                                 attn_implementation=attn)
        model = model.to("cuda")
    else:
        # Quantised bases load only through from_pretrained: save random weights, reload them.
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            AutoModelForCausalLM.from_config(config, **{dtype: torch.bfloat16}).save_pretrained(tmp)
            model = AutoModelForCausalLM.from_pretrained(tmp, quantization_config=quant,
                                                         **{dtype: torch.bfloat16},
                                                         attn_implementation=attn,
                                                         device_map={"": torch.cuda.current_device()})
    return model, compute, mixed


def optimizer_class(torch, s):
    """The optimizer's class and its arguments (ZeroRedundancyOptimizer takes them apart)."""
    name, lr = s["optimizer"], 1e-5
    # torch.optim's implementation, as the engine estimated it: foreach (torch's default on
    # CUDA) takes each operation over every parameter at once, with temporaries to match;
    # fused updates in place; for_loop visits one parameter at a time.
    kernel = {"foreach": {"foreach": True}, "fused": {"fused": True},
              "for_loop": {"foreach": False}}[s["optimizer_kernel"]]
    if name in ("adamw", "adam"):
        return (torch.optim.AdamW if name == "adamw" else torch.optim.Adam), {"lr": lr, **kernel}
    if name in ("sgd", "sgd_momentum"):
        return torch.optim.SGD, {"lr": lr, "momentum": 0.9 if name == "sgd_momentum" else 0.0,
                                 **kernel}
    if name == "adafactor":
        from transformers.optimization import Adafactor
        return Adafactor, {"lr": lr, "scale_parameter": False, "relative_step": False}
    import bitsandbytes as bnb
    return {"adamw_8bit": bnb.optim.AdamW8bit, "paged_adamw_8bit": bnb.optim.PagedAdamW8bit,
            "lion": bnb.optim.Lion}[name], {"lr": lr}


def distributed(torch):
    """Under torchrun (WORLD_SIZE > 1) each process drives one GPU, joined by NCCL."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world == 1:
        return 0, 1
    import torch.distributed as dist
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group("nccl")
    return dist.get_rank(), world


def wrap(torch, s, model, zero):
    """Data parallel as the request shards it: ZeRO-3 as FSDP full shard, one unit per decoder
    layer; ZeRO 0-2 as DDP (ZeRO-1/2 shard the optimizer with ZeroRedundancyOptimizer)."""
    device = torch.cuda.current_device()
    if zero >= 3:
        if s["weights"] not in FLOAT:
            sys.exit("FSDP over a 4/8-bit base is not measured here: run it on one GPU")
        import functools
        from torch.distributed.fsdp import FullyShardedDataParallel
        if s["kind"] in ("lora", "qlora"):
            # FSDP flattens each layer's tensors into one, of one dtype: peft's fp32 adapters
            # join the base's dtype (the layout's estimate above counts them so).
            compute = getattr(torch, FLOAT[s["weights"]])
            for p in model.parameters():
                if p.requires_grad:
                    p.data = p.data.to(compute)
            print("note: under FSDP the LoRA adapters are kept in the base's dtype")
        from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy
        layers = {type(m) for m in model.modules() if type(m).__name__.endswith("DecoderLayer")}
        policy = functools.partial(transformer_auto_wrap_policy, transformer_layer_cls=layers)
        return FullyShardedDataParallel(model, auto_wrap_policy=policy, use_orig_params=True,
                                        device_id=device)
    from torch.nn.parallel import DistributedDataParallel
    return DistributedDataParallel(model, device_ids=[device])


def host_ram_share():
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            info = {line.split(":")[0]: int(line.split()[1]) for line in f}
        return 1 - info["MemAvailable"] / info["MemTotal"]
    except (OSError, KeyError, ValueError, IndexError):
        return None


def sample(torch, samples):
    # What to watch while a run goes (the usual targets: GPU memory 85%+, utilisation 90%+, host
    # RAM 70-80%), and clocks and temperature to catch throttling.
    free, total = torch.cuda.mem_get_info()
    row = {"gpu_memory_share": 1 - free / total, "host_ram_share": host_ram_share()}
    for name in ("utilization", "temperature", "clock_rate"):
        try:
            row[name] = getattr(torch.cuda, name)()
        except Exception:  # these read NVML through pynvml, which not every install has
            pass
    samples.append(row)


def monitored(samples):
    def values(key):
        return [r[key] for r in samples if r.get(key) is not None]
    out = {}
    if values("utilization"):
        out["gpu_utilization"] = statistics.median(values("utilization")) / 100
    if values("gpu_memory_share"):
        out["gpu_memory_share"] = max(values("gpu_memory_share"))
    if values("host_ram_share"):
        out["host_ram_share"] = max(values("host_ram_share"))
    if values("clock_rate"):
        out["clock_mhz_min"], out["clock_mhz_max"] = min(values("clock_rate")), max(values("clock_rate"))
    if values("temperature"):
        out["temperature_c_max"] = max(values("temperature"))
    return out


# transformers' module names for the engine's LoRA targets where a family's differ from Llama's
# (q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, lm_head): Phi-3 fuses q/k/v
# and gate/up into one linear each, so one adapter serves both (fewer parameters than two);
# GPT-2, GPTBigCode, Falcon and BLOOM fuse q/k/v too; DeepSeek's latent attention adapts its
# down- and up-projections. A plain MLP (GPT-2, Falcon, OPT, BLOOM) has no gate to adapt.
# Routed experts are fused 3-D tensors in transformers 5, which
# target_modules does not reach: the engine's count leaves them out unless asked.
LORA_MODULES = {
    "phi3": {"q_proj": ["qkv_proj"], "k_proj": ["qkv_proj"], "v_proj": ["qkv_proj"],
             "gate_proj": ["gate_up_proj"], "up_proj": ["gate_up_proj"]},
    "gpt2": {"q_proj": ["c_attn"], "k_proj": ["c_attn"], "v_proj": ["c_attn"],
             "o_proj": ["attn.c_proj"], "gate_proj": [], "up_proj": ["c_fc"],
             "down_proj": ["mlp.c_proj"]},
    "falcon": {"q_proj": ["query_key_value"], "k_proj": ["query_key_value"],
               "v_proj": ["query_key_value"], "o_proj": ["self_attention.dense"],
               "gate_proj": [], "up_proj": ["dense_h_to_4h"], "down_proj": ["dense_4h_to_h"]},
    "opt": {"o_proj": ["out_proj"], "gate_proj": [], "up_proj": ["fc1"], "down_proj": ["fc2"]},
    "deepseek_v2": {"q_proj": ["q_a_proj", "q_b_proj"],
                    "k_proj": ["kv_a_proj_with_mqa", "kv_b_proj"],
                    "v_proj": ["kv_a_proj_with_mqa", "kv_b_proj"]},
}
LORA_MODULES["gpt_bigcode"] = LORA_MODULES["gpt2"]
LORA_MODULES["bloom"] = LORA_MODULES["falcon"]
LORA_MODULES["deepseek_v3"] = LORA_MODULES["deepseek_v2"]


def lora_modules(s):
    """The request's LoRA targets as the family's module names, each once."""
    names = dict(LORA_MODULES.get(s["model_type"], {}))
    if s["model_type"].startswith("deepseek") and not s["config"].get("q_lora_rank"):
        names["q_proj"] = ["q_proj"]  # queries projected directly
    out = []
    for target in s["lora_targets"]:
        for name in names.get(target, [target]):
            if name not in out:
                out.append(name)
    return out


def train(torch, s, model, compute, mixed, rank, world):
    checkpointing = s["recompute"] != "none"
    if s["kind"] == "qlora":
        from peft import prepare_model_for_kbit_training
        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=checkpointing)
    if checkpointing:
        # Hugging Face recomputes whole layers; the engine's "selective" keeps more.
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if s["kind"] in ("lora", "qlora"):
        from peft import LoraConfig, get_peft_model
        model = get_peft_model(model, LoraConfig(r=s["lora_rank"], lora_alpha=2 * s["lora_rank"],
                                                 lora_dropout=0.0,
                                                 target_modules=lora_modules(s),
                                                 task_type="CAUSAL_LM"))
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    model.train()
    zero = s["layout"]["zero"] if world > 1 else 0
    if world > 1:
        model = wrap(torch, s, model, zero)
    cls, kwargs = optimizer_class(torch, s)
    params = [p for p in model.parameters() if p.requires_grad]
    if zero in (1, 2):
        # ZeRO-2 also shards gradients, which plain PyTorch has no switch for: ZeRO-1's memory
        # is measured, an upper bound on ZeRO-2's.
        from torch.distributed.optim import ZeroRedundancyOptimizer
        optimizer = ZeroRedundancyOptimizer(params, optimizer_class=cls, **kwargs)
    else:
        optimizer = cls(params, **kwargs)
    mb, seq, ga = s["micro_batch"], s["seq_len"], s["grad_accum"]
    torch.manual_seed(1 + rank)  # each rank its own batch; the weights were seeded alike
    ids = torch.randint(0, s["vocab"], (mb, seq), device="cuda")
    times, samples = [], []
    for step in range(s["warmup_steps"] + s["measured_steps"]):
        if step == s["warmup_steps"]:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        start = time.perf_counter()
        for i in range(ga):
            # DDP exchanges gradients once a step (the last micro-batch); FSDP every one.
            sync = world == 1 or zero >= 3 or i == ga - 1
            with contextlib.nullcontext() if sync else model.no_sync():
                with torch.autocast("cuda", dtype=compute, enabled=mixed):
                    loss = model(input_ids=ids, labels=ids).loss
                (loss / ga).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        if step >= s["warmup_steps"]:
            times.append(time.perf_counter() - start)
            sample(torch, samples)
    step_s = statistics.median(times)
    return {"gpus": world, "step_s": step_s, "tokens_per_s": mb * seq * ga * world / step_s,
            "trainable_params": trainable, **monitored(samples)}, ids


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def takes_positions(model):
    """transformers before 5.5 or so index the static cache by a cache_position argument; later
    ones keep the count in the cache itself and have no such argument."""
    import inspect
    return "cache_position" in inspect.signature(model.forward).parameters


def decoder(torch, s, model, cache):
    """One decode step as serving engines run it: a static KV cache and the step replayed as a
    CUDA graph (torch.compile's "reduce-overhead" mode, the pattern transformers documents for
    generate with cache_implementation="static"). Without them a Python loop of eager calls
    times the host launching kernels, several times an engine's TPOT on a large card. Answers
    step(token, position) -> logits of the last position, and how() -> how it ran: compilation
    happens at the first call, and a model the compiler cannot capture falls back to eager
    steps there, said so."""
    positions = takes_positions(model)

    def eager(token, position):
        extra = {"cache_position": position} if positions else {}
        return model(input_ids=token, past_key_values=cache, use_cache=True, logits_to_keep=1,
                     **extra).logits
    if cache is None:
        return eager, lambda: "eager (no static cache in this transformers): includes launch overhead"
    state = {"run": torch.compile(eager, mode="reduce-overhead", fullgraph=True),
             "how": "cuda graph"}
    mark = getattr(getattr(torch, "compiler", None), "cudagraph_mark_step_begin", None)

    def step(token, position):
        if state["run"] is eager:
            return eager(token, position)
        try:
            if mark is not None:
                mark()  # the last step's outputs may be overwritten: only logits are read
            return state["run"](token, position)
        except Exception as e:  # noqa: BLE001  (whatever the compiler raised, measure eagerly)
            print(f"note: the decode step could not be captured ({type(e).__name__}: {e}); "
                  "it runs eagerly")
            state["run"] = eager
            state["how"] = f"eager ({type(e).__name__}: no CUDA graph): includes launch overhead"
            return eager(token, position)
    return step, lambda: state["how"]


def static_cache(torch, s, model, compute):
    """transformers' fixed-size KV cache for the whole request, or None where it has none. Its
    newer constructor takes the config and length and sizes itself on the first update; older
    ones want the batch, device and dtype (extra keywords are accepted by both)."""
    try:
        from transformers import StaticCache
    except ImportError:
        return None
    c, p, o = s["concurrency"], s["prompt_tokens"], s["output_tokens"]
    return StaticCache(config=model.config, max_cache_len=p + o, max_batch_size=c, device="cuda",
                       dtype=compute)


def serve(torch, s, model, compute):
    model.eval()
    c, p, o = s["concurrency"], s["prompt_tokens"], s["output_tokens"]
    ids = torch.randint(0, s["vocab"], (c, p), device="cuda")
    cache = static_cache(torch, s, model, compute)
    step, how_it_ran = decoder(torch, s, model, cache)
    positions = takes_positions(model)
    # transformers' generate runs experts as grouped GEMMs in prefill and as batched GEMMs in
    # decode (capturable in a graph); its loop over experts is neither.
    experts = s["moe"] and hasattr(model, "set_experts_implementation")
    ttft, tpot, samples = [], [], []
    with torch.inference_mode():
        for rep in range(s["warmup_steps"] + s["measured_steps"]):
            if rep == s["warmup_steps"]:
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
            if cache is not None:
                cache.reset()
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            # Prefill keeps the last position's logits only, as generate and every engine do:
            # all positions' logits would be a [concurrency, prompt, vocab] tensor.
            extra = ({"cache_position": torch.arange(p, device="cuda")}
                     if cache is not None and positions else {})
            if experts:
                model.set_experts_implementation("grouped_mm")
            out = model(input_ids=ids, past_key_values=cache, use_cache=True, logits_to_keep=1,
                        **extra)
            logits = out.logits
            torch.cuda.synchronize()
            t1 = time.perf_counter()
            if cache is None:
                cache_now = out.past_key_values
            if experts:
                model.set_experts_implementation("batched_mm")
            for i in range(o - 1):
                token = logits[:, -1:].argmax(-1)
                if cache is None:
                    out = model(input_ids=token, past_key_values=cache_now, use_cache=True,
                                logits_to_keep=1)
                    logits, cache_now = out.logits, out.past_key_values
                else:
                    logits = step(token, torch.tensor([p + i], device="cuda"))
            torch.cuda.synchronize()
            t2 = time.perf_counter()
            if rep >= s["warmup_steps"]:
                ttft.append((t1 - t0) * 1e3)
                tpot.append((t2 - t1) * 1e3 / max(o - 1, 1))
                sample(torch, samples)
    result = {f"ttft_ms_p{q}": percentile(ttft, q) for q in (50, 90, 99)}
    result.update({f"tpot_ms_p{q}": percentile(tpot, q) for q in (50, 90, 99)})
    result["ttft_ms"], result["tpot_ms"] = result["ttft_ms_p50"], result["tpot_ms_p50"]
    result["decode_tokens_per_s"] = c * 1e3 / result["tpot_ms"]
    result.update(monitored(samples))
    result["gpus"] = 1
    result["decode"] = how = how_it_ran()
    print(f"decode step: {how}. This is plain PyTorch on the card, the hardware's floor for "
          "this model, not a serving engine's scheduler")
    return result, ids


# ---- A serving engine's own benchmark -------------------------------------------------------

def run_tool(command, what, capture=False):
    """Runs an engine's benchmark (its output shown as it goes, or captured and answered);
    exits naming the tool when it is missing or fails."""
    import shutil
    import subprocess
    if command[0] != sys.executable and shutil.which(command[0]) is None:
        sys.exit(f"{what}: {command[0]} is not on PATH: install it to measure this engine")
    print("$ " + " ".join(command), flush=True)
    done = subprocess.run(command, check=False, capture_output=capture, text=True)
    if done.returncode != 0:
        tail = (done.stderr or "")[-2000:] if capture else "its output is above"
        sys.exit(f"{what} failed ({tail}): nothing is compared")
    return (done.stdout or "") + (done.stderr or "") if capture else ""


def model_folder(s, folder):
    """A folder holding only the model's config.json, for an engine that reads a model by path
    and fills its weights at random (vLLM's and SGLang's --load-format dummy). The engines pick
    their model class by the config's architectures, which transformers names per family."""
    import transformers
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    fields = as_declared(transformers, s["model_type"], architecture(s))
    config = dict(fields, model_type=s["model_type"], torch_dtype=FLOAT.get(s["weights"],
                                                                            "bfloat16"),
                  architectures=[MODEL_FOR_CAUSAL_LM_MAPPING_NAMES[s["model_type"]]])
    with open(os.path.join(folder, "config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f)
    return folder


def bench_vllm(s, folder):
    """vLLM's latency benchmark (vllm bench latency, vllm/benchmarks/latency.py): the whole
    batch of `concurrency` prompts generated end to end per iteration, its mean written by
    --output-json as avg_latency. It times no TTFT or TPOT apart, so it runs twice: one output
    token (prefill and one step: the TTFT) and the request's (TPOT = the difference over the
    other steps). Random token ids, random weights (--load-format dummy), no tokenizer."""
    v, c, p, o = s["serving"], s["concurrency"], s["prompt_tokens"], s["output_tokens"]
    base = ["vllm", "bench", "latency", "--model", model_folder(s, folder), "--load-format",
            "dummy", "--dtype", FLOAT.get(s["weights"], "bfloat16"), "--skip-tokenizer-init",
            "--disable-detokenize", "--input-len", str(p),
            "--batch-size", str(c), "--num-iters-warmup", str(s["warmup_steps"]),
            "--num-iters", str(s["measured_steps"]),
            "--max-model-len", str(v["max_model_len"] or p + o),
            "--tensor-parallel-size", str(s["layout"]["tp"])]
    if v["gpu_memory_utilization"] is not None:
        base += ["--gpu-memory-utilization", str(v["gpu_memory_utilization"])]
    if v["max_num_seqs"] is not None:
        base += ["--max-num-seqs", str(v["max_num_seqs"])]
    if v["max_num_batched_tokens"] is not None:
        base += ["--max-num-batched-tokens", str(v["max_num_batched_tokens"])]
    if v["enforce_eager"]:
        base.append("--enforce-eager")
    if s["kv_cache"] in ("fp8", "fp8_e4m3", "fp8_e5m2"):
        base += ["--kv-cache-dtype", s["kv_cache"]]
    if s["weights"] == "fp8":
        base += ["--quantization", "fp8"]
    latencies = {}
    for out in sorted({1, o}):
        path = os.path.join(folder, f"latency_{out}.json")
        run_tool(base + ["--output-len", str(out), "--output-json", path], "vllm bench latency")
        with open(path, encoding="utf-8") as f:
            latencies[out] = json.load(f)
    first = latencies[1]["avg_latency"] * 1e3
    tpot = (latencies[o]["avg_latency"] * 1e3 - first) / (o - 1) if o > 1 else first
    return {"ttft_ms": first, "tpot_ms": tpot, "decode_tokens_per_s": c * 1e3 / tpot,
            "ttft_ms_p90": float(latencies[1]["percentiles"]["90"]) * 1e3}


def bench_sglang(s, folder):
    """SGLang's one-batch benchmark (python -m sglang.bench_one_batch): one batch of
    `concurrency` prompts, its prefill latency (the TTFT) and median decode step (the TPOT)
    appended to --result-filename as JSON lines. It loads a tokenizer whatever the weights:
    GPUPLAN_TOKENIZER names a local one of the model's family."""
    v, c, p, o = s["serving"], s["concurrency"], s["prompt_tokens"], s["output_tokens"]
    tokenizer = os.environ.get("GPUPLAN_TOKENIZER")
    if not tokenizer:
        sys.exit("sglang.bench_one_batch loads a tokenizer: set GPUPLAN_TOKENIZER to a local "
                 "folder with the model's tokenizer files")
    path = os.path.join(folder, "result.jsonl")
    command = [sys.executable, "-m", "sglang.bench_one_batch", "--model-path",
               model_folder(s, folder), "--tokenizer-path", tokenizer, "--load-format", "dummy",
               "--batch-size", str(c), "--input-len", str(p), "--output-len", str(max(o, 2)),
               "--tp-size", str(s["layout"]["tp"]), "--result-filename", path]
    if v["mem_fraction_static"] is not None:
        command += ["--mem-fraction-static", str(v["mem_fraction_static"])]
    if s["kv_cache"] in ("fp8", "fp8_e4m3", "fp8_e5m2"):
        command += ["--kv-cache-dtype", s["kv_cache"]]
    run_tool(command, "sglang.bench_one_batch")
    with open(path, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    row = [r for r in rows if r.get("batch_size") == c and r.get("input_len") == p][-1]
    tpot = row["median_decode_latency"] * 1e3
    return {"ttft_ms": row["prefill_latency"] * 1e3, "tpot_ms": tpot,
            "decode_tokens_per_s": c * 1e3 / tpot}


def bench_llama_cpp(s, folder):
    """llama.cpp's benchmarks on a GGUF file (GPUPLAN_GGUF: llama.cpp has no random weights):
    one sequence through llama-bench (-o json: a prompt test, whose avg_ts of prompt tokens a
    second gives the TTFT, and a generation test, whose avg_ts gives the TPOT); a batch of
    `concurrency` through llama-batched-bench (--output-format jsonl: t_pp for the batch's
    prefill, t_tg over tg steps)."""
    v, c, p, o = s["serving"], s["concurrency"], s["prompt_tokens"], s["output_tokens"]
    gguf = os.environ.get("GPUPLAN_GGUF")
    if not gguf:
        sys.exit("llama.cpp runs a GGUF file: set GPUPLAN_GGUF to the model's .gguf in the "
                 "request's format")
    layers = str(v["n_gpu_layers"] if v["n_gpu_layers"] >= 0 else 999)
    if c == 1:
        command = ["llama-bench", "-m", gguf, "-p", str(p), "-n", str(o), "-ngl", layers,
                   "-r", str(s["measured_steps"]), "-o", "json"]
        output = run_tool(command, "llama-bench", capture=True)
        tests = json.loads(output[output.index("["):output.rindex("]") + 1])
        prompt = [t for t in tests if t["n_prompt"] > 0 and t["n_gen"] == 0][0]
        gen = [t for t in tests if t["n_gen"] > 0 and t["n_prompt"] == 0][0]
        return {"ttft_ms": p / prompt["avg_ts"] * 1e3, "tpot_ms": 1e3 / gen["avg_ts"],
                "decode_tokens_per_s": gen["avg_ts"]}
    command = ["llama-batched-bench", "-m", gguf, "-c", str(c * (p + o)), "-npp", str(p),
               "-ntg", str(o), "-npl", str(c), "-ngl", layers, "--output-format", "jsonl"]
    output = run_tool(command, "llama-batched-bench", capture=True)
    rows = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    row = [r for r in rows if r.get("pl") == c][-1]
    tpot = row["t_tg"] / o * 1e3
    return {"ttft_ms": row["t_pp"] * 1e3, "tpot_ms": tpot, "decode_tokens_per_s": c * 1e3 / tpot}


def engine_benchmark(s):
    """A serving request with a framework is measured by that engine's own benchmark, with the
    request's settings, against the engine's estimate of that engine."""
    import tempfile
    drivers = {"vllm": bench_vllm, "sglang": bench_sglang, "llama_cpp": bench_llama_cpp}
    framework = s["serving"]["framework"]
    if s["model_type"] is None:
        sys.exit(f"not measured: {s['unbuildable']}")
    if framework not in drivers:
        sys.exit(f"{framework}: measure with its own benchmark (trtllm-bench for TensorRT-LLM); "
                 "this script drives vLLM, SGLang and llama.cpp")
    if framework != "llama_cpp" and s["weights"] not in FLOAT and s["weights"] != "fp8":
        # Random weights follow the config, which no longer declares the checkpoint's format.
        sys.exit(f"weights {s['weights']}: {framework}'s random weights build a float model; "
                 "measure this format from its checkpoint")
    with tempfile.TemporaryDirectory() as folder:
        measured = drivers[framework](s, folder)
    measured["gpus"] = s["layout"]["tp"]
    measured["decode"] = f"{framework}'s benchmark"
    return measured


def precision_check(torch, s, model, ids, compute, mixed):
    # Whether low precision will do: the same inputs at high and low precision, compared. One
    # sequence's logits, in the run's format and in fp32 (the model is cast up at the end, after
    # the measurement).
    if s["weights"] not in ("bf16", "fp16"):
        return None  # fp32/tf32 are the reference; quantised bases cannot be cast up
    sample_ids = ids[:1, :min(ids.shape[1], 512)]
    params = sum(p.numel() for p in model.parameters())
    free, _ = torch.cuda.mem_get_info()
    if not mixed and free < params * 4 * 1.2:
        print("precision check skipped: an fp32 copy of the weights does not fit in free memory")
        return None
    model.eval()
    with torch.no_grad():
        with torch.autocast("cuda", dtype=compute, enabled=mixed):
            low = model(input_ids=sample_ids, use_cache=False).logits.float()
        if not mixed:
            model.float()
        high = model(input_ids=sample_ids, use_cache=False).logits.float()
    error = (high - low).norm().item() / max(high.norm().item(), 1e-30)
    agreement = (high.argmax(-1) == low.argmax(-1)).float().mean().item()
    return {"logits_relative_error": error, "top1_agreement": agreement}


def environment(torch):
    """What the run ran on, kept with the measurement: the card, CUDA and library versions."""
    found = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
             "cuda": getattr(torch.version, "cuda", None)}
    for name in ("transformers", "peft", "bitsandbytes"):
        module = sys.modules.get(name)
        if module is not None:
            found[name] = getattr(module, "__version__", "?")
    return found


def report(torch, s, built_params, measured, check):
    total = torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory
    world = measured["gpus"]
    # The estimate of what ran: one GPU, or the request's own layout when torchrun matched it.
    estimate = ESTIMATE if world == 1 else (ESTIMATE_LAYOUT if world == s["layout"]["gpus"] else {})
    if world > 1 and s["layout"]["zero"] == 2 and estimate:
        # Plain PyTorch measured ZeRO-1 memory: comparing it with ZeRO-2's estimate misleads.
        estimate = {k: v for k, v in estimate.items() if not k.startswith("peak_")}
        print("note: ZeRO-2 ran as ZeRO-1 (no gradient sharding in plain PyTorch): memory is "
              "not compared")
    if str(measured.get("decode", "")).startswith("eager") and estimate:
        # A Python loop of eager steps times the host, not the card: not an engine's TPOT.
        estimate = {k: v for k, v in estimate.items()
                    if not k.startswith("tpot") and k != "decode_tokens_per_s"}
        print("note: the decode step ran eagerly: TPOT is not compared with the estimate")
    env = environment(torch)
    print("ran on: " + ", ".join(f"{k} {v}" for k, v in env.items()))
    if built_params is None:  # a serving engine built it
        print(f"model: {s['model']} ({s['model_type']}), engine {ESTIMATE['params_total']:,} "
              f"parameters, on {world} GPU(s) through {measured.get('decode')}")
    else:
        print(f"model: {s['model']} ({s['model_type']})  built {built_params:,} parameters, "
              f"engine {ESTIMATE['params_total']:,}  on {world} GPU(s)")
    if built_params is not None and built_params != ESTIMATE["params_total"]:
        print(f"warning: transformers built {built_params:,} parameters where the engine counted "
              f"{ESTIMATE['params_total']:,}: the engine read this config differently, so the "
              "figures below compare different models; report it rather than calibrate on it")
    print(f"{'quantity':<24}{'measured':>16} {'estimate':>16} {'diff':>10}")
    for key, value in measured.items():
        if not isinstance(value, (int, float)):
            continue
        expected = estimate.get(key) if key != "gpus" else None
        if expected:
            diff = (value - expected) / expected * 100
            flag = "" if abs(diff) <= 10 else "  beyond the 10% line: calibrate"
            if key == "trainable_params" and value != expected:
                # A count, not a rate: a difference is another model, not a factor to fit.
                flag = ("  not the engine's count (a fused module takes one adapter where the "
                        "engine counts one per projection)")
            print(f"{key:<24}{value:>16.6g} {expected:>16.6g} {diff:>+9.1f}%{flag}")
        else:
            print(f"{key:<24}{value:>16.6g}")
    if not estimate:
        print(f"no estimate for {world} GPUs here: give the 1, 2 and 4 GPU runs' tokens_per_s to "
              "the page (speed-up curve) or to gpuplan calibrate (measured.scaling)")
    low, high = measured.get("clock_mhz_min"), measured.get("clock_mhz_max")
    if low and high and low < 0.9 * high:
        print(f"clocks fell from {high} to {low} MHz during the measured steps (up to "
              f"{measured.get('temperature_c_max', '?')} C): throttling lowers long runs")
    if check:
        print(f"precision check ({s['weights']} vs fp32, one sequence): logits relative error "
              f"{check['logits_relative_error']:.3g}, top-1 agreement "
              f"{check['top1_agreement'] * 100:.1f}%")
        measured["precision_check"] = check
    share = measured.get("gpu_memory_share")
    if share is None and "peak_reserved_bytes" in measured:
        share = measured["peak_reserved_bytes"] / total
    util, host = measured.get("gpu_utilization"), measured.get("host_ram_share")
    print("monitoring targets: GPU memory 85%+, GPU utilisation 90%+, host RAM 70-80%")
    if share is not None:
        print(f"  GPU memory in use at peak {share * 100:.0f}%"
              f"{'' if share >= 0.85 else ': a larger batch, or a smaller card, would serve'}")
    if util is not None:
        print(f"  GPU utilisation (median) {util * 100:.0f}%"
              f"{'' if util >= 0.9 else ': the card waits for data or communication'}")
    if host is not None:
        print(f"  host RAM in use {host * 100:.0f}%"
              f"{': loaders and the page cache may swap' if host > 0.8 else ''}")
    record = {"settings": s, "measured": measured, "environment": env,
              "model": {"built_params": built_params, "engine_params": ESTIMATE["params_total"]}}
    print("GPUPLAN_MEASUREMENT " + json.dumps(record))


def main():
    import torch
    if not torch.cuda.is_available():
        sys.exit("no CUDA GPU: this script measures on one")
    torch.manual_seed(0)
    s = SETTINGS
    rank, world = distributed(torch)
    if world > 1 and s["kind"] not in TRAINING:
        sys.exit("serving is measured per replica on one GPU: run it without torchrun")
    if world > 1 and s["layout"]["tp"] * s["layout"]["pp"] * s["layout"]["cp"] > 1:
        sys.exit("under torchrun this script measures data parallelism (ZeRO 0-3); tensor, "
                 "pipeline and context parallel layouts need their framework (Megatron-LM, "
                 "torchtitan)")
    if s["kind"] not in TRAINING and s["serving"]["framework"]:
        # The engine builds and runs the model itself: its timings against its estimate.
        report(torch, s, None, engine_benchmark(s), None)
        return
    model, compute, mixed = build_model(torch, s)
    built = sum(p.numel() for p in model.parameters())
    if s["kind"] in TRAINING:
        measured, ids = train(torch, s, model, compute, mixed, rank, world)
    else:
        measured, ids = serve(torch, s, model, compute)
    # The peaks of the measured steps, before the precision check allocates anything more; over
    # several GPUs, the most loaded one's.
    peaks = [torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()]
    if world > 1:
        import torch.distributed as dist
        most = torch.tensor(peaks, dtype=torch.float64, device="cuda")
        dist.all_reduce(most, op=dist.ReduceOp.MAX)
        peaks = [int(v) for v in most.tolist()]
    measured["peak_allocated_bytes"], measured["peak_reserved_bytes"] = peaks
    if rank == 0:
        # Sharded or replicated weights are not cast up in place: the check runs on one GPU.
        check = precision_check(torch, s, model, ids, compute, mixed) if world == 1 else None
        report(torch, s, built, measured, check)
    if world > 1:
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
