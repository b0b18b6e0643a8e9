"""Op families shared by the tensor and tile layers.

A family fixes the IRDL fields, the DSL signature and the typing rule; the
concrete ops in ``tensor_ops`` and ``tile_ops`` only add their name and their
layer (``LAYER``). Tensor ops broadcast; tile ops need equal shapes and, for
vector ops, operands in the Vec space.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import MemoryAllocEffect, MemoryReadEffect, MemoryWriteEffect, Pure

from .dtypes import dtype_bits, dtype_name, dtype_type, is_dtype, is_float, is_integer
from .enums import AtomicType, CastMode, MemorySpace
from .op_base import (
    BOOL,
    DTYPE,
    FLOAT,
    INT,
    INTS,
    STR,
    Arg,
    ArgView,
    EnumCodec,
    PLOp,
    attr,
    describe_type,
    opt_value,
    value,
    value_list,
)
from .types import DYNAMIC, TensorType, TileType

TILE = "tile"
TENSOR = "tensor"

Shaped = TileType | TensorType

# xDSL traits: value-semantic ops are Pure (DCE/CSE may drop or merge them); ops that
# write a buffer in place (an Out parameter, an accumulator) or produce a fresh buffer
# say so, so that xDSL keeps them apart.
PURE = traits_def(Pure())
WRITES = traits_def(MemoryWriteEffect())
READS = traits_def(MemoryReadEffect())
ALLOCATES = traits_def(MemoryAllocEffect())


class LayerOp(PLOp):
    """A pl op on one layer: tiles (on chip) or tensors (DDR)."""

    LAYER: ClassVar[str] = TILE
    VECTOR: ClassVar[bool] = True  # tile operands must be in Vec

    @classmethod
    def operand(cls, a: ArgView, name: str) -> Shaped:
        t = a.tile(name) if cls.LAYER == TILE else a.tensor(name)
        if cls.LAYER == TILE and cls.VECTOR and t.memory_space != MemorySpace.Vec:
            raise a.fail(f"operand '{name}' is in memory space {t.memory_space.value}, expected Vec")
        return t

    @classmethod
    def make(cls, like: Shaped, shape: tuple[int, ...] | list[int], dtype: Attribute | None = None) -> Shaped:
        """A result of this layer with ``like``'s space and the given shape/dtype."""
        dtype = like.element_type if dtype is None else dtype
        if isinstance(like, TileType):
            return TileType.get(tuple(shape), dtype, like.memory_space)
        return TensorType.get(tuple(shape), dtype)


def _same_dtype(a: ArgView, x: Shaped, y: Shaped, xn: str, yn: str) -> None:
    if x.element_type != y.element_type:
        raise a.fail(
            f"operand '{yn}' has dtype pl.{dtype_name(y.element_type)}, expected "
            f"pl.{dtype_name(x.element_type)} (the dtype of '{xn}'); insert pl.cast"
        )


def _rank2(a: ArgView, t: Shaped, name: str) -> tuple[int, int]:
    shape = t.get_shape()
    if len(shape) != 2:
        raise a.fail(f"operand '{name}' must be 2-D, got shape {list(shape)}")
    return shape[0], shape[1]


def broadcast(a: ArgView, x: tuple[int, ...], y: tuple[int, ...]) -> tuple[int, ...]:
    """numpy broadcasting of two static shapes."""
    out: list[int] = []
    for i in range(max(len(x), len(y))):
        dx = x[len(x) - 1 - i] if i < len(x) else 1
        dy = y[len(y) - 1 - i] if i < len(y) else 1
        if dx == dy or dy == 1:
            out.append(dx)
        elif dx == 1:
            out.append(dy)
        elif DYNAMIC in (dx, dy):
            out.append(DYNAMIC)
        else:
            raise a.fail(f"operand shapes {list(x)} and {list(y)} do not broadcast")
    return tuple(reversed(out))


class BinaryOp(LayerOp):
    """``add/sub/mul/div(lhs, rhs)``: elementwise."""

    lhs = operand_def(Shaped)
    rhs = operand_def(Shaped)
    result = result_def(Shaped)
    traits = PURE
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (value("lhs"), value("rhs"))
    KEEPS_VALID_SHAPE: ClassVar[bool] = True

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        x, y = cls.operand(a, "lhs"), cls.operand(a, "rhs")
        _same_dtype(a, x, y, "lhs", "rhs")
        if cls.LAYER == TILE:
            if x.get_shape() != y.get_shape():
                raise a.fail(f"operand 'rhs' has shape {list(y.get_shape())}, expected {list(x.get_shape())} (the shape of 'lhs')")
            return cls.make(x, x.get_shape())
        return cls.make(x, broadcast(a, x.get_shape(), y.get_shape()))


