"""On-chip buffer capacities of a target, per memory space, in bytes.

a2a3 numbers from ../shared/reference/a2a3-costs.md (perf_sim defaults): UB
(Vec) 192 KiB, L1 (Mat) 512 KiB, L0A (Left) / L0B (Right) 64 KiB, L0C (Acc)
128 KiB. Bias, scale and scalar buffers are not in the reference; the values
below are documented fallbacks. The device issue replaces this table with the
target described as IR; until then every pass reads capacities from here.
"""

from __future__ import annotations

from pypto.dialects.enums import MemorySpace

KIB = 1024

A2A3_CAPACITY: dict[MemorySpace, int] = {
    MemorySpace.Vec: 192 * KIB,
    MemorySpace.Mat: 512 * KIB,
    MemorySpace.Left: 64 * KIB,
    MemorySpace.Right: 64 * KIB,
    MemorySpace.Acc: 128 * KIB,
    MemorySpace.Bias: 1 * KIB,  # fallback
    MemorySpace.LeftScale: 4 * KIB,  # fallback
    MemorySpace.RightScale: 4 * KIB,  # fallback
    MemorySpace.ScalarLocal: 16 * KIB,  # fallback
}

ALIGNMENT = 32
"""Byte alignment of every on-chip address (the DMA block size)."""


def capacity(space: MemorySpace, backend: str = "a2a3") -> int:
    """Bytes available in ``space`` on ``backend``."""
    if backend not in ("a2a3", "Ascend910B"):
        raise ValueError(f"unknown backend {backend!r}")
    return A2A3_CAPACITY[space]


def align(n: int, alignment: int = ALIGNMENT) -> int:
    return (n + alignment - 1) // alignment * alignment
