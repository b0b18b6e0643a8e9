"""AutoTileMatmulL0: a tile matmul too big for L0 becomes a loop nest on sub-tiles.

The cube unit reads ``lhs`` from L0A (Left), ``rhs`` from L0B (Right) and
accumulates into L0C (Acc); their a2a3 capacities are in
:mod:`pypto.core.target_caps`. A ``pl.tile.matmul(lhs, rhs)`` /
``pl.tile.matmul_acc(acc, lhs, rhs)`` whose Mat operands ``[M, K] x [K, N]``
(or its ``[M, N]`` accumulator) exceed them is rewritten:

- K is split into ``nk`` chunks of ``tk`` (halving K, multiples of 16, until
  the ``[tm, tk]`` / ``[tk, tn]`` windows fit): the first chunk is a
  ``pl.tile.matmul`` (``matmul_acc`` onto the incoming accumulator), the rest a
  ``pl.range(1, nk)`` loop of ``pl.tile.matmul_acc`` carrying the accumulator;
  the L0 operands are ``pl.tile.extract(src, [r, c], [h, w],
  target_memory=pl.Mem.Left/Right)`` windows of the Mat tiles (named
  ``<src>_Left`` / ``<src>_Right``).
- When the ``[M, N]`` accumulator itself exceeds L0C, M and N are halved too
  into ``tm x tn`` blocks, which needs the result to go straight to DDR: the
  matmul's only use must be a ``pl.tile.store``; the nest is then
  ``for mo: for no: <K chain>; store(block, [o0 + mo*tm, o1 + no*tn], out)``
  with the output tensor carried through both loops. A result written whole into a Mat tile
  (``pl.tile.assemble(scratch, c, [o0, o1])``, the FIXPIPE write-back of a folded
  ``pl.cast(c, pl.BF16, mode="rint")``) is tiled the same way: each block is assembled into its
  window of the scratch.

Sums are taken in the same K order, so results match the untiled matmul up to
floating-point reassociation. When no tiling fits (a dimension not divisible
into multiples of 16, operands not in Mat, a large accumulator not stored
directly, ``matmul_acc`` with an oversized accumulator) the matmul is left
unchanged and perf hint PH002 says why.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import Rewriter

from pypto.core.analysis.constants import constant_int
from pypto.core.analysis.functions import INCORE_KINDS
from pypto.core.target_caps import capacity
from pypto.diagnostics import Severity, emit_at
from pypto.dialects import op_families as F
from pypto.dialects.dtypes import dtype_bits, dtype_name
from pypto.dialects.enums import MemorySpace, enum_attr
from pypto.dialects.tile_ops import TileAssembleOp, TileExtractOp, TileMatmulAccOp, TileMatmulOp, TileStoreOp
from pypto.dialects.types import DYNAMIC, TileType

from .base import FunctionPass, index_constant
from .registry import register_pass

CHECK = "AutoTileMatmulL0"
"""The check name perf hint PH002 carries."""

GRANULE = 16
"""Sub-tile dimensions stay multiples of the cube's 16 x 16 fractal."""


class TilingFailed(Exception):
    """Why a matmul cannot be tiled (the PH002 text)."""


@dataclass(frozen=True)
class Plan:
    m: int
    n: int
    k: int
    tm: int
    tn: int
    tk: int

    @property
    def blocks_mn(self) -> bool:
        return (self.tm, self.tn) != (self.m, self.n)


def _halve(d: int) -> int | None:
    h = d // 2
    return h if d % 2 == 0 and h % GRANULE == 0 else None


def plan_tiling(m: int, n: int, k: int, in_bytes: float, acc_bytes: int) -> Plan | None:
    """Sub-tile sizes that fit L0A / L0B / L0C; None if the matmul already fits.
    Raises TilingFailed when no split into multiples of 16 fits."""
    cap_a, cap_b, cap_c = capacity(MemorySpace.Left), capacity(MemorySpace.Right), capacity(MemorySpace.Acc)
    if m * k * in_bytes <= cap_a and k * n * in_bytes <= cap_b and m * n * acc_bytes <= cap_c:
        return None
    tm, tn = m, n
    while tm * tn * acc_bytes > cap_c:
        big, small = (tm, tn) if tm >= tn else (tn, tm)
        h = _halve(big) or _halve(small)
        if h is None:
            raise TilingFailed(f"the [{tm}, {tn}] accumulator block ({tm * tn * acc_bytes} B) exceeds L0C ({cap_c} B) and cannot be halved into multiples of {GRANULE}")
        if _halve(big) is not None:
            tm, tn = (h, tn) if tm >= tn else (tm, h)
        else:
            tm, tn = (tm, h) if tm >= tn else (h, tn)
    tk = k
    while tm * tk * in_bytes > cap_a or tk * tn * in_bytes > cap_b:
        h = _halve(tk)
        if h is None:
            raise TilingFailed(f"K = {k} cannot be split into chunks that are multiples of {GRANULE} with [{tm}, tk] in L0A ({cap_a} B) and [tk, {tn}] in L0B ({cap_b} B)")
        tk = h
    return Plan(m, n, k, tm, tn, tk)


