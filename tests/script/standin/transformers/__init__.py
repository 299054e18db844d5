# SPDX-License-Identifier: MIT
"""A recording stand-in for transformers (see torch/__init__.py)."""
import types

import torch
from recorder import record

__version__ = "0.0-recording-stand-in"


class AutoConfig:
    @staticmethod
    def for_model(model_type, **kwargs):
        record("config", model_type=model_type, **kwargs)
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
        # Two stand-in tensors: the count the script prints is not the point here.
        return [torch.Tensor((self.config.vocab_size, self.config.hidden_size), True),
                torch.Tensor((self.config.hidden_size,), True)]

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

    def __call__(self, input_ids, labels=None, use_cache=None, past_key_values=None):
        record("forward", shape=list(input_ids.shape), labels=labels is not None,
               use_cache=use_cache, past=past_key_values is not None)
        batch, length = input_ids.shape
        return _Output(batch, length, self.config.vocab_size, labels is not None)


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
