"""Capacity and alignment of the pto address spaces, read from the target description.

On ``a2a3`` they are the packaged target's ``npu.buffer`` rows (``bytes``, ``align``, else
``block_bytes``; pto's ``vec`` is the target's ``Vec``, see :meth:`pypto.target.Target.space_name`).
``a5`` has no target description yet: its plan sizes (pto-dialect.md §6, PTOAS ``kA5``) are the
one table kept here, with a2a3's alignments (PTOAS plans both with the same rules).
"""

from __future__ import annotations

from pypto.ptoas.dialect.base import A2A3, A5
from pypto.target import load_target

ARCHS = (A2A3, A5)
"""The arches ptoas compiles for (``--arch``, ``pto.target_arch`` in any case)."""

A5_CAPACITY: dict[str, int] = {
    "vec": 253952,
    "mat": 524288,
    "left": 65536,
    "right": 65536,
    "acc": 262144,
    "bias": 65536,
    "scaling": 253952,
}
"""a5 bytes per pto address space (no a5 target description exists yet)."""


def capacity(space: str, arch: str = A2A3) -> int | None:
    """Bytes of the pto address space ``space`` on ``arch`` (None: the target declares no such buffer)."""
    if arch == A5:
        return A5_CAPACITY.get(space)
    target = load_target(arch)
    return target.capacity_of(space) if target.has_space(space) else None


def alignment(space: str) -> int:
    """Byte alignment of a tile address planned in the pto address space ``space``."""
    target = load_target(A2A3)
    return target.alignment_of(space) if target.has_space(space) else target.block_bytes