class _Builder:
    """Builds the sub-tile ops of one matmul into a list."""

    def __init__(self, at: Operation):
        self.at = at
        self.ops: list[Operation] = []

    def add(self, op: Operation) -> Operation:
        op.location = self.at.location
        self.ops.append(op)
        return op

    def const(self, v: int) -> SSAValue:
        return self.add(index_constant(v)).results[0]

    def mul(self, a: SSAValue, c: int) -> SSAValue:
        return self.add(arith.MuliOp(a, self.const(c))).results[0]

    def addi(self, a: SSAValue, b: SSAValue) -> SSAValue:
        ca, cb = constant_int(a), constant_int(b)
        if ca is not None and cb is not None:
            return self.const(ca + cb)
        if ca == 0:
            return b
        if cb == 0:
            return a
        return self.add(arith.AddiOp(a, b)).results[0]

    def extract(self, src: SSAValue, r: SSAValue, c: SSAValue, shape: tuple[int, int], space: MemorySpace) -> SSAValue:
        op = TileExtractOp.build_from_args(
            {"input": src, "offsets": [r, c]}, {"shapes": F.INTS.to_attr(list(shape)), "target_memory": enum_attr(space)}
        )
        op.results[0].name_hint = f"{src.name_hint or 't'}_{space.value}"
        return self.add(op).results[0]


def _k_chain(b: _Builder, op: TileMatmulOp | TileMatmulAccOp, plan: Plan, r0: SSAValue, c0: SSAValue) -> SSAValue:
    """The accumulator of ``lhs[r0:r0+tm, :] @ rhs[:, c0:c0+tn]`` (plus the
    incoming accumulator for matmul_acc), K in ``tk`` chunks."""
    lhs, rhs = op.lhs, op.rhs
    name = op.results[0].name_hint
    zero = b.const(0)
    a0 = b.extract(lhs, r0, zero, (plan.tm, plan.tk), MemorySpace.Left)
    b0 = b.extract(rhs, zero, c0, (plan.tk, plan.tn), MemorySpace.Right)
    if isinstance(op, TileMatmulAccOp):
        first = TileMatmulAccOp.build_from_args({"acc": op.acc, "lhs": a0, "rhs": b0}, {})
    else:
        first = TileMatmulOp.build_from_args({"lhs": a0, "rhs": b0}, {})
    acc = b.add(first).results[0]
    acc.name_hint = name
    nk = plan.k // plan.tk
    if nk == 1:
        return acc
    body = Block(arg_types=[IndexType(), acc.type])
    body.args[0].name_hint = "ko"
    body.args[1].name_hint = f"{name}_iter" if name else None
    inner = _Builder(op)
    off = inner.mul(body.args[0], plan.tk)
    ak = inner.extract(lhs, r0, off, (plan.tm, plan.tk), MemorySpace.Left)
    bk = inner.extract(rhs, off, c0, (plan.tk, plan.tn), MemorySpace.Right)
    step = inner.add(TileMatmulAccOp.build_from_args({"acc": body.args[1], "lhs": ak, "rhs": bk}, {})).results[0]
    step.name_hint = name
    inner.add(scf.YieldOp(step))
    body.add_ops(inner.ops)
    loop = b.add(scf.ForOp(b.const(1), b.const(nk), b.const(1), [acc], body))
    loop.results[0].name_hint = name
    return loop.results[0]


def _only_sink(op: Operation) -> TileStoreOp | TileAssembleOp | None:
    """The result's only use when it writes the whole accumulator out: a ``pl.tile.store`` to DDR or
    an Acc -> Mat ``pl.tile.assemble`` (the FIXPIPE write-back into an L1 scratch)."""
    uses = list(op.results[0].uses)
    if len(uses) != 1:
        return None
    user, index = uses[0].operation, uses[0].index
    if isinstance(user, TileStoreOp) and index == 0:
        return user
    if isinstance(user, TileAssembleOp) and index == 1:
        return user
    return None


