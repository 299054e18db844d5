# SPDX-License-Identifier: MIT
"""Recording stand-in for torch.nn (only what the measurement script imports)."""
