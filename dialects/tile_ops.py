"""Tile-level ops (``pl.tile.*``): on-chip buffers in a memory space.

Vector ops take Vec tiles; ``matmul`` takes Left x Right into Acc; ``load``,
``store`` and ``move`` cross memory spaces; ``alloc`` appears after InitMemRef.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import IndexType, StringAttr
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
)

from . import op_families as F
from .enums import AtomicType, MemorySpace, PadValue, TileLayout
from .op_base import BOOL, DTYPE, INT, INTS, Arg, ArgKind, ArgView, EnumCodec, attr, value, value_list
from .op_facts import valid_shape
from .op_families import ALLOCATES, PURE, READS, WRITES, _check_indices
from .types import PtrType, TensorType, TileType, TileViewAttr


class _TileLayer:
    LAYER: ClassVar[str] = F.TILE


def _whole(tile: SSAValue) -> list[SSAValue | int]:
    """The valid shape of a tile valid everywhere: its static shape."""
    assert isinstance(tile.type, TileType)
    return list(tile.type.get_shape())


class _RowReduceValid:
    """A row reduction's valid shape: its input's valid rows by one column (ptoas: ``(valid_row, 1)``)."""

    def result_valid_shape(self) -> list[SSAValue | int] | None:
        v = valid_shape(self.input)  # type: ignore[attr-defined]
        return None if v is None else [v[0], 1]


class _ColReduceValid:
    """A column reduction's valid shape: one row by its input's valid columns (ptoas: ``(1, valid_col)``)."""

    def result_valid_shape(self) -> list[SSAValue | int] | None:
        v = valid_shape(self.input)  # type: ignore[attr-defined]
        return None if v is None else [1, v[-1]]


class _InputValid:
    """The result is valid where ``input`` is (a broadcast into ``input``'s shape, a cast)."""

    def result_valid_shape(self) -> list[SSAValue | int] | None:
        return valid_shape(self.input)  # type: ignore[attr-defined]


def _ops() -> list[type]:
    return [v for v in globals().values() if isinstance(v, type) and getattr(v, "name", "").startswith("pl.tile.")]

@irdl_op_definition
class TileAddOp(_TileLayer, F.BinaryOp):
    name = "pl.tile.add"
    ROW_MAJOR: ClassVar[bool] = True
    TORCH: ClassVar[str | None] = "({lhs} + {rhs})"
    PTO_OP: ClassVar[str | None] = "pto.tadd"


@irdl_op_definition
class TileSubOp(_TileLayer, F.BinaryOp):
    name = "pl.tile.sub"
    ROW_MAJOR: ClassVar[bool] = True
    TORCH: ClassVar[str | None] = "({lhs} - {rhs})"
    PTO_OP: ClassVar[str | None] = "pto.tsub"


@irdl_op_definition
class TileMulOp(_TileLayer, F.BinaryOp):
    name = "pl.tile.mul"
    ROW_MAJOR: ClassVar[bool] = True
    TORCH: ClassVar[str | None] = "({lhs} * {rhs})"
    PTO_OP: ClassVar[str | None] = "pto.tmul"


@irdl_op_definition
class TileDivOp(_TileLayer, F.BinaryOp):
    name = "pl.tile.div"
    TORCH: ClassVar[str | None] = "_div({lhs}, {rhs})"
    PTO_OP: ClassVar[str | None] = "pto.tdiv"


@irdl_op_definition
class TileMaximumOp(_TileLayer, F.BinaryOp):
    name = "pl.tile.maximum"
    ROW_MAJOR: ClassVar[bool] = True
    TORCH: ClassVar[str | None] = "torch.maximum({lhs}, {rhs})"
    PTO_OP: ClassVar[str | None] = "pto.tmax"


@irdl_op_definition
class TileMinimumOp(_TileLayer, F.BinaryOp):
    name = "pl.tile.minimum"
    ROW_MAJOR: ClassVar[bool] = True
    TORCH: ClassVar[str | None] = "torch.minimum({lhs}, {rhs})"
    PTO_OP: ClassVar[str | None] = "pto.tmin"


@irdl_op_definition
class TileMaximumsOp(_TileLayer, F.ScalarBinaryOp):
    name = "pl.tile.maximums"
    ROW_MAJOR: ClassVar[bool] = True
    TORCH: ClassVar[str | None] = "torch.clamp({lhs}, min={rhs})"
    PTO_OP: ClassVar[str | None] = "pto.tmaxs"


@irdl_op_definition
class TileMinimumsOp(_TileLayer, F.ScalarBinaryOp):
    name = "pl.tile.minimums"
    TORCH: ClassVar[str | None] = "torch.clamp({lhs}, max={rhs})"
    PTO_OP: ClassVar[str | None] = "pto.tmins"


@irdl_op_definition
class TileAddsOp(_TileLayer, F.ScalarBinaryOp):
    name = "pl.tile.adds"
    ROW_MAJOR: ClassVar[bool] = True
    TORCH: ClassVar[str | None] = "({lhs} + {rhs})"
    PTO_OP: ClassVar[str | None] = "pto.tadds"


@irdl_op_definition
class TileSubsOp(_TileLayer, F.ScalarBinaryOp):
    name = "pl.tile.subs"
    ROW_MAJOR: ClassVar[bool] = True
    TORCH: ClassVar[str | None] = "({lhs} - {rhs})"
    PTO_OP: ClassVar[str | None] = "pto.tsubs"


@irdl_op_definition
class TileMulsOp(_TileLayer, F.ScalarBinaryOp):
    name = "pl.tile.muls"
    ROW_MAJOR: ClassVar[bool] = True
    TORCH: ClassVar[str | None] = "({lhs} * {rhs})"
    PTO_OP: ClassVar[str | None] = "pto.tmuls"


@irdl_op_definition
class TileDivsOp(_TileLayer, F.ScalarBinaryOp):
    name = "pl.tile.divs"
    ROW_MAJOR: ClassVar[bool] = True
    TORCH: ClassVar[str | None] = "_div({lhs}, {rhs})"
    PTO_OP: ClassVar[str | None] = "pto.tdivs"


@irdl_op_definition
class TileExpOp(_TileLayer, F.UnaryOp):
    name = "pl.tile.exp"
    ROW_MAJOR: ClassVar[bool] = True
    TORCH: ClassVar[str | None] = "torch.exp({input})"
    PTO_OP: ClassVar[str | None] = "pto.texp"


@irdl_op_definition
class TileNegOp(_TileLayer, F.UnaryOp):
    name = "pl.tile.neg"
    TORCH: ClassVar[str | None] = "torch.neg({input})"
    PTO_OP: ClassVar[str | None] = "pto.tneg"
    FLOAT_ONLY: ClassVar[bool] = False


@irdl_op_definition
class TileReluOp(_TileLayer, F.UnaryOp):
    name = "pl.tile.relu"
    ROW_MAJOR: ClassVar[bool] = True
    TORCH: ClassVar[str | None] = "torch.relu({input})"
    PTO_OP: ClassVar[str | None] = "pto.trelu"
    FLOAT_ONLY: ClassVar[bool] = False


@irdl_op_definition
class TileSqrtOp(_TileLayer, F.UnaryOp):
    name = "pl.tile.sqrt"
    ROW_MAJOR: ClassVar[bool] = True
    TORCH: ClassVar[str | None] = "torch.sqrt({input})"
    PTO_OP: ClassVar[str | None] = "pto.tsqrt"


@irdl_op_definition
class TileRsqrtOp(_TileLayer, F.UnaryOp):
    name = "pl.tile.rsqrt"
    TORCH: ClassVar[str | None] = "torch.rsqrt({input})"
    PTO_OP: ClassVar[str | None] = "pto.trsqrt"
    INPLACE_SAFE: ClassVar[bool] = False


@irdl_op_definition
class TileRecipOp(_TileLayer, F.RecipOp):
    name = "pl.tile.recip"
    TORCH: ClassVar[str | None] = "torch.reciprocal({input})"
    PTO_OP: ClassVar[str | None] = "pto.trecip"


@irdl_op_definition
class TileRowSumOp(_RowReduceValid, _TileLayer, F.RowReduceOp):
    name = "pl.tile.row_sum"
    TORCH: ClassVar[str | None] = "_reduce({input}, 'sum', -1)"
    PTO_OP: ClassVar[str | None] = "pto.trowsum"


@irdl_op_definition
class TileRowMaxOp(_RowReduceValid, _TileLayer, F.RowReduceOp):
    name = "pl.tile.row_max"
    TORCH: ClassVar[str | None] = "_reduce({input}, 'max', -1)"
    PTO_OP: ClassVar[str | None] = "pto.trowmax"


@irdl_op_definition
class TileRowMinOp(_RowReduceValid, _TileLayer, F.RowReduceOp):
    name = "pl.tile.row_min"
    TORCH: ClassVar[str | None] = "_reduce({input}, 'min', -1)"
    PTO_OP: ClassVar[str | None] = "pto.trowmin"


@irdl_op_definition
class TileColSumOp(_ColReduceValid, _TileLayer, F.ColReduceOp):
    name = "pl.tile.col_sum"
    TORCH: ClassVar[str | None] = "_reduce({input}, 'sum', -2)"
    PTO_OP: ClassVar[str | None] = "pto.tcolsum"


@irdl_op_definition
class TileColMaxOp(_ColReduceValid, _TileLayer, F.ColReduceOp):
    name = "pl.tile.col_max"
    TORCH: ClassVar[str | None] = "_reduce({input}, 'max', -2)"
    PTO_OP: ClassVar[str | None] = "pto.tcolmax"


@irdl_op_definition
class TileRowExpandOp(_InputValid, _TileLayer, F.RowExpandOp):
    name = "pl.tile.row_expand"
    TORCH: ClassVar[str | None] = "_expand({row_vec}, {input})"
    PTO_OP: ClassVar[str | None] = "pto.trowexpand"
    KEEPS_VALID_SHAPE: ClassVar[bool] = False


@irdl_op_definition
class TileRowExpandSubOp(_TileLayer, F.RowExpandOp):
    name = "pl.tile.row_expand_sub"
    TORCH: ClassVar[str | None] = "({input} - {row_vec})"
    PTO_OP: ClassVar[str | None] = "pto.trowexpandsub"


@irdl_op_definition
class TileRowExpandDivOp(_TileLayer, F.RowExpandOp):
    name = "pl.tile.row_expand_div"
    TORCH: ClassVar[str | None] = "({input} / {row_vec})"
    PTO_OP: ClassVar[str | None] = "pto.trowexpanddiv"


@irdl_op_definition
class TileRowExpandMulOp(_TileLayer, F.RowExpandOp):
    name = "pl.tile.row_expand_mul"
    TORCH: ClassVar[str | None] = "({input} * {row_vec})"
    PTO_OP: ClassVar[str | None] = "pto.trowexpandmul"


@irdl_op_definition
class TileColExpandOp(_InputValid, _TileLayer, F.ColExpandOp):
    name = "pl.tile.col_expand"
    TORCH: ClassVar[str | None] = "_expand({col_vec}, {input})"
    PTO_OP: ClassVar[str | None] = "pto.tcolexpand"
    KEEPS_VALID_SHAPE: ClassVar[bool] = False


@irdl_op_definition
class TileColExpandMulOp(_TileLayer, F.ColExpandOp):
    name = "pl.tile.col_expand_mul"
    TORCH: ClassVar[str | None] = "({input} * {col_vec})"
    PTO_OP: ClassVar[str | None] = "pto.tcolexpandmul"


_MATMUL_TRANSPOSES = {
    flag: f"at tile level a transpose is part of the tile's type: move pl.tile.transpose_view(<the pl.Mem.Mat {side}>) "
    f"instead of the {side} itself (or call pl.matmul on the tensors, which takes {flag}=)"
    for flag, side in (("a_trans", "lhs"), ("b_trans", "rhs"))
}
"""What the tile matmuls say of the tensor matmul's ``a_trans`` / ``b_trans`` (``OTHER_LEVEL_ARGS``)."""


@irdl_op_definition
class TileMatmulOp(_TileLayer, F.MatmulOp):
    name = "pl.tile.matmul"
    PTO_OP: ClassVar[str | None] = "pto.tmatmul"
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (value("lhs"), value("rhs"))
    OTHER_LEVEL_ARGS: ClassVar[dict[str, str]] = _MATMUL_TRANSPOSES

    def result_valid_shape(self) -> list[SSAValue | int] | None:
        """``lhs``'s valid rows by ``rhs``'s valid columns."""
        lhs, rhs = valid_shape(self.lhs), valid_shape(self.rhs)
        return None if lhs is None or rhs is None else [lhs[0], rhs[-1]]


@irdl_op_definition
class TileMatmulAccOp(_TileLayer, F.MatmulAccOp):
    name = "pl.tile.matmul_acc"
    PTO_OP: ClassVar[str | None] = "pto.tmatmul.acc"
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (value("acc"), value("lhs"), value("rhs"))
    OTHER_LEVEL_ARGS: ClassVar[dict[str, str]] = _MATMUL_TRANSPOSES

    def result_valid_shape(self) -> list[SSAValue | int] | None:
        """The accumulator's."""
        return valid_shape(self.acc)


@irdl_op_definition
class TileCastOp(_InputValid, _TileLayer, F.CastOp):
    name = "pl.tile.cast"
    PTO_OP: ClassVar[str | None] = "pto.tcvt"


@irdl_op_definition
class TileFullOp(_TileLayer, F.FullOp):
    name = "pl.tile.full"
    PTO_OP: ClassVar[str | None] = "pto.texpands"

    def result_valid_shape(self) -> list[SSAValue | int] | None:
        """The whole tile."""
        return _whole(self.result)


@irdl_op_definition
class TileAssembleOp(_TileLayer, F.AssembleOp):
    name = "pl.tile.assemble"
    PTO_OP: ClassVar[str | None] = "pto.tmov"

    def result_valid_shape(self) -> list[SSAValue | int] | None:
        """The target's (the source is written into it)."""
        return valid_shape(self.target)


@irdl_op_definition
class TileSliceOp(_TileLayer, F.SliceOp):
    name = "pl.tile.slice"
    PTO_OP: ClassVar[str | None] = "pto.textract"

    def result_valid_shape(self) -> list[SSAValue | int] | None:
        """Its ``valid_shape``; the whole window when none is given (``pto.textract`` fills it)."""
        return list(self.valid_shape) or _whole(self.result)


@irdl_op_definition
class TileReshapeOp(_TileLayer, F.ReshapeOp):
    name = "pl.tile.reshape"
    PTO_OP: ClassVar[str | None] = "pto.treshape"

    def result_valid_shape(self) -> list[SSAValue | int] | None:
        """A 2-D reshape of a 2-D tile: the whole tile, as it is lowered (``pto.treshape``'s tile_buf is valid
        everywhere: ptoas ``lower_reshape``); else not stated (FlattenTileNdTo2D's N-D <-> 2-D reshapes)."""
        before = self.input.type
        if isinstance(before, TileType) and len(before.get_shape()) == 2 == len(self.result.type.get_shape()):  # type: ignore[attr-defined]
            return _whole(self.result)
        return None


@irdl_op_definition
class TileTransposeOp(_TileLayer, F.TransposeOp):
    """``pl.tile.transpose(tile, axis1, axis2, tmp_tile)``: a transposed copy (2-D Vec tiles; ``pto.ttrans``)."""

    name = "pl.tile.transpose"
    PTO_OP: ClassVar[str | None] = "pto.ttrans"

    def result_valid_shape(self) -> list[SSAValue | int] | None:
        """Its input's, the two dims swapped (a 2-D tile)."""
        v = valid_shape(self.input)
        return None if v is None or len(v) != 2 else [v[1], v[0]]


@irdl_op_definition
class TileTransposeViewOp(_TileLayer, F.LayerOp):
    """``pl.tile.transpose_view(tile)``: the same bytes seen as the transposed tile (zero copy).

    The trailing two dims swap and each of the block and scatter layouts flips its major-ness
    (``none_box`` stays): NZ <-> ZN, ND <-> DN. A tile stored column-major read row-major with
    swapped dims is its transpose, so one Mat load feeds both ``b`` and ``b.T`` into a matmul."""

    name = "pl.tile.transpose_view"
    PTO_OP: ClassVar[str | None] = "pto.treshape"
    TORCH: ClassVar[str | None] = "{input}.mT"
    input = operand_def(TileType)
    result = result_def(TileType)
    traits = PURE
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (value("input"),)
    VECTOR: ClassVar[bool] = False
    ALIAS_OPERAND: ClassVar[str | None] = "input"
    IS_VIEW: ClassVar[bool] = True

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        t = a.tile("input")
        shape = list(t.get_shape())
        if len(shape) < 2:
            raise a.fail(f"operand 'input' must have at least 2 dims, got shape {shape}")
        shape[-2], shape[-1] = shape[-1], shape[-2]
        v = t.effective_view()
        view = TileViewAttr.get(_flip_major(v.blayout.data), _flip_major(v.slayout.data), v.fractal.data)
        return TileType.get(shape, t.element_type, t.memory_space, view=view)

    def result_valid_shape(self) -> list[SSAValue | int] | None:
        """The whole tile, as the view is lowered: ``pto.treshape``'s tile_buf is valid everywhere (ptoas
        ``lower_reshape``), and the torch code's ``.mT`` carries no valid shape."""
        return _whole(self.result)


def _flip_major(layout: TileLayout) -> TileLayout:
    """row_major <-> col_major; none_box has no major-ness."""
    return {TileLayout.row_major: TileLayout.col_major, TileLayout.col_major: TileLayout.row_major}.get(layout, layout)


@irdl_op_definition
class TileConcatOp(_TileLayer, F.ConcatOp):
    name = "pl.tile.concat"
    NO_PTO: ClassVar[str | None] = "ptoas codegen has no tile concat yet (a located error says so)"
    TORCH: ClassVar[str | None] = "torch.cat([{lhs}, {rhs}], dim=-1)"


@irdl_op_definition
class TileReadOp(_TileLayer, F.ReadOp):
    name = "pl.tile.read"


@irdl_op_definition
class TileWriteOp(_TileLayer, F.WriteOp):
    name = "pl.tile.write"

    def result_valid_shape(self) -> list[SSAValue | int] | None:
        """The target's (one element of it set)."""
        return valid_shape(self.target)


_SPACE = EnumCodec(MemorySpace)
_LAYOUT = EnumCodec(TileLayout)


@irdl_op_definition
class TileFillpadOp(_TileLayer, F.UnaryOp):
    """``pl.tile.fillpad(tile, pad_value=pl.PadValue.zero)``: the tile with the region outside its valid
    shape set to the pad value (``min``/``max``: the dtype's lowest/highest), valid everywhere after."""

    name = "pl.tile.fillpad"
    pad_value = opt_prop_def()
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (value("input"), attr("pad_value", EnumCodec(PadValue), PadValue.zero))
    FLOAT_ONLY: ClassVar[bool] = False
    KEEPS_VALID_SHAPE: ClassVar[bool] = False
    PTO_OP: ClassVar[str | None] = "pto.tfillpad"
    TORCH_CALL: ClassVar[str | None] = "_fillpad"  # the torch runtime's helper: (input, pad_value)

    def result_valid_shape(self) -> list[SSAValue | int] | None:
        """The whole tile: the padding is data now."""
        return _whole(self.result)


@irdl_op_definition
class TileLoadOp(_TileLayer, F.LayerOp):
    """``pl.tile.load(tensor, offsets, shapes, valid_shapes, target_memory=)``:
    a DDR window into a Vec or Mat tile (MTE2)."""

    name = "pl.tile.load"
    PTO_OP: ClassVar[str | None] = "pto.tload"
    tensor = operand_def(TensorType)
    offsets = var_operand_def()
    valid_shapes = var_operand_def()
    shapes = prop_def()
    target_memory = opt_prop_def()
    result = result_def(TileType)
    traits = READS
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (
        value("tensor"),
        value_list("offsets"),
        attr("shapes", INTS),
        value_list("valid_shapes"),
        attr("target_memory", _SPACE, MemorySpace.Vec, always=True),
    )

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        src = a.tensor("tensor")
        shapes = tuple(a.attr("shapes"))
        rank = len(src.get_shape())
        if len(shapes) != rank:
            raise a.fail(f"shapes {list(shapes)} has rank {len(shapes)}, expected {rank} (the rank of 'tensor')")
        _check_indices(a, "offsets", rank)
        _check_indices(a, "valid_shapes", rank)
        F.check_window(a, shapes, tuple(src.get_shape()), "offsets", "valid_shapes")
        space = a.attr("target_memory")
        if space not in (MemorySpace.Vec, MemorySpace.Mat):
            raise a.fail(f"target_memory pl.Mem.{space.value} cannot be loaded from DDR (Vec or Mat; use pl.move for {space.value})")
        return TileType.get(shapes, src.element_type, space)

    def result_valid_shape(self) -> list[SSAValue | int] | None:
        """The window's ``valid_shapes``."""
        return list(self.valid_shapes)


@irdl_op_definition
class TileStoreOp(_TileLayer, F.LayerOp):
    """``pl.tile.store(tile, offsets, output)``: a Vec or Acc tile into a DDR
    window; the result is the updated tensor (MTE3 / FIXPIPE). A 2-D tile may go into an N-D output:
    the window is ``[1, ..., 1, rows, cols]`` at ``offsets`` (upstream's ``pl.store(row, [0, j, 0], out)``)."""

    name = "pl.tile.store"
    PTO_OP: ClassVar[str | None] = "pto.tstore"
    tile = operand_def(TileType)
    offsets = var_operand_def()
    output = operand_def(TensorType)
    atomic = opt_prop_def()
    result = result_def(TensorType)
    traits = WRITES
    ALIAS_OPERAND: ClassVar[str | None] = "output"
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (
        value("tile"),
        value_list("offsets"),
        value("output"),
        attr("atomic", EnumCodec(AtomicType), AtomicType.None_),
    )

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        t = a.tile("tile")
        out = a.tensor("output")
        if t.memory_space not in (MemorySpace.Vec, MemorySpace.Acc):
            raise a.fail(f"operand 'tile' is in memory space {t.memory_space.value}, expected Vec or Acc")
        rank, out_rank = len(t.get_shape()), len(out.get_shape())
        if rank != out_rank and not (rank == 2 and out_rank > 2):
            raise a.fail(f"operand 'tile' has rank {rank}, expected {out_rank} (the rank of 'output'), or a 2-D tile "
                         "(stored into the last two dimensions of 'output', the others of extent 1)")
        _check_indices(a, "offsets", len(out.get_shape()))
        if t.element_type != out.element_type:
            raise a.fail("operand 'tile' and operand 'output' have different dtypes; insert pl.cast")
        return out


@irdl_op_definition
class TileMoveOp(_TileLayer, F.LayerOp):
    """``pl.tile.move(tile, target_memory=)``: an on-chip copy (MTE1)."""

    name = "pl.tile.move"
    PTO_OP: ClassVar[str | None] = "pto.tmov"
    TORCH: ClassVar[str | None] = "_move({tile})"
    tile = operand_def(TileType)
    target_memory = prop_def()
    blayout = opt_prop_def()
    slayout = opt_prop_def()
    result = result_def(TileType)
    traits = PURE
    INPLACE_SAFE: ClassVar[bool] = False
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (
        value("tile"),
        attr("target_memory", _SPACE, keyword=True),
        attr("blayout", _LAYOUT, None),
        attr("slayout", _LAYOUT, None),
    )

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        t = a.tile("tile")
        space = a.attr("target_memory")
        if space == MemorySpace.DDR:
            raise a.fail("target_memory pl.Mem.DDR is not on chip; use pl.store")
        return TileType.get(t.get_shape(), t.element_type, space)

    def result_valid_shape(self) -> list[SSAValue | int] | None:
        """The moved tile's."""
        return valid_shape(self.tile)


@irdl_op_definition
class TileCreateOp(_TileLayer, F.LayerOp):
    """``pl.tile.create(shape, dtype=, target_memory=)``: an uninitialised tile."""

    name = "pl.tile.create"
    shape = prop_def()
    dtype = prop_def()
    target_memory = opt_prop_def()
    result = result_def(TileType)
    traits = ALLOCATES
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (
        attr("shape", INTS),
        attr("dtype", DTYPE, keyword=True),
        attr("target_memory", _SPACE, MemorySpace.Vec, always=True),
    )

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        space = a.attr("target_memory")
        if space == MemorySpace.DDR:
            raise a.fail("target_memory pl.Mem.DDR is not on chip; use pl.create_tensor")
        return TileType.get(a.attr("shape"), a.attr("dtype"), space)

    def result_valid_shape(self) -> list[SSAValue | int] | None:
        """The whole tile (its allocation is valid everywhere)."""
        return _whole(self.result)


@irdl_op_definition
class TileAllocOp(_TileLayer, F.LayerOp):
    """``mem_vec_3: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 65536)``: an on-chip
    allocation; tiles name it as the base of their MemRef (``base``)."""

    name = "pl.tile.alloc"
    TORCH: ClassVar[str | None] = "None"  # addresses play no part in the numerics
    NO_EFFECT_TRAIT: ClassVar[str] = (
        "tiles name their alloc by its MemRef base string, not by an SSA use, so xDSL would think it dead"
    )
    space = prop_def()
    size = prop_def()
    pinned = opt_prop_def()
    base = prop_def(StringAttr)
    result = result_def(PtrType)
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (
        attr("space", _SPACE),
        attr("size", INT),
        attr("pinned", BOOL, False),
    )

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        if a.attr("space") == MemorySpace.DDR:
            raise a.fail("space pl.Mem.DDR is not on chip")
        if a.attr("size") <= 0:
            raise a.fail(f"size must be positive, got {a.attr('size')}")
        return PtrType()


TILE_OPS: list[type] = _ops()


# ---- ops introduced by the tile passes (CanonicalizeTileSlice, AutoTileMatmulL0,
# ExpandMixedKernel) ---------------------------------------------------------------

_EXTRACT_MOVES = {
    (MemorySpace.Vec, MemorySpace.Vec),
    (MemorySpace.Mat, MemorySpace.Left),
    (MemorySpace.Mat, MemorySpace.Right),
}


@irdl_op_definition
class TileExtractOp(_TileLayer, F.LayerOp):
    """``pl.tile.extract(tile, offsets, shapes, target_memory=)``: copy a window
    of an on-chip tile into a new tile (``pto.textract``): Mat -> Left/Right
    (matmul operand preparation) or Vec -> Vec (a materialised slice)."""

    name = "pl.tile.extract"
    NO_TORCH: ClassVar[str | None] = "torch_codegen has no extract yet (CanonicalizeTileSlice and AutoTileMatmulL0 make it)"
    PTO_OP: ClassVar[str | None] = "pto.textract"
    input = operand_def(TileType)
    offsets = var_operand_def()
    shapes = prop_def()
    target_memory = opt_prop_def()
    result = result_def(TileType)
    traits = PURE
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (
        value("input"),
        value_list("offsets"),
        attr("shapes", INTS),
        attr("target_memory", _SPACE, MemorySpace.Vec, always=True),
    )

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        src = a.tile("input")
        shapes = tuple(a.attr("shapes"))
        full = src.get_shape()
        if len(shapes) != 2 or len(full) != 2:
            raise a.fail(f"extract works on 2-D tiles, got input shape {list(full)} and window {list(shapes)}")
        _check_indices(a, "offsets", 2)
        for d, n in zip(shapes, full, strict=True):
            if n >= 0 and d > n:
                raise a.fail(f"window shape {list(shapes)} exceeds the input shape {list(full)}")
        space = a.attr("target_memory")
        if (src.memory_space, space) not in _EXTRACT_MOVES:
            raise a.fail(
                f"cannot extract from a {src.memory_space.value} tile into {space.value} (Mat -> Left/Right or Vec -> Vec)"
            )
        return TileType.get(shapes, src.element_type, space)


class _TpushOp(_TileLayer, F.LayerOp):
    """Push a tile to the other core of the group (cross-core pipe). The
    result is the pushed tile's handle; it is never used, so the printed DSL
    shows a bare statement ``pl.tile.tpush_to_aiv(z, split=0)``."""

    tile = operand_def(TileType)
    split = opt_prop_def()
    result = result_def(TileType)
    traits = WRITES  # the other core reads what is pushed
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (value("tile"), attr("split", INT, 0, always=True))
    SOURCE_SPACES: ClassVar[tuple[MemorySpace, ...]] = ()
    DIRECTION: ClassVar[str] = ""  # the pipe: "c2v" (cube -> vector) or "v2c"

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        t = a.tile("tile")
        if t.memory_space not in cls.SOURCE_SPACES:
            spaces = " or ".join(s.value for s in cls.SOURCE_SPACES)
            raise a.fail(f"operand 'tile' is in memory space {t.memory_space.value}, expected {spaces}")
        return t.with_(memref=None, view=None)


@irdl_op_definition
class TileTpushToAivOp(_TpushOp):
    """``pl.tile.tpush_to_aiv(tile, split=0)``: the cube core sends a tile to
    the vector core (C -> V)."""

    name = "pl.tile.tpush_to_aiv"
    PTO_OP: ClassVar[str | None] = "pto.tpush_to_aiv"
    TORCH: ClassVar[str | None] = "_tpush('c2v', {tile})"
    DIRECTION: ClassVar[str] = "c2v"
    SOURCE_SPACES: ClassVar[tuple[MemorySpace, ...]] = (MemorySpace.Acc, MemorySpace.Mat)


@irdl_op_definition
class TileTpushToAicOp(_TpushOp):
    """``pl.tile.tpush_to_aic(tile, split=0)``: the vector core sends a tile to
    the cube core (V -> C)."""

    name = "pl.tile.tpush_to_aic"
    PTO_OP: ClassVar[str | None] = "pto.tpush_to_aic"
    TORCH: ClassVar[str | None] = "_tpush('v2c', {tile})"
    DIRECTION: ClassVar[str] = "v2c"
    SOURCE_SPACES: ClassVar[tuple[MemorySpace, ...]] = (MemorySpace.Vec,)


class _TpopOp(_TileLayer, F.LayerOp):
    """Receive the next tile pushed by the other core of the group."""

    valid_shape = var_operand_def()
    shape = prop_def()
    dtype = prop_def()
    split = opt_prop_def()
    result = result_def(TileType)
    traits = WRITES  # takes the next tile off the pipe
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (
        attr("shape", INTS, keyword=True),
        attr("dtype", DTYPE, keyword=True),
        attr("split", INT, 0, always=True),
        Arg("valid_shape", ArgKind.VALUE_LIST, default=None, keyword=True),
    )
    SPACE: ClassVar[MemorySpace] = MemorySpace.Vec
    DIRECTION: ClassVar[str] = ""  # the pipe: "c2v" (cube -> vector) or "v2c"

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        shape = list(a.attr("shape"))
        if a.values("valid_shape"):
            if len(shape) != 2:
                raise a.fail(f"valid_shape= needs a 2-D tile, got shape {shape}")
            _check_indices(a, "valid_shape", 2)
            for dim, v in enumerate(a.values("valid_shape")):
                extent = F.constant_index(v)
                if extent is not None and not 0 <= extent <= shape[dim]:
                    raise a.fail(f"valid_shape[{dim}] = {extent} is outside the tile's {shape[dim]}")
        return TileType.get(shape, a.attr("dtype"), cls.SPACE)

    def result_valid_shape(self) -> list[SSAValue | int] | None:
        """Its ``valid_shape=`` (the pushed tile's valid region, when that is known only at run time), else the
        whole tile."""
        return list(self.valid_shape) or _whole(self.result)


@irdl_op_definition
class TileTpopFromAicOp(_TpopOp):
    """``pl.tile.tpop_from_aic(shape=, dtype=, split=0)``: the vector core
    receives a tile from the cube core, in Vec."""

    name = "pl.tile.tpop_from_aic"
    PTO_OP: ClassVar[str | None] = "pto.tpop_from_aic"
    TORCH: ClassVar[str | None] = "_tpop('c2v')"
    DIRECTION: ClassVar[str] = "c2v"
    SPACE: ClassVar[MemorySpace] = MemorySpace.Vec


@irdl_op_definition
class TileTpopFromAivOp(_TpopOp):
    """``pl.tile.tpop_from_aiv(shape=, dtype=, split=0)``: the cube core
    receives a tile from the vector core, in Mat."""

    name = "pl.tile.tpop_from_aiv"
    PTO_OP: ClassVar[str | None] = "pto.tpop_from_aiv"
    TORCH: ClassVar[str | None] = "_tpop('v2c')"
    DIRECTION: ClassVar[str] = "v2c"
    SPACE: ClassVar[MemorySpace] = MemorySpace.Mat


class _BlockQueryOp(_TileLayer, F.LayerOp):
    """A query of the SPMD launch this kernel runs in (``pto.get_block_idx`` & co): an ``index``
    scalar, the same on every core of one block. A task launched ``with pl.spmd(n)`` runs as ``n``
    blocks, each on its own core; a task outside ``pl.spmd`` is one block (index 0 of 1)."""

    result = result_def(IndexType)
    traits = PURE

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        return IndexType()


@irdl_op_definition
class TileGetBlockIdxOp(_BlockQueryOp):
    """``pl.tile.get_block_idx()``: this block's index in its SPMD launch (0 .. block_num-1)."""

    name = "pl.tile.get_block_idx"
    PTO_OP: ClassVar[str | None] = "pto.get_block_idx"
    TORCH: ClassVar[str | None] = "_BLOCK[0]"


@irdl_op_definition
class TileGetBlockNumOp(_BlockQueryOp):
    """``pl.tile.get_block_num()``: the number of blocks of this SPMD launch (``pl.spmd(n)``'s ``n``)."""

    name = "pl.tile.get_block_num"
    PTO_OP: ClassVar[str | None] = "pto.get_block_num"
    TORCH: ClassVar[str | None] = "_BLOCK[1]"


TILE_OPS[:] = _ops()
