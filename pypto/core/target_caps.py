"""On-chip buffer capacities and address alignment of a target, per memory space, in bytes.

The numbers come from the target description (``npu.buffer`` ops of
``pypto/target/targets/a2a3.mlir``, see docs/target.md), so AllocateMemoryAddr,
LowerPipelineLoops, AutoTileMatmulL0 and the interpreter read one table. A
``backend`` is a packaged target name (``"a2a3"``), a platform / backend alias
of it (``"a2a3sim"``, ``"Ascend910B"``) or the path of a user's edited copy of
a target file.
"""

from __future__ import annotations

import os
from enum import Enum

from pypto.dialects.enums import MemorySpace
from pypto.target.model import Target, TargetError, load_target

KIB = 1024


def target_for_backend(backend: str | os.PathLike[str] = "a2a3") -> Target:
    """The target a backend name (or target file path) denotes; ValueError if none."""
    try:
        return load_target(backend)
    except TargetError as e:
        raise ValueError(f"unknown backend {str(backend)!r}: {e}") from None


def capacity(space: MemorySpace | str, backend: str | os.PathLike[str] = "a2a3") -> int:
    """Bytes available in ``space`` on ``backend``."""
    target = target_for_backend(backend)
    name = space.value if isinstance(space, Enum) else str(space)
    try:
        return target.capacity[name]
    except KeyError:
        raise ValueError(
            f"target {target.name} ({target.source}) declares no npu.buffer for memory space {name!r}"
        ) from None


def capacities(backend: str | os.PathLike[str] = "a2a3") -> dict[str, int]:
    """Every declared memory space's bytes on ``backend``."""
    return dict(target_for_backend(backend).capacity)


def block_bytes(backend: str | os.PathLike[str] = "a2a3") -> int:
    """Byte alignment of every on-chip address AllocateMemoryAddr gives (the DMA block, ``block_bytes``)."""
    return target_for_backend(backend).block_bytes


def __getattr__(name: str) -> dict[MemorySpace, int] | int:
    """``A2A3_CAPACITY`` (kept for old callers): the a2a3 table by MemorySpace; ``ALIGNMENT``:
    a2a3's :func:`block_bytes`."""
    if name == "A2A3_CAPACITY":
        caps = load_target("a2a3").capacity
        return {s: caps[s.value] for s in MemorySpace if s.value in caps}
    if name == "ALIGNMENT":
        return block_bytes()
    raise AttributeError(name)


def align(n: int, alignment: int | None = None) -> int:
    """``n`` rounded up to a multiple of ``alignment`` (default: a2a3's :func:`block_bytes`)."""
    a = block_bytes() if alignment is None else alignment
    return (n + a - 1) // a * a
