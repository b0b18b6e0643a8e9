"""GM views: ``make_tensor_view`` / ``partition_view`` -> ``GlobalTensor``.

``make_tensor_view`` emits nothing: it records the pointer, shape and strides.
``partition_view`` emits, as ptoas does (always 5-D, leading 1s)::

    // pto: %x_pview
    pto::Shape<1, 1, 1, 16, 128> v20 = pto::Shape<1, 1, 1, 16, 128>();
    pto::Stride<2048, 2048, 2048, 128, 1> v21 = pto::Stride<2048, 2048, 2048, 128, 1>();
    GlobalTensor<float, pto::Shape<...>, pto::Stride<...>, pto::Layout::ND> v22 =
        GlobalTensor<float, pto::Shape<...>, pto::Stride<...>, pto::Layout::ND>(v1 + (v9 * v4), v20, v21);

Dims unknown at compile time are ``-1`` in the template and passed to the constructor.

``memref.reinterpret_cast`` of a GM memref is pointer arithmetic, as PTOAS's: the source itself
without an offset (or a constant 0), else ``__gm__ T* v = src + off;``.
"""

from __future__ import annotations

from xdsl.ir import Operation

from pypto.ptoas.dialect.attrs import LayoutAttr
from pypto.ptoas.dialect.isa_misc_ops import LoadScalarOp, StoreScalarOp
from pypto.ptoas.dialect.types import DYNAMIC, PartitionTensorViewType
from pypto.ptoas.dialect.view_ops import AddPtrOp, GetTensorViewDimOp, MakeTensorViewOp, PartitionViewOp

from .context import FuncContext, ViewInfo, handles
from .cxx_types import element_ctype
from .errors import EmitError


@handles(MakeTensorViewOp)
def _make_tensor_view(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, MakeTensorViewOp)
    layout = op.layout.data.value.upper() if isinstance(op.layout, LayoutAttr) else "ND"
    ctx.views[op.result] = ViewInfo(
        ptr=ctx.name(op.ptr, op),
        shape=[ctx.name(v, op) for v in op.shape],
        shape_const=[ctx.const_int(v) for v in op.shape],
        strides=[ctx.name(v, op) for v in op.strides],
        stride_const=[ctx.const_int(v) for v in op.strides],
        layout=layout,
    )
    ctx.names[op.result] = ctx.names[op.ptr]


def _product(terms: list[str]) -> str:
    return " * ".join(terms) if len(terms) > 1 else terms[0]


def _offset_expr(ctx: FuncContext, op: PartitionViewOp, view: ViewInfo) -> str:
    """Element offset sum(offset_i * stride_i), constants folded."""
    const_total = 0
    terms: list[str] = []
    for off, stride, stride_c in zip(op.offsets, view.strides, view.stride_const, strict=True):
        off_c = ctx.const_int(off)
        if off_c is not None and stride_c is not None:
            const_total += off_c * stride_c
        elif off_c == 0:
            continue
        elif stride_c == 1:
            terms.append(ctx.name(off, op))
        elif off_c is not None:
            terms.append(f"{off_c} * {stride}")
        else:
            terms.append(f"{ctx.name(off, op)} * {stride}")
    if const_total:
        terms.append(str(const_total))
    return " + ".join(terms)


@handles(PartitionViewOp)
def _partition_view(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, PartitionViewOp)
    view = ctx.views.get(op.source)
    if view is None:
        raise EmitError("source is not a pto.make_tensor_view result", op)
    res = op.result.type
    assert isinstance(res, PartitionTensorViewType)
    rank = res.rank()
    if rank > 5:
        raise EmitError(f"rank {rank} views are not supported (at most 5)", op)
    dims = list(res.get_shape())
    size_exprs = [ctx.name(v, op) for v in op.sizes]
    # 5-D shape: leading 1s.
    shape_t: list[int] = [1] * (5 - rank) + [d if d != DYNAMIC else -1 for d in dims]
    shape_rt: list[str] = (
        [] if DYNAMIC not in dims else [e for d, e in zip(dims, size_exprs, strict=True) if d == DYNAMIC]
    )
    # 5-D strides: a padded dim steps over the whole first real dim.
    stride_t: list[int] = [s if s is not None else -1 for s in view.stride_const]
    stride_e: list[str] = list(view.strides)
    if rank < 5:
        first_c = view.stride_const[0]
        lead_c = first_c * dims[0] if first_c is not None and dims[0] != DYNAMIC else -1
        lead_e = f"{view.strides[0]} * {size_exprs[0]}"
        stride_t = [lead_c] * (5 - rank) + stride_t
        stride_e = [lead_e] * (5 - rank) + stride_e
    stride_rt = [e for c, e in zip(stride_t, stride_e, strict=True) if c == -1]

    elem = element_ctype(res.element_type)
    shape_type = f"pto::Shape<{', '.join(map(str, shape_t))}>"
    stride_type = f"pto::Stride<{', '.join(map(str, stride_t))}>"
    gt_type = f"GlobalTensor<{elem}, {shape_type}, {stride_type}, pto::Layout::{view.layout}>"
    offset = _offset_expr(ctx, op, view)
    ptr = f"{view.ptr} + ({offset})" if offset else view.ptr

    ctx.comment(op.result)
    v_shape, v_stride = ctx.fresh(), ctx.fresh()
    ctx.line(f"{shape_type} {v_shape} = {shape_type}({', '.join(shape_rt)});")
    ctx.line(f"{stride_type} {v_stride} = {stride_type}({', '.join(stride_rt)});")
    name = ctx.define(op.result)
    ctx.line(f"{gt_type} {name} = {gt_type}({ptr}, {v_shape}, {v_stride});")


@handles(GetTensorViewDimOp)
def _view_dim(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, GetTensorViewDimOp)
    view = ctx.views.get(op.tensor_view)
    index = ctx.const_int(op.dim_index)
    if view is None or index is None or not 0 <= index < len(view.shape):
        raise EmitError("needs a make_tensor_view source and a constant dim index", op)
    name = ctx.define(op.result)
    ctx.line(f"{element_ctype(op.result.type)} {name} = {view.shape[index]};")


@handles(AddPtrOp)
def _addptr(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, AddPtrOp)
    t = op.ptr.type
    elem = element_ctype(t.element_type)  # type: ignore[attr-defined]
    name = ctx.define(op.result)
    ctx.line(f"__gm__ {elem}* {name} = {ctx.name(op.ptr, op)} + {ctx.name(op.offset, op)};")


@handles(LoadScalarOp)
def _load_scalar(ctx: FuncContext, op: Operation) -> None:
    """``%v = pto.load_scalar %p[%i]`` -> ``T v = p[i];`` (one GM element, read by the scalar unit)."""
    assert isinstance(op, LoadScalarOp)
    name = ctx.define(op.value)
    ctx.line(f"{element_ctype(op.value.type)} {name} = {ctx.name(op.ptr, op)}[{ctx.name(op.offset, op)}];")


@handles(StoreScalarOp)
def _store_scalar(ctx: FuncContext, op: Operation) -> None:
    """``pto.store_scalar %v, %p[%i]`` -> ``p[i] = v;`` (one GM element, written by the scalar unit)."""
    assert isinstance(op, StoreScalarOp)
    ctx.line(f"{ctx.name(op.ptr, op)}[{ctx.name(op.offset, op)}] = {ctx.name(op.value, op)};")
