"""What a pto op touches: the buffers it reads and writes, on which pipe.

A :class:`Buffer` is a byte range of one address space when its address is
known (``alloc_tile addr =``, ``pointer_cast``, ``tassign``), else the
allocation itself (``alloc_tile`` without addr, ``memref.alloc``); GM
buffers are the kernel argument a view was made from (through
``pto.comm.peer_view`` too: the peer may be this rank), and a
``partition_view`` of a ``make_tensor_view`` with constant strides and sizes
is a byte range of it relative to its offsets' symbolic part (:func:`gm_region`).
Two buffers *may overlap* when they are in the same space and their ranges
intersect, or they are the same allocation, or either one's extent is
unknown. Distinct GM arguments are assumed not to alias; two views of one
are disjoint only when their ranges, measured from the same symbolic
offsets, are.

An :class:`Access` is one operand of one op: the buffer, read or write, and
the op's pipe. ``ins`` operands are reads and ``outs`` operands writes
(``tmatmul.acc`` reads its ``acc_in``); results that name a buffer are
writes too (``%t = pto.tpop_from_aic`` writes its tile on PIPE_MTE2).
``load_scalar`` / ``store_scalar`` read / write their GM pointer's buffer on PIPE_S (so a scalar read
of what a ``tstore`` or ``tput_async`` wrote waits for it).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation, SSAValue

from pypto.core.analysis.constants import constant_int
from pypto.ptoas.dialect import DpsOp, tile_of
from pypto.ptoas.dialect.attrs import AddressSpace, AddressSpaceAttr, Pipe
from pypto.ptoas.dialect.isa_misc_ops import BindTileOp, BitcastOp, LoadScalarOp, StoreScalarOp, SubsetOp
from pypto.ptoas.dialect.tile_ops import AllocTileOp, PointerCastOp, TAssignOp, TReshapeOp
from pypto.ptoas.dialect.types import PartitionTensorViewType, PtrType, TensorViewType, element_bits
from pypto.ptoas.dialect.view_ops import AddPtrOp, MakeTensorViewOp, PartitionViewOp

ALIAS_OPS = (TReshapeOp, BitcastOp, SubsetOp, BindTileOp)
"""Ops whose result names (part of) the bytes of their first operand."""

GM = "gm"


@dataclass(frozen=True)
class Buffer:
    """A byte range ``[start, end)`` of ``space``, or an allocation ``root`` of unknown address."""

    space: str
    start: int | None = None
    end: int | None = None
    root: object | None = None
    region: tuple[object, ...] | None = None
    """GM: what ``[start, end)`` is relative to (view pointer, strides, symbolic offsets; :func:`gm_region`)."""

    def overlaps(self, other: Buffer) -> bool:
        """May these two buffers share a byte?"""
        if self.space != other.space:
            return False
        if self.space == GM:
            if self.root is not other.root:
                return False
            if self.region is None or self.region != other.region:
                return True
            return self.start < other.end and other.start < self.end  # type: ignore[operator]
        if None not in (self.start, self.end, other.start, other.end):
            return self.start < other.end and other.start < self.end  # type: ignore[operator]
        if self.root is not None and other.root is not None:
            return self.root is other.root
        return True

    def __str__(self) -> str:
        if self.start is not None:
            return f"{self.space}[{self.start}, {self.end})"
        return f"{self.space}<alloc>"


@dataclass(frozen=True)
class Access:
    """One read or write of a buffer by an op (``op_id`` numbers ops in the function)."""

    op_id: int
    buffer: Buffer
    write: bool
    pipe: Pipe

    def conflicts(self, other: Access) -> bool:
        """RAW / WAR / WAW on overlapping buffers."""
        return (self.write or other.write) and self.buffer.overlaps(other.buffer)


def _tile_bytes(t: object) -> int | None:
    tile = tile_of(t)  # type: ignore[arg-type]
    if tile is None or -1 in tile.shape:
        return None
    return tile.shape[0] * tile.shape[1] * element_bits(tile.dtype) // 8


def _space(t: object) -> str | None:
    tile = tile_of(t)  # type: ignore[arg-type]
    if tile is not None and tile.space is not None:
        return tile.space.value
    if isinstance(t, MemRefType) and isinstance(t.memory_space, AddressSpaceAttr):
        return AddressSpace(t.memory_space.data).value
    return None


PEER_VIEW = "pto.comm.peer_view"
"""``pto.comm.peer_view`` by name: the comm dialect loads on first use only (a single-chip compile never does)."""


def _is_peer_view(op: object) -> bool:
    return isinstance(op, Operation) and op.name == PEER_VIEW


def _gm_root(value: SSAValue) -> object:
    """The kernel argument (or allocation) a GM view / pointer comes from."""
    seen = 0
    while seen < 64:
        seen += 1
        owner = value.owner
        if isinstance(owner, PartitionViewOp):
            value = owner.source
        elif isinstance(owner, MakeTensorViewOp):
            value = owner.ptr
        elif isinstance(owner, AddPtrOp):
            value = owner.ptr
        elif _is_peer_view(owner):
            value = owner.operands[0]
        else:
            break
    return value


def _affine(value: SSAValue) -> tuple[object, int]:
    """``value`` as ``symbol + constant`` (symbol None: a constant), through ``arith.addi`` of a constant."""
    c = constant_int(value)
    if c is not None:
        return None, c
    owner = value.owner
    if isinstance(owner, arith.AddiOp):
        for a, b in ((owner.lhs, owner.rhs), (owner.rhs, owner.lhs)):
            k = constant_int(b)
            if k is not None:
                sym, c = _affine(a)
                return sym, c + k
    return value, 0


def gm_region(value: SSAValue) -> tuple[int, int, tuple[object, ...]] | None:
    """A ``partition_view`` of a ``make_tensor_view`` (or its ``peer_view``) with constant strides and sizes:
    its bounding byte interval ``[start, end)`` measured from its offsets' symbolic parts, and the key
    (view pointer, strides, element bits, symbols) two intervals must share to be compared. None: unknown."""
    pv = value.owner
    if not isinstance(pv, PartitionViewOp):
        return None
    view = pv.source.owner
    if _is_peer_view(view):
        view = view.operands[0].owner  # type: ignore[union-attr]
    if not isinstance(view, MakeTensorViewOp):
        return None
    t = pv.result.type
    assert isinstance(t, PartitionTensorViewType)
    strides = [constant_int(s) for s in view.strides]
    sizes = [constant_int(s) for s in pv.sizes]
    if None in strides or None in sizes or len(strides) != len(pv.offsets) or len(sizes) != len(strides):
        return None
    bits = element_bits(t.element_type)
    if bits % 8:
        return None
    terms = [_affine(o) for o in pv.offsets]
    lo = sum(c * s for (_, c), s in zip(terms, strides, strict=True))  # type: ignore[operator]
    hi = lo + sum((n - 1) * s for n, s in zip(sizes, strides, strict=True)) + 1  # type: ignore[operator]
    key = (view.ptr, tuple(strides), bits, tuple(sym for sym, _ in terms))
    return lo * bits // 8, hi * bits // 8, key


def _gm_buffer(value: SSAValue) -> Buffer:
    region = gm_region(value)
    if region is None:
        return Buffer(GM, root=_gm_root(value))
    return Buffer(GM, region[0], region[1], _gm_root(value), region[2])


def buffer_of(value: SSAValue) -> Buffer | None:
    """The buffer an operand names (None: not a buffer, e.g. a scalar)."""
    t = value.type
    if isinstance(t, PartitionTensorViewType | TensorViewType | PtrType):
        return _gm_buffer(value)
    space = _space(t)
    if space is None:
        return None
    if space == GM:
        return _gm_buffer(value)
    owner = value.owner
    size = _tile_bytes(t)
    if isinstance(owner, ALIAS_OPS):
        return buffer_of(owner.operands[0])  # a view of its source's bytes (a subset: within them)
    addr: int | None = None
    if isinstance(owner, AllocTileOp):
        if owner.addr is None:
            return Buffer(space, root=owner.result)
        addr = constant_int(owner.addr)
    elif isinstance(owner, TAssignOp):
        addr = constant_int(owner.addr)
    elif isinstance(owner, PointerCastOp) and len(owner.addrs) >= 1:
        addr = constant_int(owner.addrs[0])
    else:
        return Buffer(space, root=value)
    if addr is None or size is None:
        return Buffer(space)
    return Buffer(space, addr, addr + size)


SCALAR_GM_OPS = (LoadScalarOp, StoreScalarOp)
"""GM element reads / writes by the scalar unit (PIPE_S): PTOAS's Read / Write effect on the pointer."""


def op_pipe(op: Operation) -> Pipe | None:
    """The pipe a data op runs on (None for views, allocs, sync ops, non-pto ops)."""
    if isinstance(op, SCALAR_GM_OPS):
        return Pipe.PIPE_S
    if not isinstance(op, DpsOp):
        return None
    pipe = op.pipe()
    return pipe if isinstance(pipe, Pipe) else None


def accesses(op: Operation, op_id: int) -> list[Access]:
    """The buffer reads and writes of a destination-passing pto op."""
    pipe = op_pipe(op)
    if pipe is None:
        return []
    if isinstance(op, SCALAR_GM_OPS):
        buf = buffer_of(op.ptr)
        return [] if buf is None else [Access(op_id, buf, isinstance(op, StoreScalarOp), pipe)]
    assert isinstance(op, DpsOp)
    out: list[Access] = []
    for values, write in ((op.ins(), False), (op.outs(), True), (list(op.results), True)):
        for v in values:
            buf = buffer_of(v)
            if buf is not None:
                out.append(Access(op_id, buf, write, pipe))
    return out


__all__ = ["ALIAS_OPS", "GM", "Access", "Buffer", "accesses", "buffer_of", "constant_int", "gm_region", "op_pipe"]
