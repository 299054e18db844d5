# SPDX-License-Identifier: MIT
"""A stand-in for SGLang's package: only its one-batch benchmark."""
