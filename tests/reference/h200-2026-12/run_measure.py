#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs one program that `gpuplan script` wrote, unchanged, with one difference: the model's
random initialisation happens on the GPU instead of the CPU.

The generated programs build the model with AutoModelForCausalLM.from_config(...) and then
move it with .to("cuda"). PyTorch fills bf16 tensors with normal_() on the CPU in one thread,
which for an 8B model takes minutes, more than the 60 s each program has here. This wrapper
runs from_config under `with torch.device("cuda")`, so the weights are created and initialised
on the GPU and the program's .to("cuda") has nothing left to move. Nothing else changes: the
settings, steps, timing and memory counters are the program's own (its peak counters are reset
after the warm-up steps, long after the build).

Usage: python3 run_measure.py PROGRAM.py [ARGS...]
MEASURE_INIT=cpu runs the program exactly as a user would (no patch)."""
import os
import runpy
import sys
import time


def patch():
    import torch
    from transformers import AutoModelForCausalLM

    original = AutoModelForCausalLM.from_config  # bound to the class

    def from_config_on_gpu(*args, **kwargs):
        t = time.perf_counter()
        try:  # a torch.device is a context manager from torch 2.0 on
            where = torch.device("cuda")
            enter, leave = where.__enter__, where.__exit__
        except Exception as ex:
            print(f"run_measure: no device context ({type(ex).__name__}: {ex}); built as the "
                  "program does", file=sys.stderr, flush=True)
            return original(*args, **kwargs)
        enter()
        try:
            model = original(*args, **kwargs)
        finally:
            leave(None, None, None)
        try:
            first = next(iter(model.parameters()))
            where = f"{getattr(first, 'device', '?')} ({getattr(first, 'dtype', '?')})"
        except Exception:
            where = "?"
        print(f"run_measure: from_config built on {where} in {time.perf_counter() - t:.1f} s",
              file=sys.stderr, flush=True)
        return model

    AutoModelForCausalLM.from_config = staticmethod(from_config_on_gpu)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    program = sys.argv[1]
    sys.argv = sys.argv[1:]
    if os.environ.get("MEASURE_INIT", "gpu") != "cpu":
        try:
            patch()
            print("run_measure: from_config patched to build under torch.device('cuda')",
                  file=sys.stderr, flush=True)
        except Exception as ex:  # the program still runs, initialising on the CPU
            print(f"run_measure: patch not applied ({type(ex).__name__}: {ex}); the program "
                  "initialises on the CPU", file=sys.stderr, flush=True)
    sys.path.insert(0, os.path.dirname(os.path.abspath(program)))
    runpy.run_path(program, run_name="__main__")


if __name__ == "__main__":
    main()
