# SPDX-License-Identifier: MIT
"""Recording stand-in for torch.nn.parallel."""
import contextlib

from recorder import record


class Wrapped:
    """A wrapper that runs the module it holds, as DDP and FSDP do."""

    def __init__(self, module):
        self.module = module

    def __call__(self, **kwargs):
        return self.module(**kwargs)

    def parameters(self):
        return self.module.parameters()

    @contextlib.contextmanager
    def no_sync(self):
        record("no_sync")
        yield


class DistributedDataParallel(Wrapped):
    def __init__(self, module, device_ids=None):
        record("ddp", device_ids=device_ids)
        super().__init__(module)
