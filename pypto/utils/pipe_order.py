"""The order to run the parts of a Group one after the other so that cube<->vector pipes work as FIFOs.

The parts of a Group run together on the chip; the device interpreter and the
torch code run them in turn, so a part that pops a pipe goes after the part
that pushes it. Used by :mod:`pypto.runtime.run` (on ``pto`` ops) and
:mod:`pypto.debug.torch_codegen` (on ``pl`` ops).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from typing import TypeVar

T = TypeVar("T")


def pushers_first(parts: Sequence[T], pipes: Callable[[T], tuple[AbstractSet[str], AbstractSet[str]]]) -> list[T] | None:
    """``parts`` reordered so each comes after every other part that pushes a pipe it pops (stable
    otherwise); ``pipes(part)`` is (directions it pushes, directions it pops). None when no such order
    exists (two parts push to each other: only interleaved cores could run them)."""
    uses = [pipes(p) for p in parts]
    order: list[T] = []
    waiting = list(range(len(parts)))
    while waiting:
        pushed = [uses[i][0] for i in waiting]
        ready = next(
            (i for i in waiting if not any(uses[i][1] & pushed[k] for k, j in enumerate(waiting) if j != i)), None
        )
        if ready is None:
            return None
        order.append(parts[ready])
        waiting.remove(ready)
    return order
