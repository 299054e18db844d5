# SPDX-License-Identifier: MIT
"""The parameter tree transformers builds for a config, family by family, written from the
modeling and configuration files of transformers (src/transformers/models/<family>/), not from
the engine: the stand-in model's parameters() yields these tensors, so a generated script
reports the count transformers would build and the test compares it with the engine's.

Each builder returns [(name, numel)] for the whole model. Defaults are the config classes'
defaults (configuration_<family>.py) for fields a checkpoint's config.json leaves out."""

# Config-class defaults the presets rely on (configuration_<family>.py).
DEFAULTS = {
    "gemma": {"tie_word_embeddings": True, "head_dim": 256},
    "gemma2": {"tie_word_embeddings": True, "head_dim": 256},
    "gemma3_text": {"tie_word_embeddings": True, "vocab_size": 262208, "hidden_size": 2304,
                    "intermediate_size": 9216, "num_hidden_layers": 26,
                    "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256},
    "cohere": {"tie_word_embeddings": True, "use_qk_norm": False},
    "falcon": {"tie_word_embeddings": True, "bias": False, "multi_query": True,
               "new_decoder_architecture": False, "parallel_attn": True, "num_kv_heads": None,
               "ffn_hidden_size": None, "num_ln_in_parallel_attn": None},
    "opt": {"tie_word_embeddings": True, "enable_bias": True, "do_layer_norm_before": True,
            "layer_norm_elementwise_affine": True, "max_position_embeddings": 2048},
    "bloom": {"tie_word_embeddings": True},
    "gpt2": {"tie_word_embeddings": True, "n_inner": None},
    "gpt_bigcode": {"tie_word_embeddings": True, "n_inner": None, "multi_query": True},
    "smollm3": {"tie_word_embeddings": True},
    "llama4_text": {"tie_word_embeddings": False, "interleave_moe_layer_step": 1,
                    "use_qk_norm": True},
    "deepseek_v2": {"moe_layer_freq": 1, "first_k_dense_replace": 0, "q_lora_rank": None},
    "deepseek_v3": {"moe_layer_freq": 1, "first_k_dense_replace": 3},
}
UNTIED = {"llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "phi3",
          "deepseek_v2", "deepseek_v3", "llama4_text", "gpt_oss", "olmo2"}


class Config:
    def __init__(self, model_type, fields):
        self.model_type = model_type
        self.fields = dict(DEFAULTS.get(model_type, {}))
        self.fields.setdefault("tie_word_embeddings", model_type not in UNTIED)
        self.fields.update({k: v for k, v in fields.items() if v is not None or k not in
                            self.fields})

    def get(self, *names, default=None):
        for n in names:
            if self.fields.get(n) is not None:
                return self.fields[n]
        return default


def _linear(i, o, bias=False):
    return i * o + (o if bias else 0)


def _gated_mlp(h, inter, bias=False):
    return 2 * _linear(h, inter, bias) + _linear(inter, h, bias)


def _embeddings(c, h, vocab):
    tree = [("embed_tokens", vocab * h)]
    if not c.get("tie_word_embeddings"):
        tree.append(("lm_head", vocab * h))
    return tree


def _llama_like(c):
    """LlamaForCausalLM and the families that keep its layer: Mistral, Qwen2, Qwen3, Phi-3 (fused
    qkv_proj and gate_up_proj: the same counts), SmolLM3, OLMo 2, Cohere, Gemma 1-3."""
    t = c.model_type
    h, layers, vocab = c.get("hidden_size"), c.get("num_hidden_layers"), c.get("vocab_size")
    heads = c.get("num_attention_heads")
    kv = c.get("num_key_value_heads", default=heads)
    hd = c.get("head_dim", default=h // heads)
    inter = c.get("intermediate_size")
    # attention_bias covers q, k, v and o (Llama, Gemma, Cohere, Phi-3); Qwen2 biases q, k, v.
    bias = bool(c.get("attention_bias", default=False))
    qkv_bias = bias or t == "qwen2"
    attn = (_linear(h, heads * hd, qkv_bias) + 2 * _linear(h, kv * hd, qkv_bias)
            + _linear(heads * hd, h, bias))
    mlp = _gated_mlp(h, inter, bool(c.get("mlp_bias", default=False)))
    norms = {"gemma2": 4, "gemma3_text": 4, "cohere": 1}.get(t, 2) * h
    if t in ("qwen3", "gemma3_text"):
        norms += 2 * hd  # q_norm, k_norm: one head_dim weight each
    if t == "olmo2":
        norms += heads * hd + kv * hd  # q_norm, k_norm over the whole projections
    if t == "cohere" and c.get("use_qk_norm"):
        norms += heads * hd + kv * hd  # CohereLayerNorm((heads, head_dim)) and (kv, head_dim)
    tree = _embeddings(c, h, vocab) + [("layers", layers * (attn + mlp + norms)), ("norm", h)]
    return tree


def _moe_layers(c, layers, is_moe):
    moe = [i for i in range(layers) if is_moe(i)]
    return len(moe), layers - len(moe)


def _mixtral_qwen_moe(c):
    """Mixtral, Qwen2-MoE and Qwen3-MoE: Llama's attention (Qwen2-MoE with q/k/v biases, Qwen3
    with q/k norms), a router without bias, routed experts (gate, up, down each), Qwen2-MoE's
    shared expert with its sigmoid gate."""
    t = c.model_type
    h, layers, vocab = c.get("hidden_size"), c.get("num_hidden_layers"), c.get("vocab_size")
    heads = c.get("num_attention_heads")
    kv = c.get("num_key_value_heads", default=heads)
    hd = c.get("head_dim", default=h // heads)
    qkv_bias = t == "qwen2_moe" or bool(c.get("attention_bias", default=False))
    attn = (_linear(h, heads * hd, qkv_bias) + 2 * _linear(h, kv * hd, qkv_bias)
            + _linear(heads * hd, h))
    norms = 2 * h + (2 * hd if t == "qwen3_moe" else 0)
    if t == "mixtral":
        experts, inter = c.get("num_local_experts"), c.get("intermediate_size")
        sparse = _moe_layers(c, layers, lambda i: True)
        dense_inter = inter
    else:
        experts, inter = c.get("num_experts"), c.get("moe_intermediate_size")
        step, only = c.get("decoder_sparse_step", default=1), c.get("mlp_only_layers", default=[])
        sparse = _moe_layers(c, layers,
                             lambda i: i not in only and experts > 0 and (i + 1) % step == 0)
        dense_inter = c.get("intermediate_size")
    moe = _linear(h, experts) + experts * _gated_mlp(h, inter)
    if t == "qwen2_moe":
        moe += _gated_mlp(h, c.get("shared_expert_intermediate_size")) + _linear(h, 1)
    dense = _gated_mlp(h, dense_inter)
    layer_total = sparse[0] * (attn + norms + moe) + sparse[1] * (attn + norms + dense)
    return _embeddings(c, h, vocab) + [("layers", layer_total), ("norm", h)]


def _deepseek(c):
    """DeepSeek-V2 and V3: multi-head latent attention (q through a low-rank pair with its norm
    when q_lora_rank is set, kv through a shared latent with its norm), routed experts from
    first_k_dense_replace on (V2: every moe_layer_freq-th), shared experts as one MLP of
    n_shared_experts x moe_intermediate_size, V3's router score-correction bias."""
    t = c.model_type
    h, layers, vocab = c.get("hidden_size"), c.get("num_hidden_layers"), c.get("vocab_size")
    heads = c.get("num_attention_heads")
    nope, rope, v = c.get("qk_nope_head_dim"), c.get("qk_rope_head_dim"), c.get("v_head_dim")
    q_rank, kv_rank = c.get("q_lora_rank"), c.get("kv_lora_rank")
    bias = bool(c.get("attention_bias", default=False))
    qk = nope + rope
    if q_rank:
        q = _linear(h, q_rank, bias) + q_rank + _linear(q_rank, heads * qk)
    else:
        q = _linear(h, heads * qk)
    attn = (q + _linear(h, kv_rank + rope, bias) + kv_rank + _linear(kv_rank, heads * (nope + v))
            + _linear(heads * v, h, bias))
    experts, moe_inter = c.get("n_routed_experts"), c.get("moe_intermediate_size")
    first, freq = c.get("first_k_dense_replace"), c.get("moe_layer_freq")
    if t == "deepseek_v3":
        sparse = _moe_layers(c, layers, lambda i: i >= first)
    else:
        sparse = _moe_layers(c, layers, lambda i: experts and i >= first and i % freq == 0)
    router = experts * h + (experts if t == "deepseek_v3" else 0)
    moe = router + experts * _gated_mlp(h, moe_inter)
    shared = c.get("n_shared_experts", default=0) or 0
    if shared:
        moe += _gated_mlp(h, moe_inter * shared)
    dense = _gated_mlp(h, c.get("intermediate_size"))
    layer_total = sparse[0] * (attn + 2 * h + moe) + sparse[1] * (attn + 2 * h + dense)
    return _embeddings(c, h, vocab) + [("layers", layer_total), ("norm", h)]


def _gpt_oss(c):
    """GptOssForCausalLM: biased q/k/v/o, one sink logit per head, a biased router, experts as
    fused gate_up_proj [E, H, 2I] and down_proj [E, I, H] with their biases."""
    h, layers, vocab = c.get("hidden_size"), c.get("num_hidden_layers"), c.get("vocab_size")
    heads, kv, hd = c.get("num_attention_heads"), c.get("num_key_value_heads"), c.get("head_dim")
    experts, inter = c.get("num_local_experts"), c.get("intermediate_size")
    attn = _linear(h, heads * hd, True) + 2 * _linear(h, kv * hd, True) + _linear(heads * hd, h,
                                                                                  True) + heads
    moe = _linear(h, experts, True) + experts * (h * 2 * inter + 2 * inter + inter * h + h)
    return _embeddings(c, h, vocab) + [("layers", layers * (attn + moe + 2 * h)), ("norm", h)]


def _llama4(c):
    """Llama4ForCausalLM (text): Llama's attention (its q/k norm is an L2 norm without weights),
    MoE on every interleave_moe_layer_step-th layer with a router, fused experts and a shared
    expert of intermediate_size; the other layers a dense MLP of intermediate_size_mlp."""
    h, layers, vocab = c.get("hidden_size"), c.get("num_hidden_layers"), c.get("vocab_size")
    heads, kv, hd = c.get("num_attention_heads"), c.get("num_key_value_heads"), c.get("head_dim")
    bias = bool(c.get("attention_bias", default=False))
    attn = _linear(h, heads * hd, bias) + 2 * _linear(h, kv * hd, bias) + _linear(heads * hd, h,
                                                                                  bias)
    experts, inter = c.get("num_local_experts"), c.get("intermediate_size")
    step = c.get("interleave_moe_layer_step")
    moe_layers = c.get("moe_layers", default=list(range(step - 1, layers, step)))
    sparse = _moe_layers(c, layers, lambda i: i in moe_layers)
    moe = _linear(h, experts) + experts * 3 * h * inter + _gated_mlp(h, inter)
    dense = _gated_mlp(h, c.get("intermediate_size_mlp"))
    layer_total = sparse[0] * (attn + 2 * h + moe) + sparse[1] * (attn + 2 * h + dense)
    return _embeddings(c, h, vocab) + [("layers", layer_total), ("norm", h)]


def _gpt2(c):
    """GPT-2 and GPTBigCode: token and position tables, LayerNorms with bias, Conv1D/Linear
    projections with bias (GPTBigCode's multi-query c_attn is H -> H + 2 head_dim)."""
    h, layers, vocab = c.get("n_embd", "hidden_size"), c.get("n_layer"), c.get("vocab_size")
    heads, positions = c.get("n_head"), c.get("n_positions")
    inner = c.get("n_inner") or 4 * h
    qkv = h + 2 * (h // heads) if c.model_type == "gpt_bigcode" and c.get("multi_query") else 3 * h
    layer = 2 * 2 * h + _linear(h, qkv, True) + _linear(h, h, True) + _linear(h, inner, True) \
        + _linear(inner, h, True)
    return [("wte", vocab * h), ("wpe", positions * h), ("h", layers * layer), ("ln_f", 2 * h)]


def _falcon(c):
    """FalconForCausalLM: fused query_key_value (multi-query: H + 2 head_dim; the new decoder
    architecture: (heads + 2 kv) head_dim), dense, a 4H MLP, LayerNorms with bias: one before the
    parallel block, or ln_attn and ln_mlp in the new architecture."""
    h, layers, vocab = c.get("hidden_size"), c.get("num_hidden_layers"), c.get("vocab_size")
    heads = c.get("num_attention_heads")
    hd = h // heads
    bias = bool(c.get("bias"))
    if c.get("new_decoder_architecture"):
        kv = c.get("num_kv_heads", default=heads)
        qkv = (heads + 2 * kv) * hd
    elif c.get("multi_query"):
        qkv = h + 2 * hd
    else:
        qkv = 3 * h
    ffn = c.get("ffn_hidden_size") or 4 * h
    if c.get("new_decoder_architecture"):
        norms = (c.get("num_ln_in_parallel_attn") or 2) * 2 * h
    elif c.get("parallel_attn"):
        norms = 2 * h
    else:
        norms = 2 * 2 * h
    layer = _linear(h, qkv, bias) + _linear(h, h, bias) + _linear(h, ffn, bias) \
        + _linear(ffn, h, bias) + norms
    tree = [("word_embeddings", vocab * h), ("h", layers * layer), ("ln_f", 2 * h)]
    if not c.get("tie_word_embeddings"):
        tree.append(("lm_head", vocab * h))
    return tree


def _opt(c):
    """OPTForCausalLM: token table (word_embed_proj_dim wide, projected in and out when that
    differs from hidden), learned positions with OPT's offset of 2 rows, biased q/k/v/out and
    fc1/fc2, LayerNorms with bias, a final LayerNorm when layer norm comes first."""
    h, layers, vocab = c.get("hidden_size"), c.get("num_hidden_layers"), c.get("vocab_size")
    proj, ffn = c.get("word_embed_proj_dim", default=h), c.get("ffn_dim")
    bias = bool(c.get("enable_bias"))
    layer = 4 * _linear(h, h, bias) + _linear(h, ffn, bias) + _linear(ffn, h, bias) + 2 * 2 * h
    tree = [("embed_tokens", vocab * proj), ("embed_positions",
                                             (c.get("max_position_embeddings") + 2) * h),
            ("layers", layers * layer)]
    if c.get("do_layer_norm_before"):
        tree.append(("final_layer_norm", 2 * h))
    if proj != h:
        tree += [("project_in", proj * h), ("project_out", h * proj)]
    if not c.get("tie_word_embeddings"):
        tree.append(("lm_head", vocab * proj))
    return tree


def _bloom(c):
    """BloomForCausalLM: token table and its LayerNorm, fused query_key_value and dense with
    bias, a 4H MLP with bias, LayerNorms with bias, ALiBi (no position table)."""
    h, layers, vocab = c.get("hidden_size", "n_embed"), c.get("n_layer"), c.get("vocab_size")
    layer = _linear(h, 3 * h, True) + _linear(h, h, True) + _linear(h, 4 * h, True) \
        + _linear(4 * h, h, True) + 2 * 2 * h
    return [("word_embeddings", vocab * h), ("word_embeddings_layernorm", 2 * h),
            ("h", layers * layer), ("ln_f", 2 * h)]


BUILDERS = {
    "llama": _llama_like, "mistral": _llama_like, "qwen2": _llama_like, "qwen3": _llama_like,
    "phi3": _llama_like, "smollm3": _llama_like, "olmo2": _llama_like, "cohere": _llama_like,
    "gemma": _llama_like, "gemma2": _llama_like, "gemma3_text": _llama_like,
    "mixtral": _mixtral_qwen_moe, "qwen2_moe": _mixtral_qwen_moe, "qwen3_moe": _mixtral_qwen_moe,
    "deepseek_v2": _deepseek, "deepseek_v3": _deepseek, "gpt_oss": _gpt_oss,
    "llama4_text": _llama4, "gpt2": _gpt2, "gpt_bigcode": _gpt2, "falcon": _falcon, "opt": _opt,
    "bloom": _bloom,
}


def parameter_tree(model_type, fields):
    """[(name, numel)] of the model transformers builds; KeyError for a family the stand-in
    does not know (transformers would have the class or raise)."""
    return BUILDERS[model_type](Config(model_type, fields))
