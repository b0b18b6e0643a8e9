"""Which on-chip bytes a kernel may read before it writes them: the only ones the C++ header fills with 0xFF.

The header's launches read uninitialised on-chip memory as 0xFF bytes. An entry function whose reads this
module can follow starts with ``pto::cpu::fill_before_read({...})``: 0xFF over the bytes it returns, no fill
anywhere else (a kernel whose every tile is TLOADed or computed in full fills nothing). Without that call
(hand-written C++, or a kernel this module cannot follow) the header fills each TASSIGNed range at its
first TASSIGN of the launch.

The buffers and the read / write operands are :mod:`pypto.ptoas.passes.access`'s (what insert-sync
orders): a DPS op reads its ``ins`` and writes its ``outs``. A write counts as one that covers its bytes
only when it covers the whole tile: the op's class says which rows x cols of the destination it writes
without reading them (``DpsOp.write_extent``), and that is the tile's shape, from static valid shapes
(the type's, or the ``alloc_tile``'s constant valid operands, with no ``set_validshape`` of the tile).
Anything else a destination gets (a partial or read-modify-write op) counts as a read of it. ``tmp``
operands of vector ops are scratch (``DpsOp.scratch``). The walk is conservative: the ops of a region run
from the state before its op, and only ``scf.if`` keeps what both branches wrote; an on-chip operand of
unknown address, a call, an unstructured region or an unmodelled op touching a tile gives up (None).
"""

from __future__ import annotations

from xdsl.dialects import scf
from xdsl.dialects.func import CallOp, FuncOp
from xdsl.ir import Block, Operation, SSAValue

from pypto.core.analysis.constants import constant_int
from pypto.ptoas.dialect import DpsOp, tile_of
from pypto.ptoas.dialect.isa_misc_ops import DeclareTileMemRefOp
from pypto.ptoas.dialect.tile_ops import AllocTileOp, PointerCastOp, SetValidShapeOp, TAssignOp
from pypto.ptoas.dialect.types import DYNAMIC, TileBufType, element_bits
from pypto.ptoas.passes.access import ALIAS_OPS, GM, Buffer, buffer_of

Ranges = list[tuple[int, int]]
"""Sorted, disjoint, non-adjacent byte ranges ``[lo, hi)``."""

_TILE_DEFS = (AllocTileOp, PointerCastOp, TAssignOp, SetValidShapeOp, DeclareTileMemRefOp, *ALIAS_OPS)
"""Ops that name or describe tiles without reading or writing their bytes."""


class _Unknown(Exception):
    """The walk cannot follow the function."""


def union(ranges: Ranges, lo: int, hi: int) -> Ranges:
    """``ranges`` with ``[lo, hi)`` added (merged with what it overlaps or touches)."""
    out: Ranges = []
    for a, b in ranges:
        if b < lo or a > hi:
            out.append((a, b))
        else:
            lo, hi = min(lo, a), max(hi, b)
    out.append((lo, hi))
    return sorted(out)


def missing(ranges: Ranges, lo: int, hi: int) -> Ranges:
    """The parts of ``[lo, hi)`` outside ``ranges``."""
    out: Ranges = []
    pos = lo
    for a, b in ranges:
        if b <= pos or a >= hi:
            continue
        if a > pos:
            out.append((pos, a))
        pos = max(pos, b)
    if pos < hi:
        out.append((pos, hi))
    return out


def intersect(x: Ranges, y: Ranges) -> Ranges:
    """The bytes in both."""
    out: Ranges = []
    for a, b in x:
        for c, d in y:
            lo, hi = max(a, c), min(b, d)
            if lo < hi:
                out.append((lo, hi))
    return sorted(out)