class ScalarBinaryOp(LayerOp):
    """``adds/subs/muls/divs(lhs, rhs)``: elementwise with a scalar."""

    lhs = operand_def(Shaped)
    rhs = operand_def()
    result = result_def(Shaped)
    traits = PURE
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (value("lhs"), value("rhs"))
    KEEPS_VALID_SHAPE: ClassVar[bool] = True

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        x = cls.operand(a, "lhs")
        s = a.value("rhs").type
        if s != x.element_type:
            raise a.fail(
                f"operand 'rhs' must be a scalar of dtype pl.{dtype_name(x.element_type)}, got {describe_type(s)}"
            )
        return cls.make(x, x.get_shape())


class UnaryOp(LayerOp):
    """``exp/neg/relu/sqrt/...(input)``: elementwise."""

    input = operand_def(Shaped)
    result = result_def(Shaped)
    traits = PURE
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (value("input"),)
    FLOAT_ONLY: ClassVar[bool] = True
    KEEPS_VALID_SHAPE: ClassVar[bool] = True

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        x = cls.operand(a, "input")
        if cls.FLOAT_ONLY and not is_float(x.element_type):
            raise a.fail(f"operand 'input' must have a float dtype, got pl.{dtype_name(x.element_type)}")
        return cls.make(x, x.get_shape())


class RecipOp(UnaryOp):
    high_precision = opt_prop_def()
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (value("input"), attr("high_precision", BOOL, False))
    INPLACE_SAFE: ClassVar[bool] = False


class RowReduceOp(LayerOp):
    """``row_sum/row_max/row_min``: [M, N] -> [M, 1] (tiles need a scratch tile)."""

    input = operand_def(Shaped)
    tmp_tile = opt_operand_def(Shaped)
    result = result_def(Shaped)
    traits = PURE
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (value("input"), opt_value("tmp_tile"))
    INPLACE_SAFE: ClassVar[bool] = False

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        x = cls.operand(a, "input")
        m, _ = _rank2(a, x, "input")
        tmp = a.opt_value("tmp_tile")
        if cls.LAYER == TILE:
            if tmp is None:
                raise a.fail("missing operand 'tmp_tile' (a scratch tile shaped like 'input')")
            t = cls.operand(a, "tmp_tile")
            if t.get_shape() != x.get_shape() or t.element_type != x.element_type:
                raise a.fail(f"operand 'tmp_tile' must be {describe_type(x)}, got {describe_type(t)}")
        elif tmp is not None:
            raise a.fail("operand 'tmp_tile' is only for tiles")
        return cls.make(x, (m, 1))


class TransposeOp(LayerOp):
    """``transpose(input, axis1, axis2)``: the two axes swapped (a copy; tiles need a scratch tile)."""

    input = operand_def(Shaped)
    tmp_tile = opt_operand_def(Shaped)
    axis1 = prop_def()
    axis2 = prop_def()
    result = result_def(Shaped)
    traits = PURE
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (value("input"), attr("axis1", INT), attr("axis2", INT), opt_value("tmp_tile"))
    INPLACE_SAFE: ClassVar[bool] = False

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        x = cls.operand(a, "input")
        shape = list(x.get_shape())
        axes = []
        for name in ("axis1", "axis2"):
            ax = a.attr(name)
            if not -len(shape) <= ax < len(shape):
                raise a.fail(f"'{name}' = {ax} is out of range for a rank-{len(shape)} operand")
            axes.append(ax % len(shape))
        shape[axes[0]], shape[axes[1]] = shape[axes[1]], shape[axes[0]]
        tmp = a.opt_value("tmp_tile")
        if tmp is not None:
            if cls.LAYER != TILE:
                raise a.fail("operand 'tmp_tile' is only for tiles")
            t = cls.operand(a, "tmp_tile")
            if t.get_shape() != x.get_shape() or t.element_type != x.element_type:
                raise a.fail(f"operand 'tmp_tile' must be {describe_type(x)}, got {describe_type(t)}")
        return cls.make(x, shape)


