# SPDX-License-Identifier: MIT
"""A recording stand-in for transformers (see torch/__init__.py)."""
import types

import torch
from recorder import record

from .architectures import BUILDERS, Config, parameter_tree

__version__ = "0.0-recording-stand-in"


class _Gemma2Config:
    """Two of Gemma2Config's declared field types (configuration_gemma2.py), for as_declared."""
    final_logit_softcapping: "float | None"
    sliding_window: "int | None"


class _ConfigMapping(dict):
    """transformers' CONFIG_MAPPING: a model_type's config class (KeyError for an unknown one).
    The stand-in's classes declare no field types except Gemma 2's two."""

    def __missing__(self, model_type):
        if model_type not in BUILDERS:
            raise KeyError(model_type)
        return type(f"{model_type}Config", (), {})


CONFIG_MAPPING = _ConfigMapping(gemma2=_Gemma2Config)


class AutoConfig:
    @staticmethod
    def for_model(model_type, **kwargs):
        record("config", model_type=model_type, **kwargs)
        if model_type not in BUILDERS:  # as transformers' CONFIG_MAPPING answers
            raise ValueError(f"Unrecognized model identifier: {model_type}")
        return types.SimpleNamespace(model_type=model_type, **kwargs)


class _Output:
    def __init__(self, batch, length, vocab, labels):
        self.loss = torch.Tensor(()) if labels else None
        self.logits = torch.Tensor((batch, length, vocab))
        self.past_key_values = object()


class LlamaDecoderLayer:
    """What FSDP's wrap policy looks for."""


class _Model:
    def __init__(self, config):
        self.config = config

    def modules(self):
        return [self, LlamaDecoderLayer()]

    def to(self, device):
        record("model_to", device=device)
        return self

    def parameters(self):
        # The tensors transformers would build for this config, one per part of the tree.
        fields = {k: v for k, v in vars(self.config).items() if k != "model_type"}
        return [torch.Tensor((numel,), True)
                for _, numel in parameter_tree(self.config.model_type, fields)]

    def gradient_checkpointing_enable(self, **kwargs):
        record("gradient_checkpointing_enable", **kwargs)

    def train(self):
        record("train")
        return self

    def eval(self):
        record("eval")
        return self

    def float(self):
        record("model_float")
        return self

    def save_pretrained(self, path):
        record("save_pretrained")

    def forward(self, input_ids, labels=None, use_cache=None, past_key_values=None,
                logits_to_keep=0):
        """The forward of transformers 5.5 and later: no cache_position argument (the static
        cache counts its own length)."""
        record("forward", shape=list(input_ids.shape), labels=labels is not None,
               use_cache=use_cache, past=past_key_values is not None,
               static_cache=isinstance(past_key_values, StaticCache),
               logits_to_keep=logits_to_keep)
        batch, length = input_ids.shape
        fields = {k: v for k, v in vars(self.config).items() if k != "model_type"}
        vocab = Config(self.config.model_type, fields).get("vocab_size", "n_vocab")
        kept = length if logits_to_keep == 0 else min(logits_to_keep, length)
        return _Output(batch, kept, vocab, labels is not None)

    def __call__(self, **kwargs):
        return self.forward(**kwargs)

    def set_experts_implementation(self, name):
        record("experts_implementation", name=name)


class StaticCache:
    def __init__(self, **kwargs):
        record("static_cache", **{k: v for k, v in kwargs.items() if k != "config"})

    def reset(self):
        record("cache_reset")


class AutoModelForCausalLM:
    @staticmethod
    def from_config(config, **kwargs):
        record("from_config", **kwargs)
        return _Model(config)

    @staticmethod
    def from_pretrained(path, **kwargs):
        quant = kwargs.pop("quantization_config", None)
        record("from_pretrained", quantization=getattr(quant, "kwargs", None), **kwargs)
        return _Model(_last_config())


def _last_config():
    from recorder import EVENTS
    cfg = [e for e in EVENTS if e["call"] == "config"][-1]
    return types.SimpleNamespace(**{k: v for k, v in cfg.items() if k != "call"})


class BitsAndBytesConfig:
    def __init__(self, **kwargs):
        self.kwargs = kwargs
