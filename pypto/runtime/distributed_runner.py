"""``pypto.runtime.distributed_runner``: upstream's module of the L3 runner; here the one helper its
examples import.

A HOST ``SubWorker`` callback receives its arguments as a list (``callback(args)``); upstream hands it
Simpler's mapped wire arguments and ``_tensor_from_continuous(arg)`` turns one into a zero-copy torch
tensor. Here the arguments already are torch tensors (views of the caller's host tensors), so it returns
them as they are; an object with a ``tensor`` or ``buffer`` attribute holding a tensor is unwrapped.
"""

from __future__ import annotations

from typing import Any

import torch


def _tensor_from_continuous(ct: Any) -> torch.Tensor:
    """The torch tensor of a SubWorker callback argument (zero-copy: writes reach the caller's tensor)."""
    if isinstance(ct, torch.Tensor):
        return ct
    for attr in ("tensor", "buffer"):
        inner = getattr(ct, attr, None)
        if isinstance(inner, torch.Tensor):
            return inner
    raise TypeError(f"expected a SubWorker callback argument (a torch tensor), got {type(ct).__name__}")
