# SPDX-License-Identifier: MIT
"""Recording stand-in for torch.distributed.optim."""
from recorder import record


class ZeroRedundancyOptimizer:
    def __init__(self, params, optimizer_class, **kwargs):
        record("zero_redundancy_optimizer", optimizer_class=optimizer_class.__name__, **kwargs)

    def step(self):
        record("optimizer_step")

    def zero_grad(self, set_to_none=True):
        record("zero_grad", set_to_none=set_to_none)