class ColReduceOp(LayerOp):
    """``col_sum/col_max``: [M, N] -> [1, N]."""

    input = operand_def(Shaped)
    tmp_tile = opt_operand_def(Shaped)
    result = result_def(Shaped)
    traits = PURE
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (value("input"), opt_value("tmp_tile"))

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        x = cls.operand(a, "input")
        _, n = _rank2(a, x, "input")
        if a.opt_value("tmp_tile") is not None:
            t = cls.operand(a, "tmp_tile")
            if t.get_shape() != x.get_shape() or t.element_type != x.element_type:
                raise a.fail(f"operand 'tmp_tile' must be {describe_type(x)}, got {describe_type(t)}")
        return cls.make(x, (1, n))


class ExpandOp(LayerOp):
    """``row_expand*/col_expand*(input, vec)``: ``vec`` is broadcast along ``AXIS``
    (0: a [M, 1] row vector, one value per row; 1: a [1, N] column vector). The
    vector is re-read for every output row, so the result may not share its buffer."""

    traits = PURE
    AXIS: ClassVar[int] = 0
    VEC: ClassVar[str] = "row_vec"
    KEEPS_VALID_SHAPE: ClassVar[bool] = True

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        x, v = cls.operand(a, "input"), cls.operand(a, cls.VEC)
        m, n = _rank2(a, x, "input")
        _same_dtype(a, x, v, "input", cls.VEC)
        want = (m, 1) if cls.AXIS == 0 else (1, n)
        if v.get_shape() != want:
            raise a.fail(f"operand '{cls.VEC}' must have shape [{want[0]}, {want[1]}], got {list(v.get_shape())}")
        return cls.make(x, (m, n))


class RowExpandOp(ExpandOp):
    """``row_expand*(input, row_vec)``: row_vec is [M, 1], broadcast along rows."""

    input = operand_def(Shaped)
    row_vec = operand_def(Shaped)
    result = result_def(Shaped)
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (value("input"), value("row_vec"))
    FORBID_INPLACE_OPERAND: ClassVar[str | None] = "row_vec"


class ColExpandOp(ExpandOp):
    """``col_expand*(input, col_vec)``: col_vec is [1, N], broadcast along columns."""

    input = operand_def(Shaped)
    col_vec = operand_def(Shaped)
    result = result_def(Shaped)
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (value("input"), value("col_vec"))
    AXIS: ClassVar[int] = 1
    VEC: ClassVar[str] = "col_vec"
    FORBID_INPLACE_OPERAND: ClassVar[str | None] = "col_vec"


def accumulator_dtype(element_type: Attribute) -> Attribute | None:
    """The dtype the cube accumulates a matmul of ``element_type`` operands in: FP32 for floats, INT32 for
    integers (None: matmul does not take it, as BOOL and INDEX)."""
    if is_float(element_type):
        return dtype_type("FP32")
    if is_integer(element_type) and dtype_name(element_type) not in ("BOOL", "INDEX"):
        return dtype_type("INT32")
    return None


def _acc_dtype(a: ArgView, x: Shaped) -> Attribute:
    acc = accumulator_dtype(x.element_type)
    if acc is None:
        raise a.fail(f"operand 'lhs' has dtype pl.{dtype_name(x.element_type)}, which matmul does not take")
    return acc


def _check_matmul(a: ArgView, x: Shaped, y: Shaped, a_trans: bool = False, b_trans: bool = False) -> tuple[int, int]:
    m, k = _rank2(a, x, "lhs")
    k2, n = _rank2(a, y, "rhs")
    if a_trans:
        m, k = k, m
    if b_trans:
        k2, n = n, k2
    _same_dtype(a, x, y, "lhs", "rhs")
    if k != k2 and DYNAMIC not in (k, k2):
        rhs_k = "columns (b_trans=True)" if b_trans else "rows"
        lhs_k = "rows of 'lhs', a_trans=True" if a_trans else "columns of 'lhs'"
        raise a.fail(f"operand 'rhs' has {k2} {rhs_k}, expected {k} (the {lhs_k})")
    return m, n


class MatmulOp(LayerOp):
    """``matmul(lhs, rhs)``: tiles Left x Right -> Acc (Mat accepted before
    InferTileMemorySpace); tensors take transposes and an output dtype."""

    lhs = operand_def(Shaped)
    rhs = operand_def(Shaped)
    result = result_def(Shaped)
    traits = PURE
    VECTOR: ClassVar[bool] = False

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        x, y = cls.operand(a, "lhs"), cls.operand(a, "rhs")
        if cls.LAYER == TILE:
            _check_cube_spaces(a, x, y)
            m, n = _check_matmul(a, x, y)
            return TileType.get((m, n), _acc_dtype(a, x), MemorySpace.Acc)
        m, n = _check_matmul(a, x, y, a.attr("a_trans"), a.attr("b_trans"))
        _acc_dtype(a, x)  # operands the cube takes
        out = a.attr("out_dtype")
        return TensorType.get((m, n), out if out is not None else x.element_type)