def _tile_blocks(op: TileMatmulOp, plan: Plan, sink: TileStoreOp | TileAssembleOp) -> None:
    """The M/N block nest writing each accumulator block straight to DDR (store) or into its window
    of the Mat scratch (assemble), the written tensor / scratch carried through the loops."""
    b = _Builder(op)
    if isinstance(sink, TileStoreOp):
        o0, o1 = list(sink.offsets)
        out = sink.output
    else:
        o0, o1 = list(sink.offset)
        out = sink.target
    mo_n, no_n = plan.m // plan.tm, plan.n // plan.tn

    def write(bb: _Builder, acc: SSAValue, r: SSAValue, c: SSAValue, dest: SSAValue) -> SSAValue:
        if isinstance(sink, TileStoreOp):
            new = TileStoreOp.build_from_args(
                {"tile": acc, "offsets": [r, c], "output": dest}, {k: v for k, v in sink.properties.items() if k == "atomic"}
            )
        else:
            new = TileAssembleOp.build_from_args({"target": dest, "source": acc, "offset": [r, c]}, {})
        new.results[0].name_hint = sink.results[0].name_hint
        return bb.add(new).results[0]

    def n_level(builder: _Builder, r0: SSAValue, out_in: SSAValue) -> SSAValue:
        def one_block(bb: _Builder, c0: SSAValue, out_cur: SSAValue) -> SSAValue:
            acc = _k_chain(bb, op, plan, r0, c0)
            return write(bb, acc, bb.addi(o0, r0), bb.addi(o1, c0), out_cur)

        if no_n == 1:
            return one_block(builder, builder.const(0), out_in)
        body = Block(arg_types=[IndexType(), out.type])
        body.args[0].name_hint = "no"
        body.args[1].name_hint = out.name_hint
        inner = _Builder(op)
        res = one_block(inner, inner.mul(body.args[0], plan.tn), body.args[1])
        inner.add(scf.YieldOp(res))
        body.add_ops(inner.ops)
        loop = builder.add(scf.ForOp(builder.const(0), builder.const(no_n), builder.const(1), [out_in], body))
        loop.results[0].name_hint = sink.results[0].name_hint
        return loop.results[0]

    if mo_n == 1:
        final = n_level(b, b.const(0), out)
    else:
        body = Block(arg_types=[IndexType(), out.type])
        body.args[0].name_hint = "mo"
        body.args[1].name_hint = out.name_hint
        inner = _Builder(op)
        res = n_level(inner, inner.mul(body.args[0], plan.tm), body.args[1])
        inner.add(scf.YieldOp(res))
        body.add_ops(inner.ops)
        loop = b.add(scf.ForOp(b.const(0), b.const(mo_n), b.const(1), [out], body))
        loop.results[0].name_hint = sink.results[0].name_hint
        final = loop.results[0]
    block = sink.parent_block()
    assert block is not None
    block.insert_ops_before(b.ops, sink)
    sink.results[0].replace_all_uses_with(final)
    Rewriter.erase_op(sink)
    Rewriter.erase_op(op)


def _describe(op: TileMatmulOp | TileMatmulAccOp) -> str:
    lt, rt = op.lhs.type, op.rhs.type
    assert isinstance(lt, TileType) and isinstance(rt, TileType)
    return f"{op.name} {list(lt.get_shape())} x {list(rt.get_shape())} (pl.{dtype_name(lt.element_type)})"


def tile_matmul(op: TileMatmulOp | TileMatmulAccOp) -> None:
    """Tile one matmul if it exceeds L0; emit PH002 when it cannot."""
    lt, rt, res = op.lhs.type, op.rhs.type, op.results[0].type
    assert isinstance(lt, TileType) and isinstance(rt, TileType) and isinstance(res, TileType)
    (m, k), (_, n) = lt.get_shape(), rt.get_shape()
    if DYNAMIC in (m, n, k):
        return
    in_bytes = dtype_bits(lt.element_type) / 8
    acc_bytes = dtype_bits(res.element_type) // 8
    try:
        plan = plan_tiling(m, n, k, in_bytes, acc_bytes)
        if plan is None:
            return
        if lt.memory_space is not MemorySpace.Mat or rt.memory_space is not MemorySpace.Mat:
            raise TilingFailed(
                f"its operands are in {lt.memory_space.value} / {rt.memory_space.value}; sub-tiles are extracted from Mat"
            )
        store = None
        if plan.blocks_mn:
            if isinstance(op, TileMatmulAccOp):
                raise TilingFailed(f"the [{m}, {n}] accumulator of matmul_acc exceeds L0C")
            store = _only_sink(op)
            if store is None:
                raise TilingFailed(
                    f"the [{m}, {n}] result exceeds L0C and is not stored to DDR or written into a Mat tile directly"
                )
    except TilingFailed as e:
        emit_at(
            op,
            Severity.REMARK,
            f"{_describe(op)} exceeds the L0 buffers (L0A {capacity(MemorySpace.Left)} B, L0B "
            f"{capacity(MemorySpace.Right)} B, L0C {capacity(MemorySpace.Acc)} B) and could not be tiled: {e}. "
            "Consider splitting the matmul by hand or using dimensions that are multiples of 16.",
            rule=CHECK,
            code="PH002",
        )
        return
    if store is not None:
        assert isinstance(op, TileMatmulOp)
        _tile_blocks(op, plan, store)
        return
    b = _Builder(op)
    zero = b.const(0)
    result = _k_chain(b, op, plan, zero, zero)
    block = op.parent_block()
    assert block is not None
    block.insert_ops_before(b.ops, op)
    op.results[0].replace_all_uses_with(result)
    Rewriter.erase_op(op)


@register_pass
@dataclass(frozen=True)
class AutoTileMatmulL0(FunctionPass):
    """Matmuls exceeding L0A/L0B/L0C -> M/N/K loop nests (PH002 when impossible)."""

    DIAGNOSTICS = {CHECK: "PH002"}

    FUNCTION_TYPES = INCORE_KINDS

    def run_on_function(self, f: func.FuncOp, ctx: Context) -> None:
        for mm in [o for o in f.body.walk() if isinstance(o, (TileMatmulOp, TileMatmulAccOp))]:
            tile_matmul(mm)
