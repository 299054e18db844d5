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
float64 = dtype("float64")


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
        index = index if isinstance(index, tuple) else (index,)
        shape = [len(range(*i.indices(d))) for i, d in zip(index, self.shape)]
        return Tensor(tuple(shape) + self.shape[len(index):])

    def argmax(self, dim):
        return Tensor(self.shape[:-1])

    # The precision check's arithmetic: shapes only, every reduction a fixed number.
    def float(self):
        return Tensor(self.shape)

    def __sub__(self, other):
        record("compare", a=list(self.shape), b=list(other.shape))
        return Tensor(self.shape)

    def __eq__(self, other):
        return Tensor(self.shape)

    __hash__ = object.__hash__

    def norm(self):
        return Tensor(())

    def mean(self):
        return Tensor(())

    def item(self):
        return 1.0

    def to(self, dtype):
        record("param_to", dtype=dtype)
        return Tensor(self.shape, self.requires_grad)

    @property
    def data(self):
        return self

    @data.setter
    def data(self, value):
        pass


class _Values(Tensor):
    """A small tensor of known numbers (the script's all-reduced peaks)."""

    def __init__(self, values):
        super().__init__((len(values),))
        self.values = list(values)

    def tolist(self):
        return list(self.values)


def tensor(values, dtype=None, device=None):
    return _Values(values)

    def __repr__(self):
        return f"Tensor{list(self.shape)}"


def arange(n, device=None):
    return Tensor((n,))


def compile(fn, mode=None, fullgraph=False):  # noqa: A001  (torch's own name)
    """torch.compile: the stand-in records the mode and runs the function as it is, or, with
    STANDIN_COMPILE_FAILS set, fails at the first call as a graph the compiler cannot capture
    does."""
    import os
    record("compile", mode=mode, fullgraph=fullgraph)
    if os.environ.get("STANDIN_COMPILE_FAILS"):
        def fails(*args, **kwargs):
            raise RuntimeError("stand-in: data-dependent control flow")
        return fails
    return fn


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
def no_grad():
    record("no_grad_enter")
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

    @staticmethod
    def set_device(index):
        record("set_device", index=index)

    @staticmethod
    def current_device():
        return 0

    @staticmethod
    def mem_get_info():
        return 30 * 2**30, 80 * 2**30  # free, total: 62.5% in use

    @staticmethod
    def utilization():
        record("utilization")
        return 95

    @staticmethod
    def temperature():
        return 70

    @staticmethod
    def clock_rate():
        # Falls by a fifth after the fifth sample: throttling, as the script should say.
        record("clock_rate")
        from recorder import EVENTS
        return 1980 if sum(e["call"] == "clock_rate" for e in EVENTS) <= 5 else 1500


cuda = _Cuda()
version = types.SimpleNamespace(cuda="0.0-stand-in")
from torch import distributed, nn  # noqa: E402  (the submodules the script reaches as attributes)
backends = types.SimpleNamespace(cuda=types.SimpleNamespace(matmul=types.SimpleNamespace(
    allow_tf32=False)))