def _check_cube_spaces(a: ArgView, x: Shaped, y: Shaped) -> None:
    assert isinstance(x, TileType) and isinstance(y, TileType)
    if x.memory_space not in (MemorySpace.Left, MemorySpace.Mat):
        raise a.fail(f"operand 'lhs' is in memory space {x.memory_space.value}, expected Left (or Mat)")
    if y.memory_space not in (MemorySpace.Right, MemorySpace.Mat):
        raise a.fail(f"operand 'rhs' is in memory space {y.memory_space.value}, expected Right (or Mat)")


class MatmulAccOp(LayerOp):
    """``matmul_acc(acc, lhs, rhs)``: acc += lhs @ rhs (in place: the result is acc's buffer)."""

    acc = operand_def(Shaped)
    lhs = operand_def(Shaped)
    rhs = operand_def(Shaped)
    result = result_def(Shaped)
    traits = WRITES
    VECTOR: ClassVar[bool] = False
    ALIAS_OPERAND: ClassVar[str | None] = "acc"

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        acc, x, y = cls.operand(a, "acc"), cls.operand(a, "lhs"), cls.operand(a, "rhs")
        if cls.LAYER == TILE:
            _check_cube_spaces(a, x, y)
            if acc.memory_space != MemorySpace.Acc:  # type: ignore[union-attr]
                raise a.fail(f"operand 'acc' is in memory space {acc.memory_space.value}, expected Acc")  # type: ignore[union-attr]
            m, n = _check_matmul(a, x, y)
        else:
            m, n = _check_matmul(a, x, y, a.attr("a_trans"), a.attr("b_trans"))
        want = _acc_dtype(a, x)
        if acc.element_type != want:
            got, of = dtype_name(acc.element_type), dtype_name(x.element_type)
            raise a.fail(
                f"operand 'acc' has dtype pl.{got}, expected pl.{dtype_name(want)} (the cube accumulates "
                f"pl.{of} operands in it); make it in pl.{dtype_name(want)}, e.g. pl.matmul(..., out_dtype=pl.{dtype_name(want)})"
            )
        if acc.get_shape() != (m, n):
            raise a.fail(f"operand 'acc' has shape {list(acc.get_shape())}, expected [{m}, {n}]")
        return acc.with_(memref=None, view=None) if isinstance(acc, TileType) else acc.with_memref(None)


class CastOp(LayerOp):
    """``cast(input, target_type, mode="round")``."""

    input = operand_def(Shaped)
    target_type = prop_def()
    mode = opt_prop_def()
    result = result_def(Shaped)
    traits = PURE
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (value("input"), attr("target_type", DTYPE), attr("mode", STR, CastMode.round.value))

    def forbidden_inplace_operands(self) -> list[SSAValue]:
        """A widening tile cast may not write over its source (it reads narrower elements than it writes)."""
        src, dst = self.input.type, self.result.type
        if isinstance(src, TileType) and isinstance(dst, TileType) and dtype_bits(dst.element_type) > dtype_bits(src.element_type):
            return [self.input]
        return []

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        x = cls.operand(a, "input")
        mode = a.attr("mode")
        if mode not in CastMode.__members__:
            raise a.fail(f"mode '{mode}' is not one of {', '.join(CastMode.__members__)}")
        return cls.make(x, x.get_shape(), a.attr("target_type"))


class FullOp(LayerOp):
    """``full(shape, dtype=, value=)``: a constant (a fresh buffer)."""

    shape = prop_def()
    dtype = prop_def()
    value = prop_def()
    result = result_def(Shaped)
    traits = ALLOCATES
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (attr("shape", INTS), attr("dtype", DTYPE, keyword=True), attr("value", FLOAT, keyword=True))

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        shape = a.attr("shape")
        if cls.LAYER == TILE:
            return TileType.get(shape, a.attr("dtype"), MemorySpace.Vec)
        return TensorType.get(shape, a.attr("dtype"))


