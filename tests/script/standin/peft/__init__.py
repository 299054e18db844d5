# SPDX-License-Identifier: MIT
"""A recording stand-in for peft (see torch/__init__.py)."""
from recorder import record

__version__ = "0.0-recording-stand-in"


class LoraConfig:
    def __init__(self, **kwargs):
        record("lora_config", **kwargs)


def get_peft_model(model, config):
    record("get_peft_model")
    return model


def prepare_model_for_kbit_training(model, **kwargs):
    record("prepare_model_for_kbit_training", **kwargs)
    return model
