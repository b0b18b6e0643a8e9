"""Tensor-level ops (``pl.tensor.*``): whole DDR tensors, lowered to tiles by
ConvertTensorToTileOps inside InCore functions."""

from __future__ import annotations

from typing import ClassVar

from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, opt_prop_def, prop_def, result_def

from . import op_families as F
from .op_base import BOOL, DTYPE, INTS, Arg, ArgView, attr, value
from .types import TensorType


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
    """``pl.tensor.create(shape, dtype=)``: a fresh DDR buffer (Orchestration)."""

    name = "pl.tensor.create"
    shape = prop_def()
    dtype = prop_def()
    result = result_def(TensorType)
    traits = F.ALLOCATES
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (attr("shape", INTS), attr("dtype", DTYPE, keyword=True))

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        return TensorType.get(a.attr("shape"), a.attr("dtype"))


@irdl_op_definition
class TensorAssembleOp(_TensorLayer, F.AssembleOp):
    name = "pl.tensor.assemble"


@irdl_op_definition
class TensorSliceOp(_TensorLayer, F.SliceOp):
    name = "pl.tensor.slice"
    ALIAS_OPERAND: ClassVar[str | None] = "input"
    IS_VIEW: ClassVar[bool] = True


@irdl_op_definition
class TensorReshapeOp(_TensorLayer, F.ReshapeOp):
    name = "pl.tensor.reshape"


@irdl_op_definition
class TensorConcatOp(_TensorLayer, F.ConcatOp):
    name = "pl.tensor.concat"
    TORCH: ClassVar[str | None] = "torch.cat([{lhs}, {rhs}], dim=-1)"


@irdl_op_definition
class TensorReadOp(_TensorLayer, F.ReadOp):
    name = "pl.tensor.read"


TENSOR_OPS: list[type] = _ops()
