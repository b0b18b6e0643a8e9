"""CanonicalizeTileSlice: tile slices that need a copy become ``pl.tile.extract``.

Upstream PyPTO's pass 17 (``canonicalize_tile_slice_pass.cpp``), for the
subset:

- a slice of a **Mat** tile read by a ``pl.tile.matmul`` / ``matmul_acc``
  operand becomes, at that operand, ``pl.tile.extract(src, offsets, shape,
  target_memory=pl.Mem.Left)`` (``Right`` for the rhs) -- the L1 -> L0 copy
  the cube needs (InferTileMemorySpace then has nothing to move); an extract
  reading a Mat slice reads the slice's source with the offsets added;
- a slice of a **Vec** tile is materialised in place (the slice op is replaced
  by ``pl.tile.extract(..., target_memory=pl.Mem.Vec)`` with the same name)
  when a zero-copy view would be wrong: a ``col_expand*`` reads it, its window
  is not contiguous (several rows, not all columns), or its start address is
  not provably 32-byte aligned (vector instructions need aligned bases);
- chained slices are peeled (``x[a:b][c:d]`` reads ``x`` at the summed offset).

Aligned contiguous Vec slices stay zero-copy views, and Mat slices with no
matmul/extract consumer are left alone. A slice carrying a ``valid_shape`` is not
a plain window and is not rewritten.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import gcd

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import Rewriter

from pypto.core.analysis.constants import constant_int
from pypto.core.analysis.functions import INCORE_KINDS
from pypto.core.target_caps import block_bytes
from pypto.dialects import op_families as F
from pypto.dialects.dtypes import dtype_bits
from pypto.dialects.enums import MemorySpace, enum_attr
from pypto.dialects.tile_ops import TileExtractOp, TileMatmulAccOp, TileMatmulOp, TileSliceOp
from pypto.dialects.types import TileType

from .base import FunctionPass
from .registry import register_pass

_MODULUS = 256


def known_multiple(value: SSAValue, depth: int = 0) -> int:
    """A divisor of every value ``value`` can take (capped at 256): constants,
    and ``+``, ``-``, ``*`` of them; 1 when unknown."""
    owner = value.owner
    if depth > 32 or not isinstance(owner, Operation):
        return 1
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return gcd(owner.value.value.data % _MODULUS, _MODULUS)
    if isinstance(owner, arith.MuliOp):
        return gcd(known_multiple(owner.lhs, depth + 1) * known_multiple(owner.rhs, depth + 1), _MODULUS)
    if isinstance(owner, (arith.AddiOp, arith.SubiOp)):
        return gcd(known_multiple(owner.lhs, depth + 1), known_multiple(owner.rhs, depth + 1))
    return 1


def add_index(a: SSAValue, b: SSAValue, before: Operation) -> SSAValue:
    """``a + b`` inserted before ``before`` (folded when either is constant 0)."""
    ca, cb = constant_int(a), constant_int(b)
    if cb == 0:
        return a
    if ca == 0:
        return b
    block = before.parent_block()
    assert block is not None
    if ca is not None and cb is not None:
        c = arith.ConstantOp(IntegerAttr(ca + cb, a.type))  # type: ignore[arg-type]
        block.insert_op_before(c, before)
        return c.result
    add = arith.AddiOp(a, b)
    add.location = before.location
    block.insert_op_before(add, before)
    return add.result


def _peel(op: TileSliceOp) -> tuple[SSAValue, list[SSAValue]]:
    """The non-slice source of a slice chain and the summed offsets."""
    src: SSAValue = op.input
    offs = list(op.offset)
    while isinstance(src.owner, TileSliceOp) and not list(src.owner.valid_shape):
        inner = src.owner
        offs = [add_index(a, b, op) for a, b in zip(inner.offset, offs, strict=True)]
        src = inner.input
    return src, offs


def _extract(src: SSAValue, offsets: list[SSAValue], shape: tuple[int, ...], space: MemorySpace, at: Operation) -> TileExtractOp:
    new = TileExtractOp.build_from_args(
        {"input": src, "offsets": offsets}, {"shapes": F.INTS.to_attr(list(shape)), "target_memory": enum_attr(space)}
    )
    assert isinstance(new, TileExtractOp)
    new.location = at.location
    block = at.parent_block()
    assert block is not None
    block.insert_op_before(new, at)
    return new


def _needs_vec_copy(op: TileSliceOp, src_type: TileType, offsets: list[SSAValue]) -> bool:
    shape = tuple(F.INTS.from_attr(op.shape))
    rows, cols = src_type.get_shape()
    if any(isinstance(u.operation, F.ColExpandOp) for u in op.result.uses):
        return True
    if shape[0] > 1 and shape[1] != cols:
        return True
    bits = dtype_bits(src_type.element_type)
    row_bytes = cols * bits // 8
    elem_bytes = max(bits // 8, 1)
    row_mult = gcd(known_multiple(offsets[0]) * row_bytes, _MODULUS)
    col_mult = gcd(known_multiple(offsets[1]) * elem_bytes, _MODULUS)
    return gcd(row_mult, col_mult) % block_bytes() != 0


def canonicalize_slice(op: TileSliceOp) -> None:
    """Rewrite one ``pl.tile.slice`` (see the module docstring)."""
    if list(op.valid_shape):
        return
    src_type = op.input.type
    if not isinstance(src_type, TileType) or len(src_type.get_shape()) != 2:
        return
    shape = tuple(F.INTS.from_attr(op.shape))
    if src_type.memory_space is MemorySpace.Mat:
        src, offs = _peel(op)
        for use in list(op.result.uses):
            user, index = use.operation, use.index
            if isinstance(user, (TileMatmulOp, TileMatmulAccOp)):
                lhs_index = 0 if isinstance(user, TileMatmulOp) else 1
                if index not in (lhs_index, lhs_index + 1):
                    continue
                space = MemorySpace.Left if index == lhs_index else MemorySpace.Right
                new = _extract(src, offs, shape, space, user)
                new.result.name_hint = op.result.name_hint
                user.operands[index] = new.result
            elif isinstance(user, TileExtractOp) and index == 0:
                inner = [add_index(a, b, user) for a, b in zip(offs, user.offsets, strict=True)]
                new = _extract(src, inner, tuple(F.INTS.from_attr(user.shapes)), user.result.type.memory_space, user)  # type: ignore[union-attr]
                new.result.name_hint = user.result.name_hint
                user.result.replace_all_uses_with(new.result)
                Rewriter.erase_op(user)
        if not op.result.uses:
            Rewriter.erase_op(op)
        return
    if src_type.memory_space is MemorySpace.Vec:
        src, offs = _peel(op)
        if _needs_vec_copy(op, src_type, offs):
            new = _extract(src, offs, shape, MemorySpace.Vec, op)
            new.result.name_hint = op.result.name_hint
            op.result.replace_all_uses_with(new.result)
            Rewriter.erase_op(op)
        elif src is not op.input:
            op.operands[0] = src
            for i, v in enumerate(offs):
                op.operands[1 + i] = v


@register_pass
@dataclass(frozen=True)
class CanonicalizeTileSlice(FunctionPass):
    """Tile slices needing a copy -> ``pl.tile.extract``."""

    FUNCTION_TYPES = INCORE_KINDS

    def run_on_function(self, f: func.FuncOp, ctx: Context) -> None:
        for s in [o for o in f.body.walk() if isinstance(o, TileSliceOp)]:
            canonicalize_slice(s)
