"""Tensor-level ops (``pl.tensor.*``): whole DDR tensors, lowered to tiles by
ConvertTensorToTileOps inside InCore functions."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import i64
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def, var_operand_def

from . import op_families as F
from .op_base import BOOL, DTYPE, INT, INTS, Arg, ArgView, attr, check_dyn_sizes, describe_type, value, value_list
from .types import DYNAMIC, TensorType


class _TensorLayer:
    LAYER: ClassVar[str] = F.TENSOR


def _ops() -> list[type]:
    return [v for v in globals().values() if isinstance(v, type) and getattr(v, "name", "").startswith("pl.tensor.")]


@irdl_op_definition
class TensorAddOp(_TensorLayer, F.BinaryOp):
    name = "pl.tensor.add"
    TORCH: ClassVar[str | None] = "({lhs} + {rhs})"


@irdl_op_definition
class TensorSubOp(_TensorLayer, F.BinaryOp):
    name = "pl.tensor.sub"
    TORCH: ClassVar[str | None] = "({lhs} - {rhs})"


@irdl_op_definition
class TensorMulOp(_TensorLayer, F.BinaryOp):
    name = "pl.tensor.mul"
    TORCH: ClassVar[str | None] = "({lhs} * {rhs})"


@irdl_op_definition
class TensorDivOp(_TensorLayer, F.BinaryOp):
    name = "pl.tensor.div"
    TORCH: ClassVar[str | None] = "_div({lhs}, {rhs})"


@irdl_op_definition
class TensorMaximumOp(_TensorLayer, F.BinaryOp):
    name = "pl.tensor.maximum"
    TORCH: ClassVar[str | None] = "torch.maximum({lhs}, {rhs})"


@irdl_op_definition
class TensorMinimumOp(_TensorLayer, F.BinaryOp):
    name = "pl.tensor.minimum"
    TORCH: ClassVar[str | None] = "torch.minimum({lhs}, {rhs})"


@irdl_op_definition
class TensorMaximumsOp(_TensorLayer, F.ScalarBinaryOp):
    name = "pl.tensor.maximums"
    TORCH: ClassVar[str | None] = "torch.clamp({lhs}, min={rhs})"


@irdl_op_definition
class TensorMinimumsOp(_TensorLayer, F.ScalarBinaryOp):
    name = "pl.tensor.minimums"
    TORCH: ClassVar[str | None] = "torch.clamp({lhs}, max={rhs})"


@irdl_op_definition
class TensorAddsOp(_TensorLayer, F.ScalarBinaryOp):
    name = "pl.tensor.adds"
    TORCH: ClassVar[str | None] = "({lhs} + {rhs})"


@irdl_op_definition
class TensorSubsOp(_TensorLayer, F.ScalarBinaryOp):
    name = "pl.tensor.subs"
    TORCH: ClassVar[str | None] = "({lhs} - {rhs})"


@irdl_op_definition
class TensorMulsOp(_TensorLayer, F.ScalarBinaryOp):
    name = "pl.tensor.muls"
    TORCH: ClassVar[str | None] = "({lhs} * {rhs})"


@irdl_op_definition
class TensorDivsOp(_TensorLayer, F.ScalarBinaryOp):
    name = "pl.tensor.divs"
    TORCH: ClassVar[str | None] = "_div({lhs}, {rhs})"


@irdl_op_definition
class TensorExpOp(_TensorLayer, F.UnaryOp):
    name = "pl.tensor.exp"
    TORCH: ClassVar[str | None] = "torch.exp({input})"


@irdl_op_definition
class TensorNegOp(_TensorLayer, F.UnaryOp):
    name = "pl.tensor.neg"
    TORCH: ClassVar[str | None] = "torch.neg({input})"
    FLOAT_ONLY: ClassVar[bool] = False


@irdl_op_definition
class TensorReluOp(_TensorLayer, F.UnaryOp):
    name = "pl.tensor.relu"
    TORCH: ClassVar[str | None] = "torch.relu({input})"
    FLOAT_ONLY: ClassVar[bool] = False


@irdl_op_definition
class TensorSqrtOp(_TensorLayer, F.UnaryOp):
    name = "pl.tensor.sqrt"
    TORCH: ClassVar[str | None] = "torch.sqrt({input})"


@irdl_op_definition
class TensorRsqrtOp(_TensorLayer, F.UnaryOp):
    name = "pl.tensor.rsqrt"
    TORCH: ClassVar[str | None] = "torch.rsqrt({input})"
    INPLACE_SAFE: ClassVar[bool] = False


@irdl_op_definition
class TensorRecipOp(_TensorLayer, F.RecipOp):
    name = "pl.tensor.recip"
    TORCH: ClassVar[str | None] = "torch.reciprocal({input})"


@irdl_op_definition
class TensorRowSumOp(_TensorLayer, F.RowReduceOp):
    name = "pl.tensor.row_sum"
    TORCH: ClassVar[str | None] = "_reduce({input}, 'sum', -1)"


@irdl_op_definition
class TensorRowMaxOp(_TensorLayer, F.RowReduceOp):
    name = "pl.tensor.row_max"
    TORCH: ClassVar[str | None] = "_reduce({input}, 'max', -1)"


@irdl_op_definition
class TensorRowMinOp(_TensorLayer, F.RowReduceOp):
    name = "pl.tensor.row_min"
    TORCH: ClassVar[str | None] = "_reduce({input}, 'min', -1)"


@irdl_op_definition
class TensorColSumOp(_TensorLayer, F.ColReduceOp):
    name = "pl.tensor.col_sum"
    TORCH: ClassVar[str | None] = "_reduce({input}, 'sum', -2)"


@irdl_op_definition
class TensorColMaxOp(_TensorLayer, F.ColReduceOp):
    name = "pl.tensor.col_max"
    TORCH: ClassVar[str | None] = "_reduce({input}, 'max', -2)"


@irdl_op_definition
class TensorRowExpandOp(_TensorLayer, F.RowExpandOp):
    name = "pl.tensor.row_expand"
    TORCH: ClassVar[str | None] = "_expand({row_vec}, {input})"
    KEEPS_VALID_SHAPE: ClassVar[bool] = False


@irdl_op_definition
class TensorRowExpandSubOp(_TensorLayer, F.RowExpandOp):
    name = "pl.tensor.row_expand_sub"
    TORCH: ClassVar[str | None] = "({input} - {row_vec})"


@irdl_op_definition
class TensorRowExpandDivOp(_TensorLayer, F.RowExpandOp):
    name = "pl.tensor.row_expand_div"
    TORCH: ClassVar[str | None] = "({input} / {row_vec})"


@irdl_op_definition
class TensorRowExpandMulOp(_TensorLayer, F.RowExpandOp):
    name = "pl.tensor.row_expand_mul"
    TORCH: ClassVar[str | None] = "({input} * {row_vec})"


@irdl_op_definition
class TensorColExpandOp(_TensorLayer, F.ColExpandOp):
    name = "pl.tensor.col_expand"
    TORCH: ClassVar[str | None] = "_expand({col_vec}, {input})"
    KEEPS_VALID_SHAPE: ClassVar[bool] = False


@irdl_op_definition
class TensorColExpandMulOp(_TensorLayer, F.ColExpandOp):
    name = "pl.tensor.col_expand_mul"
    TORCH: ClassVar[str | None] = "({input} * {col_vec})"


_TRANSPOSE_ARGS = (attr("a_trans", BOOL, False, always=True), attr("b_trans", BOOL, False, always=True))


@irdl_op_definition
class TensorMatmulOp(_TensorLayer, F.MatmulOp):
    name = "pl.tensor.matmul"
    a_trans = opt_prop_def()
    b_trans = opt_prop_def()
    c_matrix_nz = opt_prop_def()
    out_dtype = opt_prop_def()
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (
        value("lhs"),
        value("rhs"),
        *_TRANSPOSE_ARGS,
        attr("c_matrix_nz", BOOL, False, always=True),
        attr("out_dtype", DTYPE, None),
    )
    POSITIONAL: ClassVar[tuple[str, ...] | None] = ("lhs", "rhs", "out_dtype", "a_trans", "b_trans", "c_matrix_nz")


@irdl_op_definition
class TensorMatmulAccOp(_TensorLayer, F.MatmulAccOp):
    name = "pl.tensor.matmul_acc"
    a_trans = opt_prop_def()
    b_trans = opt_prop_def()
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (value("acc"), value("lhs"), value("rhs"), *_TRANSPOSE_ARGS)


@irdl_op_definition
class TensorCastOp(_TensorLayer, F.CastOp):
    name = "pl.tensor.cast"


@irdl_op_definition
class TensorFullOp(_TensorLayer, F.FullOp):
    name = "pl.tensor.full"


@irdl_op_definition
class TensorTransposeOp(_TensorLayer, F.TransposeOp):
    """``pl.transpose(x, axis1, axis2)``: the two axes swapped."""

    name = "pl.tensor.transpose"


@irdl_op_definition
class TensorCreateOp(_TensorLayer, F.LayerOp):
    """``pl.tensor.create(shape, dtype=)``: a fresh DDR buffer (Orchestration). A shape entry may be a
    run-time scalar (``pl.create_tensor([16, head_dim], ...)`` with ``head_dim`` read from a config
    tensor): the type's dimension is dynamic and ``sizes`` holds the value the host allocates."""

    name = "pl.tensor.create"
    sizes = var_operand_def()
    shape = prop_def()
    dtype = prop_def()
    result = result_def(TensorType)
    traits = F.ALLOCATES
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (
        attr("shape", INTS), attr("dtype", DTYPE, keyword=True), value_list("sizes", optional=True)
    )
    DYN_SIZES: ClassVar[str | None] = "sizes"

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        check_dyn_sizes(a, a.attr("shape"))
        return TensorType.get(a.attr("shape"), a.attr("dtype"))


