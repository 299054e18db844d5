# SPDX-License-Identifier: MIT
"""A recording stand-in for torch: just enough surface for gpuplan's measurement script, with
every call logged (recorder.py) instead of run. No GPU, no tensors."""
import contextlib
import types

from recorder import record

__version__ = "0.0-recording-stand-in"


class dtype:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"


float32, bfloat16, float16 = dtype("float32"), dtype("bfloat16"), dtype("float16")


class Tensor:
    def __init__(self, shape, requires_grad=False):
        self.shape = tuple(shape)
        self.requires_grad = requires_grad

    def numel(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    def __truediv__(self, other):
        record("loss_scaled", divisor=other)
        return Tensor(self.shape)

    def backward(self):
        record("backward")

    def __getitem__(self, index):
        # The script only slices logits[:, -1:]: the last position of each sequence.
        return Tensor((self.shape[0], 1) + self.shape[2:])

    def argmax(self, dim):
        return Tensor(self.shape[:-1])

    def __repr__(self):
        return f"Tensor{list(self.shape)}"


def manual_seed(seed):
    record("manual_seed", seed=seed)


def randint(low, high, size, device=None):
    record("randint", low=low, high=high, size=list(size), device=device)
    return Tensor(size)


@contextlib.contextmanager
def autocast(device_type, dtype=None, enabled=True):
    record("autocast_enter", device=device_type, dtype=dtype, enabled=enabled)
    yield


@contextlib.contextmanager
def inference_mode():
    record("inference_mode_enter")
    yield


class _Optimizer:
    def __init__(self, params, **kwargs):
        params = list(params)
        record("optimizer", name=type(self).__name__, params=len(params), **kwargs)

    def step(self):
        record("optimizer_step")

    def zero_grad(self, set_to_none=True):
        record("zero_grad", set_to_none=set_to_none)


optim = types.SimpleNamespace(
    AdamW=type("AdamW", (_Optimizer,), {}), Adam=type("Adam", (_Optimizer,), {}),
    SGD=type("SGD", (_Optimizer,), {}), Optimizer=_Optimizer)


class _Cuda:
    @staticmethod
    def is_available():
        return True

    @staticmethod
    def synchronize():
        record("synchronize")

    @staticmethod
    def reset_peak_memory_stats():
        record("reset_peak_memory_stats")

    @staticmethod
    def max_memory_allocated():
        return 10 * 2**30

    @staticmethod
    def max_memory_reserved():
        return 11 * 2**30

    @staticmethod
    def get_device_properties(index):
        return types.SimpleNamespace(total_memory=80 * 2**30)

    @staticmethod
    def get_device_name(index):
        return "recording stand-in"


cuda = _Cuda()
backends = types.SimpleNamespace(cuda=types.SimpleNamespace(matmul=types.SimpleNamespace(
    allow_tf32=False)))