class ReshapeOp(LayerOp):
    """``reshape(input, shape)``: same elements, new shape (a view of input's buffer)."""

    input = operand_def(Shaped)
    shape = prop_def()
    result = result_def(Shaped)
    traits = PURE
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (value("input"), attr("shape", INTS))
    VECTOR: ClassVar[bool] = False
    ALIAS_OPERAND: ClassVar[str | None] = "input"
    IS_VIEW: ClassVar[bool] = True

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        x = cls.operand(a, "input")
        shape = tuple(a.attr("shape"))
        old = x.get_shape()
        if DYNAMIC not in old and _prod(old) != _prod(shape):
            raise a.fail(f"cannot reshape {list(old)} ({_prod(old)} elements) to {list(shape)} ({_prod(shape)} elements)")
        return cls.make(x, shape)


def _prod(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


class ConcatOp(LayerOp):
    """``concat(lhs, rhs)``: along columns."""

    lhs = operand_def(Shaped)
    rhs = operand_def(Shaped)
    result = result_def(Shaped)
    traits = PURE
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (value("lhs"), value("rhs"))

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        x, y = cls.operand(a, "lhs"), cls.operand(a, "rhs")
        m, n1 = _rank2(a, x, "lhs")
        m2, n2 = _rank2(a, y, "rhs")
        _same_dtype(a, x, y, "lhs", "rhs")
        if m != m2:
            raise a.fail(f"operand 'rhs' has {m2} rows, expected {m} (the rows of 'lhs')")
        return cls.make(x, (m, n1 + n2))


def _check_indices(a: ArgView, name: str, rank: int) -> None:
    idx = a.values(name)
    if len(idx) != rank:
        raise a.fail(f"operand '{name}' has {len(idx)} entries, expected {rank} (the rank)")
    for v in idx:
        if not (is_dtype(v.type) and is_integer(v.type)):
            raise a.fail(f"operand '{name}' entries must be integer scalars, got {describe_type(v.type)}")


def constant_index(v: SSAValue) -> int | None:
    """The value of an index defined by an integer ``arith.constant`` (else None)."""
    owner = v.owner
    value = getattr(owner, "value", None) if getattr(owner, "name", None) == "arith.constant" else None
    data = getattr(value, "value", None)
    number = getattr(data, "data", None)
    return number if isinstance(number, int) and not isinstance(number, bool) else None


def check_valid_extents(a: ArgView, values: Sequence[SSAValue], shape: tuple[int, ...], what: str) -> None:
    """Each constant of a ``valid_shape`` between 0 and its dimension's static extent (``what``: the bound as the
    error names it, ``{size}`` filled in); a run-time extent is the device's to check."""
    for dim, (v, size) in enumerate(zip(values, shape, strict=False)):
        extent = constant_index(v)
        if extent is not None and size != DYNAMIC and not 0 <= extent <= size:
            raise a.fail(f"valid_shape[{dim}] = {extent} is outside {what.format(size=size)}")


def check_window(a: ArgView, shape: tuple[int, ...], source: tuple[int, ...], offsets: str, valid: str | None) -> None:
    """A static window of a tensor: every extent positive, and where the
    offsets (and valid shapes, if given) are constants, inside ``source``."""
    if any(s <= 0 and s != DYNAMIC for s in shape):
        raise a.fail(f"shapes {list(shape)}: every tile dimension must be positive")
    valid_values = a.values(valid) if valid is not None else []
    check_valid_extents(a, valid_values, shape, "the tile's {size} (0 to the window's extent)")
    for dim, (off_v, size) in enumerate(zip(a.values(offsets), shape, strict=False)):
        off = constant_index(off_v)
        if off is None or size == DYNAMIC or dim >= len(source) or source[dim] == DYNAMIC:
            continue
        extent = size
        if dim < len(valid_values):
            vv = constant_index(valid_values[dim])
            if vv is None:
                continue
            extent = vv
        if off < 0:
            raise a.fail(f"offset {off} in dimension {dim} is negative")
        if off + extent > source[dim]:
            raise a.fail(
                f"window [{off}:{off + extent}] in dimension {dim} is past the end of the tensor "
                f"(size {source[dim]}): offsets {off} + shape {extent} > {source[dim]}"
            )


class SliceOp(LayerOp):
    """``slice(input, shape, offset, valid_shape=None)``: a view of a window."""

    input = operand_def(Shaped)
    offset = var_operand_def()
    valid_shape = var_operand_def()
    shape = prop_def()
    result = result_def(Shaped)
    traits = PURE
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (value("input"), attr("shape", INTS), value_list("offset"), value_list("valid_shape", optional=True))
    VECTOR: ClassVar[bool] = False

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        x = cls.operand(a, "input")
        shape = tuple(a.attr("shape"))
        if len(shape) != len(x.get_shape()):
            raise a.fail(f"shape {list(shape)} has rank {len(shape)}, expected {len(x.get_shape())}")
        _check_indices(a, "offset", len(shape))
        if a.values("valid_shape"):
            _check_indices(a, "valid_shape", len(shape))
            check_valid_extents(a, a.values("valid_shape"), shape, "the window's {size} (0 to its extent)")
        for d, full in zip(shape, x.get_shape(), strict=True):
            if full != DYNAMIC and d > full:
                raise a.fail(f"window shape {list(shape)} exceeds the input shape {list(x.get_shape())}")
        return cls.make(x, shape)


class AssembleOp(LayerOp):
    """``assemble(target, source, offset)``: write source into a window of target (in place)."""

    target = operand_def(Shaped)
    source = operand_def(Shaped)
    offset = var_operand_def()
    atomic = opt_prop_def()
    result = result_def(Shaped)
    traits = WRITES
    ALIAS_OPERAND: ClassVar[str | None] = "target"
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (value("target"), value("source"), value_list("offset"), attr("atomic", EnumCodec(AtomicType), AtomicType.None_))
    VECTOR: ClassVar[bool] = False

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        dst, src = cls.operand(a, "target"), cls.operand(a, "source")
        if not fixpipe_narrowing(src, dst):
            _same_dtype(a, dst, src, "target", "source")
        if len(src.get_shape()) != len(dst.get_shape()):
            raise a.fail(f"operand 'source' has rank {len(src.get_shape())}, expected {len(dst.get_shape())}")
        _check_indices(a, "offset", len(dst.get_shape()))
        check_window(a, tuple(src.get_shape()), tuple(dst.get_shape()), "offset", None)
        if isinstance(dst, TileType) and isinstance(src, TileType):
            ok = (src.memory_space, dst.memory_space) in ((MemorySpace.Vec, MemorySpace.Vec), (MemorySpace.Acc, MemorySpace.Mat))
            if not ok:
                raise a.fail(f"cannot assemble a {src.memory_space.value} tile into a {dst.memory_space.value} tile (Vec->Vec or Acc->Mat)")
        return dst.with_(memref=None, view=None) if isinstance(dst, TileType) else dst.with_memref(None)


def fixpipe_narrowing(src: Attribute, dst: Attribute) -> bool:
    """An Acc -> Mat write of an FP32 accumulator into an FP16 / BF16 tile: the cube's FIXPIPE
    write-back converts on the way (round half to even), so an assemble may change the dtype."""
    return (
        isinstance(src, TileType)
        and isinstance(dst, TileType)
        and (src.memory_space, dst.memory_space) == (MemorySpace.Acc, MemorySpace.Mat)
        and dtype_name(src.element_type) == "FP32"
        and dtype_name(dst.element_type) in ("FP16", "BF16")
    )


class ReadOp(LayerOp):
    """``read(input, indices)``: one element as a scalar."""

    input = operand_def(Shaped)
    indices = var_operand_def()
    result = result_def()
    traits = READS
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (value("input"), value_list("indices"))
    VECTOR: ClassVar[bool] = False

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        x = cls.operand(a, "input")
        _check_indices(a, "indices", len(x.get_shape()))
        return x.element_type



class WriteOp(LayerOp):
    """``write(target, indices, value)``: one element set to a scalar of the element dtype, in place
    (upstream's ``tensor.write`` / ``tile.write``; the result is ``target``, for chaining)."""

    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (value("target"), value_list("indices"), value("value"))
    target = operand_def(Shaped)
    indices = var_operand_def()
    value = operand_def()
    result = result_def(Shaped)
    traits = WRITES
    ALIAS_OPERAND: ClassVar[str | None] = "target"
    VECTOR: ClassVar[bool] = False

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        dst = cls.operand(a, "target")
        _check_indices(a, "indices", len(dst.get_shape()))
        v = a.value("value")
        if isinstance(v.type, TileType | TensorType):
            raise a.fail(f"operand 'value' must be a scalar, got {describe_type(v.type)}")
        if v.type != dst.element_type:
            raise a.fail(
                f"operand 'value' has type {describe_type(v.type)}, expected {describe_type(dst.element_type)} "
                "(the element dtype of 'target')"
            )
        return dst.with_(memref=None, view=None) if isinstance(dst, TileType) else dst.with_memref(None)