@irdl_op_definition
class TensorAssembleOp(_TensorLayer, F.AssembleOp):
    name = "pl.tensor.assemble"


@irdl_op_definition
class TensorSliceOp(_TensorLayer, F.SliceOp):
    """A window of a tensor; in an Orchestration function a window extent may be a run-time scalar
    (``pl.slice(query, [q_tile, head_dim], [row, 0])``): dynamic in the type, its value in ``sizes``."""

    name = "pl.tensor.slice"
    input = operand_def(F.Shaped)
    offset = var_operand_def()
    valid_shape = var_operand_def()
    sizes = var_operand_def()
    ALIAS_OPERAND: ClassVar[str | None] = "input"
    IS_VIEW: ClassVar[bool] = True
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (*F.SliceOp.DSL_ARGS, value_list("sizes", optional=True))
    DYN_SIZES: ClassVar[str | None] = "sizes"

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        check_dyn_sizes(a, a.attr("shape"))
        return super().infer_type(a)


@irdl_op_definition
class TensorReshapeOp(_TensorLayer, F.ReshapeOp):
    name = "pl.tensor.reshape"


@irdl_op_definition
class TensorConcatOp(_TensorLayer, F.ConcatOp):
    name = "pl.tensor.concat"
    TORCH: ClassVar[str | None] = "torch.cat([{lhs}, {rhs}], dim=-1)"


