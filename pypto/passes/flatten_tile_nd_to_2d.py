"""FlattenTileNdTo2D: every tile computed on is 2-D.

PTO tiles are 2-D; as upstream PyPTO's pass 14, tiles of rank 1 or rank >= 3
become 2-D: ``[n]`` -> ``[1, n]``, ``[d0, ..., dk]`` -> ``[d0 * ... * dk-1,
dk]`` (row-major, so the elements keep their order):

- a ``pl.tile.load`` of an N-D window keeps its N-D form (it addresses the
  N-D tensor) and is followed by a ``pl.tile.reshape`` to 2-D that every user
  reads; a ``pl.tile.store`` of a flattened tile gets a ``pl.tile.reshape``
  back to the window's N-D shape first (a tile that was 2-D as written, stored into
  an N-D tensor, stays: its window is ``[1, ..., 1, rows, cols]``);
- ``pl.tile.create`` / ``pl.tile.full`` / ``pl.tile.reshape`` /
  ``pl.tile.tpop_*`` are rebuilt with the 2-D shape; elementwise ops (binary,
  scalar, unary, cast) and loop / if carries are retyped;
- ``pl.tile.read`` indices are linearised; rank-1 ``pl.tile.slice`` /
  ``pl.tile.assemble`` get a leading 0 offset.

Other ops on N-D tiles (e.g. an N-D slice) are reported as user errors.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import Rewriter

from pypto.core.analysis.functions import INCORE_KINDS
from pypto.diagnostics import error_at
from pypto.dialects import op_families as F
from pypto.dialects.tile_ops import (
    TileAssembleOp,
    TileCreateOp,
    TileFullOp,
    TileLoadOp,
    TileReadOp,
    TileReshapeOp,
    TileSliceOp,
    TileStoreOp,
    TileTpopFromAicOp,
    TileTpopFromAivOp,
)
from pypto.dialects.types import TileType, flat_shape

from .base import FunctionPass, index_constant
from .registry import register_pass

_RETYPE = (F.BinaryOp, F.ScalarBinaryOp, F.UnaryOp, F.CastOp)
_RESHAPE_ATTR = {TileCreateOp: "shape", TileFullOp: "shape", TileReshapeOp: "shape", TileTpopFromAicOp: "shape", TileTpopFromAivOp: "shape"}


def _is_nd(t: Attribute) -> bool:
    return isinstance(t, TileType) and len(t.get_shape()) not in (0, 2)


def _flat_type(t: TileType) -> TileType:
    return t.with_(shape=flat_shape(t.get_shape()), view=None)


def _reshape(value: SSAValue, shape: tuple[int, ...], at: Operation, after: bool) -> TileReshapeOp:
    op = TileReshapeOp.build_from_args({"input": value}, {"shape": F.INTS.to_attr(list(shape))})
    assert isinstance(op, TileReshapeOp)
    op.location = at.location
    block = at.parent_block()
    assert block is not None
    if after:
        block.insert_op_after(op, at)
    else:
        block.insert_op_before(op, at)
    return op


class _Flattener:
    def __init__(self) -> None:
        self.nd_shape: dict[SSAValue, tuple[int, ...]] = {}

    def retype(self, value: SSAValue, new: Attribute) -> SSAValue:
        old = value.type
        if isinstance(old, TileType):
            shape = self.nd_shape.get(value, old.get_shape())
        nv = Rewriter.replace_value_with_new_type(value, new)
        if isinstance(old, TileType):
            self.nd_shape[nv] = shape
        return nv

    def block(self, block: Block) -> None:
        for op in list(block.ops):
            self.op(op)

    def op(self, op: Operation) -> None:
        if isinstance(op, scf.ForOp):
            body = op.body.block
            for init, arg in zip(op.iter_args, body.args[1:], strict=True):
                if init.type != arg.type:
                    self.retype(arg, init.type)
            self.block(body)
            term = body.last_op
            assert term is not None
            for res, y in zip(op.results, term.operands, strict=True):
                if res.type != y.type:
                    self.retype(res, y.type)
            return
        if isinstance(op, scf.IfOp):
            for region in op.regions:
                for b in region.blocks:
                    self.block(b)
            term = op.true_region.block.last_op if op.true_region.blocks else None
            if term is not None:
                for res, y in zip(op.results, term.operands, strict=True):
                    if res.type != y.type:
                        self.retype(res, y.type)
            return
        for region in op.regions:
            for b in region.blocks:
                self.block(b)
        if isinstance(op, TileStoreOp):
            t = op.tile.type
            out_rank = len(op.output.type.get_shape())  # type: ignore[union-attr]
            if isinstance(t, TileType) and len(t.get_shape()) != out_rank:
                nd = self.nd_shape.get(op.tile)
                if nd is None and len(t.get_shape()) == 2:
                    return  # a 2-D tile into the last two dimensions of an N-D window, as written
                if nd is None or len(nd) != out_rank:
                    raise error_at(op, "FlattenTileNdTo2D: cannot find the N-D shape of the stored tile")
                back = _reshape(op.tile, nd, op, after=False)
                back.result.name_hint = f"{op.tile.name_hint or 't'}_nd"
                op.operands[0] = back.result
            return
        if isinstance(op, TileReadOp):
            self.read(op)
            return
        results = [r for r in op.results if _is_nd(r.type)]
        if not results:
            if isinstance(op, (TileSliceOp, TileAssembleOp)):
                self.rank1_window(op)
            return
        r = results[0]
        t = r.type
        assert isinstance(t, TileType)
        flat = flat_shape(t.get_shape())
        if isinstance(op, TileLoadOp):
            name = r.name_hint
            view = _reshape(r, flat, op, after=True)
            r.replace_uses_with_if(view.result, lambda use: use.operation is not view)
            view.result.name_hint = name
            r.name_hint = f"{name}_nd" if name else None
            self.nd_shape[view.result] = t.get_shape()
            return
        attr = _RESHAPE_ATTR.get(type(op))
        if attr is not None:
            op.properties[attr] = F.INTS.to_attr(list(flat))
            self.retype(r, _flat_type(t))
            return
        if isinstance(op, _RETYPE):
            self.retype(r, _flat_type(t))
            return
        if isinstance(op, (TileSliceOp, TileAssembleOp)) and len(t.get_shape()) == 1:
            self.rank1_window(op)
            return
        raise error_at(op, f"FlattenTileNdTo2D: {op.name} on a {len(t.get_shape())}-D tile is not supported")

    def rank1_window(self, op: Operation) -> None:
        """A rank-1 slice/assemble on a flattened tile: offset [0, o], shape [1, n]."""
        src = op.operands[0]
        if not (isinstance(src.type, TileType) and len(src.type.get_shape()) == 2):
            return
        offsets = list(op.offset)  # type: ignore[attr-defined]
        if len(offsets) != 1:
            return
        zero = index_constant(0)
        block = op.parent_block()
        assert block is not None
        block.insert_op_before(zero, op)
        if isinstance(op, TileSliceOp):
            valid = list(op.valid_shape)
            one = index_constant(1)
            block.insert_op_before(one, op)
            shape = F.INTS.from_attr(op.shape)
            new = TileSliceOp.build_from_args(
                {"input": src, "offset": [zero.result, offsets[0]], "valid_shape": [one.result, *valid] if valid else []},
                {"shape": F.INTS.to_attr([1, *shape])},
            )
        else:
            assert isinstance(op, TileAssembleOp)
            new = TileAssembleOp.build_from_args(
                {"target": src, "source": op.source, "offset": [zero.result, offsets[0]]},
                {k: v for k, v in op.properties.items() if k == "atomic"},
            )
        new.location = op.location
        new.results[0].name_hint = op.results[0].name_hint
        block.insert_op_before(new, op)
        nd = self.nd_shape.get(op.results[0], op.results[0].type.get_shape())  # type: ignore[union-attr]
        op.results[0].replace_all_uses_with(new.results[0])
        self.nd_shape[new.results[0]] = nd
        Rewriter.erase_op(op)

    def read(self, op: TileReadOp) -> None:
        src = op.input
        nd = self.nd_shape.get(src)
        idx = list(op.indices)
        if nd is None or len(idx) == 2:
            return
        block = op.parent_block()
        assert block is not None
        new_ops: list[Operation] = []
        if len(idx) == 1:
            zero = index_constant(0)
            new_ops.append(zero)
            row, col = zero.result, idx[0]
        else:
            row = idx[0]
            for d, i in zip(nd[1:-1], idx[1:-1], strict=True):
                c = index_constant(d)
                mul = arith.MuliOp(row, c.result)
                add = arith.AddiOp(mul.result, i)
                new_ops += [c, mul, add]
                row = add.result
            col = idx[-1]
        block.insert_ops_before(new_ops, op)
        new = TileReadOp.build_from_args({"input": src, "indices": [row, col]}, {})
        new.location = op.location
        Rewriter.replace_op(op, new)


@register_pass
@dataclass(frozen=True)
class FlattenTileNdTo2D(FunctionPass):
    """Rank-1 and rank >= 3 tiles -> 2-D (row-major)."""

    FUNCTION_TYPES = INCORE_KINDS

    def run_on_function(self, f: func.FuncOp, ctx: Context) -> None:
        fl = _Flattener()
        for block in f.body.blocks:
            fl.block(block)

