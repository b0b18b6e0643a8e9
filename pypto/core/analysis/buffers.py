"""What a buffer is in the ``pl`` dialect: the tiles whose MemRefs name one
base (views, in-place results and loop carries included). Their common live
range is :meth:`pypto.core.analysis.liveness.Liveness.buffer_range`."""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.ir import SSAValue

from pypto.dialects.types import TileType

from .memref import function_values, memref_of


def tile_buffers(f: func.FuncOp) -> dict[str, list[SSAValue]]:
    """The tile values of ``f`` that carry a MemRef, by base, in program order."""
    out: dict[str, list[SSAValue]] = {}
    for v in function_values(f):
        m = memref_of(v.type)
        if m is not None and isinstance(v.type, TileType):
            out.setdefault(m.base.data, []).append(v)
    return out