@irdl_op_definition
class TensorRefineShapeOp(_TensorLayer, F.LayerOp):
    """``pl.tensor.refine_shape(x, shape)``: ``x`` (the same buffer) typed with ``shape``, where each
    dimension keeps its extent or one side is dynamic (``-1``). The front end inserts it where a tensor
    is passed to a kernel parameter whose type differs only so: an Orchestration tensor with a run-time
    extent (``pl.create_tensor([16, n])``) to a static parameter (the host checks the extent when it runs
    the op), or a static tensor to a ``pl.dynamic`` parameter left unbound."""

    name = "pl.tensor.refine_shape"
    input = operand_def(TensorType)
    shape = prop_def()
    result = result_def(TensorType)
    traits = F.PURE
    ALIAS_OPERAND: ClassVar[str | None] = "input"
    IS_VIEW: ClassVar[bool] = True
    VECTOR: ClassVar[bool] = False
    TORCH: ClassVar[str | None] = "{input}"
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (value("input"), attr("shape", INTS))

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        x = cls.operand(a, "input")
        shape = tuple(a.attr("shape"))
        have = x.get_shape()
        if len(shape) != len(have) or any(
            (d <= 0 and d != DYNAMIC) or DYNAMIC not in (d, h) and d != h for d, h in zip(shape, have, strict=False)
        ):
            raise a.fail(f"shape {list(shape)} does not fit {describe_type(x)} (a static extent cannot change)")
        return TensorType.get(shape, x.element_type)


@irdl_op_definition
class TensorDimOp(_TensorLayer, F.LayerOp):
    """``pl.tensor.dim(x, axis)``: the extent of one dimension as an INT64 scalar (a negative ``axis``
    counts from the end). The host evaluates it in an Orchestration function; a static extent is a
    compile-time constant to the front end (so ``pl.create_tensor([16, pl.tensor.dim(x, 1)])`` is static)."""

    name = "pl.tensor.dim"
    input = operand_def(TensorType)
    axis = prop_def()
    result = result_def()
    traits = F.PURE
    VECTOR: ClassVar[bool] = False
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (value("input"), attr("axis", INT))

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        rank = len(cls.operand(a, "input").get_shape())
        if not -rank <= a.attr("axis") < rank:
            raise a.fail(f"axis {a.attr('axis')} is out of range for a rank-{rank} tensor")
        return i64

    def axis_index(self) -> int:
        """The axis, counted from the front."""
        rank = len(self.input.type.get_shape())  # type: ignore[attr-defined]
        return self.properties["axis"].value.data % rank  # type: ignore[attr-defined]

    def static_extent(self) -> int | None:
        """The extent when the tensor type has it (else None: known at run time only)."""
        d = self.input.type.get_shape()[self.axis_index()]  # type: ignore[attr-defined]
        return None if d == DYNAMIC else int(d)

    def folded_by_front_end(self) -> bool:
        """A static extent is a constant to the front end: ``[16, pl.tensor.dim(x, 1)]`` uses the number."""
        return self.static_extent() is not None


@irdl_op_definition
class TensorReadOp(_TensorLayer, F.ReadOp):
    name = "pl.tensor.read"


@irdl_op_definition
class TensorWriteOp(_TensorLayer, F.WriteOp):
    name = "pl.tensor.write"


TENSOR_OPS: list[type] = _ops()