def static_valid(value: SSAValue) -> tuple[int, int] | None:
    """The tile's valid shape when it is known at compile time and no ``set_validshape`` changes it."""
    t = value.type
    tile = tile_of(t)
    if tile is None or not isinstance(t, TileBufType):
        return None
    if any(isinstance(use.operation, SetValidShapeOp) for use in value.uses):
        return None
    rows, cols = tile.valid
    owner = value.owner
    if DYNAMIC in (rows, cols):
        if not isinstance(owner, AllocTileOp):
            return None
        if rows == DYNAMIC:
            rows = constant_int(owner.valid_row) if owner.valid_row is not None else None  # type: ignore[assignment]
        if cols == DYNAMIC:
            cols = constant_int(owner.valid_col) if owner.valid_col is not None else None  # type: ignore[assignment]
        if rows is None or cols is None:
            return None
    return rows, cols


def _on_chip(value: SSAValue) -> Buffer | None:
    """The on-chip buffer an operand names (None: a scalar or GM); unknown bytes give up."""
    buf = buffer_of(value)
    if buf is None or buf.space == GM:
        return None
    if buf.start is None or buf.end is None:
        raise _Unknown
    return buf


def _covers(op: DpsOp, value: SSAValue, buf: Buffer) -> bool:
    """Does ``op`` write every byte of ``buf`` through ``value`` without reading them?"""
    tile = tile_of(value.type)
    if tile is None or tile.shape[0] * tile.shape[1] * element_bits(tile.dtype) != 8 * (buf.end - buf.start):  # type: ignore[operator]
        return False  # a view of part of the buffer (subset)
    return op.write_extent(value, static_valid) == tile.shape


class _Walk:
    """The byte ranges written for sure so far, and those read while maybe unwritten, per space."""

    def __init__(self) -> None:
        self.exposed: dict[str, Ranges] = {}

    def block(self, block: Block, written: dict[str, Ranges]) -> dict[str, Ranges]:
        for op in block.ops:
            written = self.op(op, written)
        return written

    def op(self, op: Operation, written: dict[str, Ranges]) -> dict[str, Ranges]:
        if isinstance(op, CallOp):
            raise _Unknown
        if op.regions:
            if any(len(r.blocks) > 1 for r in op.regions):
                raise _Unknown
            after = [self.block(r.blocks[0], dict(written)) if r.blocks else dict(written) for r in op.regions]
            if isinstance(op, scf.IfOp) and len(after) == 2:
                return {s: intersect(after[0].get(s, []), after[1].get(s, [])) for s in after[0]}
            return written
        if not isinstance(op, DpsOp):
            values = [*op.operands, *op.results]
            if not isinstance(op, _TILE_DEFS) and any(_on_chip(v) is not None for v in values):
                raise _Unknown  # an op reading or writing tile bytes that the access model does not know
            return written
        scratch = op.scratch()
        for v in op.ins():
            buf = None if v in scratch else _on_chip(v)
            if buf is not None:
                self.read(buf, written)
        covered: list[Buffer] = []
        for v in [*op.outs(), *op.results]:
            buf = _on_chip(v)
            if buf is None:
                continue
            if _covers(op, v, buf):
                covered.append(buf)
            else:
                self.read(buf, written)  # a partial or read-modify-write: what it keeps counts as read
        for buf in covered:
            written = {**written, buf.space: union(written.get(buf.space, []), buf.start, buf.end)}  # type: ignore[arg-type]
        return written

    def read(self, buf: Buffer, written: dict[str, Ranges]) -> None:
        for lo, hi in missing(written.get(buf.space, []), buf.start, buf.end):  # type: ignore[arg-type]
            self.exposed[buf.space] = union(self.exposed.get(buf.space, []), lo, hi)


def read_before_written(func: FuncOp) -> dict[str, Ranges] | None:
    """Per on-chip space, the bytes ``func`` may read before it writes them in the same launch (only the
    spaces with some); None when the walk cannot follow it (then every TASSIGNed range is filled)."""
    if not func.body.blocks:
        return None
    walk = _Walk()
    try:
        if len(func.body.blocks) > 1:
            raise _Unknown
        walk.block(func.body.block, {})
    except _Unknown:
        return None
    return {space: ranges for space, ranges in sorted(walk.exposed.items()) if ranges}


__all__ = ["Ranges", "intersect", "missing", "read_before_written", "static_valid", "union"]
