# SPDX-License-Identifier: MIT
"""Recording stand-in for torch.distributed.fsdp."""
from recorder import record
from torch.nn.parallel import Wrapped


class FullyShardedDataParallel(Wrapped):
    def __init__(self, module, auto_wrap_policy=None, **kwargs):
        layers = sorted(c.__name__ for c in auto_wrap_policy.keywords["transformer_layer_cls"])
        record("fsdp", layers=layers, **kwargs)
        super().__init__(module)
