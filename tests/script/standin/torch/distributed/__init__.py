# SPDX-License-Identifier: MIT
"""Recording stand-in for torch.distributed: the rank comes from torchrun's RANK variable."""
import os

from recorder import record


def init_process_group(backend):
    record("init_process_group", backend=backend)


def get_rank():
    return int(os.environ.get("RANK", "0"))


class ReduceOp:
    MAX = "max"


def all_reduce(tensor, op=None):
    # Another rank peaked 1 GiB higher: the script must report the most loaded GPU's peak.
    record("all_reduce", op=op)
    tensor.values = [v + 2**30 for v in tensor.values]


def destroy_process_group():
    record("destroy_process_group")
