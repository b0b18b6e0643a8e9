"""AllocateMemoryAddr (pass 35): give every on-chip buffer its byte address.

Per memory space, allocations get addresses in the order of their
``pl.tile.alloc`` ops, one after the other, each aligned to
:func:`pypto.core.target_caps.block_bytes` (the target's ``block_bytes``, 32 B on a2a3). Every tile's MemRef offset
becomes its buffer's address plus the offset it had inside the buffer (0 but
for views), so a MemRef reads ``(base, address within the space, size)`` as in
upstream's 35 dumps (softmax_rows: ``mem_vec_2`` at 0, ``mem_vec_3`` at 8192,
``mem_vec_4`` at 16384).

A buffer that does not fit the space's capacity on the backend
(:func:`pypto.core.target_caps.capacity`) is a user error, raised as a
:class:`pypto.diagnostics.DiagnosticError` located at the op that defines the
first tile living in it, naming that tile (its DSL name), its bytes, the space
and the capacity::

    kernel.py:5:9: error: tile 'big' needs 262144 bytes of Vec at address 0, which exceeds platform limit: Vec capacity is 196608 bytes on a2a3

DDR tensors are not placed (their MemRef offset stays 0).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue

from pypto.core.analysis.memref import alloc_ops, alloc_size, function_values, memref_of, rebase
from pypto.core.target_caps import align, block_bytes, capacity, target_for_backend
from pypto.diagnostics import error_at
from pypto.dialects.enums import MemorySpace
from pypto.dialects.types import MemRefAttr, TileType

from .base import FunctionPass
from .registry import register_pass


def _first_tile(f: func.FuncOp, base: str) -> SSAValue | None:
    for v in function_values(f):
        m = memref_of(v.type)
        if m is not None and m.base.data == base and isinstance(v.type, TileType):
            return v
    return None


def _tile_name(v: SSAValue | None, base: str) -> str:
    if v is not None and v.name_hint:
        return v.name_hint
    return base


def assign_addresses(f: func.FuncOp, backend: str = "a2a3") -> dict[str, int]:
    """Place the allocs of ``f``; returns base -> address. Raises a located
    DiagnosticError when a buffer exceeds its space's capacity."""
    cursor: dict[MemorySpace, int] = {}
    addresses: dict[str, int] = {}
    alignment = block_bytes(backend)
    for alloc in alloc_ops(f):
        space = alloc.space
        space_value: MemorySpace = space.data  # type: ignore[attr-defined]
        base = alloc.base.data
        size = alloc_size(alloc)
        addr = align(cursor.get(space_value, 0), alignment)
        cap = capacity(space_value, backend)
        if addr + size > cap:
            tile = _first_tile(f, base)
            where: Operation = tile.owner if tile is not None and isinstance(tile.owner, Operation) else alloc
            name = _tile_name(tile, base)
            raise error_at(
                where,
                f"tile '{name}' needs {size} bytes of {space_value.value} at address {addr}, which exceeds platform limit: "
                f"{space_value.value} capacity is {cap} bytes on {backend}",
                hint=f"{space_value.value} holds {cap} bytes; {addr} are taken by earlier buffers. "
                "Use smaller tiles (split the loop) or fewer live tiles.",
            )
        addresses[base] = addr
        cursor[space_value] = addr + size

    def place(m: MemRefAttr) -> MemRefAttr | None:
        addr = addresses.get(m.base.data)
        if addr is None:
            return None
        return MemRefAttr.get(m.base.data, addr + m.offset.data, m.size.data)

    rebase(f, place)
    return addresses


@register_pass
@dataclass(frozen=True)
class AllocateMemoryAddr(FunctionPass):
    """Sequential ``block_bytes``-aligned addresses per memory space, checked against
    the backend's capacities (``backend`` option, default ``a2a3``)."""

    backend: str = "a2a3"

    def __post_init__(self) -> None:
        """An unknown ``backend`` (``-p 'allocate-memory-addr{backend=x}'``) is a ValueError here, where
        the pass is built from its options (pypto-opt reports it as a bad option), not a bug in the pass."""
        target_for_backend(self.backend)

    def run_on_function(self, f: func.FuncOp, ctx: Context) -> None:
        assign_addresses(f, self.backend)
