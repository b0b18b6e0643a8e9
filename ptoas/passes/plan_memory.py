"""``plan-memory``: liveness-based byte addresses for ``pto.alloc_tile`` (memory_planner=PTOAS).

Per address space, each allocation is live from its ``alloc_tile`` to its last
use (a use nested in an ``scf.for`` / ``scf.if`` that is not the allocation's
own block counts as a use at the end of that op, so buffers used in a loop
stay live for the whole loop, and an allocation inside a loop body lives for the
whole of its innermost loop, as PTOAS's PlanMemory plans it; uses through ``treshape``/``bitcast``/``subset``/``bind_tile`` count): the block
ranges of :class:`pypto.core.analysis.liveness.Liveness` over
:func:`buffer_values`. Live ranges are placed first-fit in order of their
start at the space's alignment (32 B for vec/mat/bias/scaling, 512 B for
left/right/acc, as PTOAS), so allocations whose lifetimes do not overlap share
bytes. Over capacity is an error located at the allocation that does not fit.

``memref.alloc`` of an on-chip address space (PTOAS's memref form) is planned the
same way (its bytes: the product of its shape) and becomes ``pto.pointer_cast``
of its address, as PTOAS's PlanMemory rewrites it.

``pto.reserve_buffer {auto = true}`` (a FIFO's local buffer) is placed after the
other buffers, as PTOAS does: in the first aligned hole of its address space
that no planned buffer occupies (whatever their lifetimes); its ``base`` is set.
With ``auto = false`` (a fixed base) PTOAS's PlanMemory refuses to plan: an
allocation that needs planning is an error located at it.

``force=False`` (default) keeps addresses already given (PyPTO's
AllocateMemoryAddr, level-3 ``.pto``) and places only the allocations that
lack one, above the highest fixed byte; ``force=True`` re-plans everything.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp, i32, i64
from xdsl.dialects.func import FuncOp
from xdsl.dialects.memref import AllocOp
from xdsl.dialects.scf import ForOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from pypto.core.analysis.liveness import Liveness, LiveRange
from pypto.ptoas.dialect import target_arch
from pypto.ptoas.dialect.attrs import AddressSpaceAttr
from pypto.ptoas.dialect.isa_misc_ops import ReserveBufferOp
from pypto.ptoas.dialect.tile_ops import AllocTileOp, PointerCastOp
from pypto.ptoas.dialect.types import TILE_LOCS, TileBufType, element_bits
from pypto.ptoas.limits import alignment, capacity

from .access import ALIAS_OPS, constant_int
from .errors import pass_error


def _bytes(t: TileBufType) -> int:
    return t.rows.data * t.cols.data * element_bits(t.dtype) // 8


def local_memref_alloc(op: Operation) -> bool:
    """Is ``op`` a static ``memref.alloc`` in an on-chip address space (a tile PlanMemory places)?"""
    if not isinstance(op, AllocOp) or op.dynamic_sizes or op.symbol_operands:
        return False
    t = op.memref.type
    return (
        isinstance(t, MemRefType)
        and isinstance(t.memory_space, AddressSpaceAttr)
        and t.memory_space.data in TILE_LOCS
        and all(d >= 0 for d in t.get_shape())
    )


def _memref_bytes(t: MemRefType) -> int:
    n = 1
    for d in t.get_shape():
        n *= d
    return n * max(1, element_bits(t.element_type) // 8)


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


@dataclass
class _Live:
    op: AllocTileOp | AllocOp
    space: str
    size: int
    start: int
    end: int
    addr: int | None = None


def buffer_values(alloc: AllocTileOp | AllocOp) -> list[SSAValue]:
    """What one tile buffer is in pto IR: the ``alloc_tile`` (or ``memref.alloc``) result and every
    view of it (``treshape``, ``bitcast``, ``subset``, ``bind_tile``; views of views too)."""
    out: list[SSAValue] = []
    todo: list[SSAValue] = [alloc.results[0]]
    while todo:
        value = todo.pop()
        out.append(value)
        todo.extend(use.operation.result for use in value.uses if isinstance(use.operation, ALIAS_OPS))
    return out


def _place(lives: list[_Live], fixed_top: dict[str, int], arch: str) -> None:
    placed: list[_Live] = []
    for live in sorted(lives, key=lambda x: (x.start, -x.size)):
        align = alignment(live.space)
        addr = _align(fixed_top.get(live.space, 0), align)
        clash = sorted(
            (p for p in placed if p.space == live.space and p.start <= live.end and live.start <= p.end),
            key=lambda p: p.addr or 0,
        )
        for p in clash:
            assert p.addr is not None
            if addr + live.size <= p.addr:
                break
            addr = max(addr, _align(p.addr + p.size, align))
        cap = capacity(live.space, arch)
        if cap is not None and addr + live.size > cap:
            raise pass_error(
                live.op,
                f"plan-memory: {live.space} tile of {live.size} bytes does not fit (needs {addr + live.size}, "
                f"capacity {cap} on {arch})",
            )
        live.addr = addr
        placed.append(live)


def _set_addr(alloc: AllocTileOp, addr_value: SSAValue) -> None:
    new = AllocTileOp.build(
        operands=[[addr_value], [alloc.valid_row] if alloc.valid_row else [], [alloc.valid_col] if alloc.valid_col else []],
        result_types=[alloc.result.type],
        attributes=dict(alloc.attributes),
    )
    new.location = alloc.location
    new.result.name_hint = alloc.result.name_hint
    assert alloc.parent is not None
    alloc.parent.insert_op_before(new, alloc)
    alloc.result.replace_all_uses_with(new.result)
    alloc.detach()
    alloc.erase()


def _set_memref_addr(alloc: AllocOp, addr_value: SSAValue) -> None:
    new = PointerCastOp.build(operands=[[addr_value]], result_types=[alloc.memref.type])
    loc = getattr(alloc, "location", None)
    if loc is not None:
        new.location = loc
    new.result.name_hint = alloc.memref.name_hint
    assert alloc.parent is not None
    alloc.parent.insert_op_before(new, alloc)
    alloc.memref.replace_all_uses_with(new.result)
    alloc.detach()
    alloc.erase()


def _life(liveness: Liveness, alloc: AllocTileOp | AllocOp) -> LiveRange:
    life = liveness.buffer_range(buffer_values(alloc), coarse=True)
    parent = alloc.parent_op()
    while parent is not None and not isinstance(parent, FuncOp):
        if isinstance(parent, ForOp):  # reused every iteration: live for the whole loop
            return life.union(LiveRange(liveness.index(parent), liveness.end_index(parent)))
        parent = parent.parent_op()
    return life


def _reserve_buffers(func: FuncOp) -> list[ReserveBufferOp]:
    return [op for op in func.walk() if isinstance(op, ReserveBufferOp)]


def _is_auto(op: ReserveBufferOp) -> bool:
    auto = op.attributes.get("autoAlloc")
    return not isinstance(auto, IntegerAttr) or bool(auto.value.data)


def _check_manual_reserve(func: FuncOp, force: bool) -> None:
    """PTOAS: with a fixed-base ``reserve_buffer`` nothing may be left to plan."""
    manual = [op for op in _reserve_buffers(func) if not _is_auto(op)]
    if not manual:
        return
    for op in func.walk():
        if local_memref_alloc(op) or (isinstance(op, AllocTileOp) and (op.addr is None or force)):
            raise pass_error(
                op,
                "'memref.alloc' op cannot use pto.reserve_buffer with auto = false when local memref.alloc "
                "still requires PlanMemory allocation",
            )


def _place_reserve_buffers(func: FuncOp, lives: list[_Live], arch: str) -> None:
    """Give each ``auto`` reserve_buffer without ``base`` the first aligned hole of its space."""
    for op in _reserve_buffers(func):
        if not _is_auto(op) or "base" in op.attributes:
            continue
        loc, size = op.attributes["location"], op.attributes["size"]
        assert isinstance(loc, AddressSpaceAttr) and isinstance(size, IntegerAttr)
        space, need = loc.data.value, size.value.data
        align = alignment(space)
        occupied = sorted(
            (live.addr, live.addr + _align(live.size, align)) for live in lives if live.space == space and live.addr is not None
        )
        base = 0
        for begin, end in occupied:
            base = _align(base, align)
            if base + need <= begin:
                break
            base = max(base, end)
        base = _align(base, align)
        cap = capacity(space, arch)
        if cap is not None and base + need > cap:
            raise pass_error(op, "'pto.reserve_buffer' op failed to allocate local memory hole for reserve_buffer")
        op.attributes["base"] = IntegerAttr(base, i32)


def plan_func(func: FuncOp, arch: str, force: bool = False) -> int:
    """Assign addresses in one function; returns how many allocations were placed."""
    _check_manual_reserve(func, force)
    liveness = Liveness(func)
    lives: list[_Live] = []
    fixed_top: dict[str, int] = {}
    for op in func.walk():
        if local_memref_alloc(op):
            assert isinstance(op, AllocOp)
            mt = op.memref.type
            assert isinstance(mt, MemRefType) and isinstance(mt.memory_space, AddressSpaceAttr)
            life = _life(liveness, op)
            lives.append(_Live(op, mt.memory_space.data.value, _memref_bytes(mt), life.start, life.end))
            continue
        if not isinstance(op, AllocTileOp):
            continue
        t = op.result.type
        assert isinstance(t, TileBufType)
        space, size = t.space.value, _bytes(t)
        if op.addr is not None and not force:
            a = constant_int(op.addr)
            top = (a if a is not None else 0) + size
            fixed_top[space] = max(fixed_top.get(space, 0), top)
            continue
        life = _life(liveness, op)
        lives.append(_Live(op, space, size, life.start, life.end))
    _place(lives, fixed_top, arch)
    _place_reserve_buffers(func, lives, arch)
    if not lives:
        return 0
    consts: dict[int, SSAValue] = {}
    entry = func.body.block
    for live in lives:
        assert live.addr is not None
        if live.addr not in consts:
            c = ConstantOp(IntegerAttr(live.addr, i64))
            c.result.name_hint = f"c{live.addr}_i64"
            first = entry.first_op
            if first is None:
                entry.add_op(c)
            else:
                entry.insert_op_before(c, first)
            consts[live.addr] = c.result
        if isinstance(live.op, AllocOp):
            _set_memref_addr(live.op, consts[live.addr])
        else:
            _set_addr(live.op, consts[live.addr])
    return len(lives)


@dataclass(frozen=True)
class PlanMemoryPass(ModulePass):
    """``plan-memory`` (see the module docstring)."""

    name = "plan-memory"
    force: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        """Plan every function of the module."""
        for func in list(op.walk()):
            if isinstance(func, FuncOp) and func.body.blocks:
                plan_func(func, target_arch(func), self.force)
