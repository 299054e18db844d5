# SPDX-License-Identifier: MIT
"""A recording stand-in for bitsandbytes' optimizers."""
import types

import torch

optim = types.SimpleNamespace(**{name: type(name, (torch.optim.Optimizer,), {})
                                 for name in ("AdamW8bit", "PagedAdamW8bit", "Lion")})
