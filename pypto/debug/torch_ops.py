"""The torch lowering of each ``pl.tensor.*`` / ``pl.tile.*`` op.

An op class whose torch meaning is one expression states it (``TORCH``, a format
string over its value arguments: ``"torch.exp({input})"``); the others are
lowered by a function keyed by their class or family (:data:`BY_CLASS`), built
from the op's DSL arguments (``PLOp.arg_view()``). The helpers called
(``_tile_load``, ``_matmul``, ...) live in :mod:`pypto.debug.torch_runtime`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from enum import Enum
from typing import Protocol

from xdsl.ir import Attribute, SSAValue

from pypto.dialects import op_families as F
from pypto.dialects.dtypes import dtype_name, is_dtype
from pypto.dialects.enums import AtomicType
from pypto.dialects.op_base import ArgKind, ArgView, PLOp
from pypto.dialects.tensor_ops import TensorCreateOp, TensorDimOp
from pypto.dialects.tile_ops import TileCreateOp, TileLoadOp, TileStoreOp
from pypto.dialects.types import TileType
from pypto.target.dtypes import BY_NAME


def torch_dtype(t: Attribute) -> str:
    """The torch dtype (source text) of a PyPTO element type; dtypes torch
    lacks (FP4, HF4, HF8, FP8E8M0) compute in float32."""
    return f"torch.{BY_NAME[dtype_name(t)].torch_compute}" if is_dtype(t) else "torch.float32"


def py_number(v: float | int | bool) -> str:
    """A Python literal for a number (``float('inf')`` for infinities)."""
    if isinstance(v, float) and not math.isfinite(v):
        return f"float({str(v)!r})"
    return repr(v)


class Names(Protocol):
    """What an op lowering needs from the function emitter."""

    def v(self, value: SSAValue) -> str: ...

    def vs(self, values: Sequence[SSAValue]) -> str: ...


Lowering = Callable[[Names, PLOp, ArgView], str]


def _result_dtype(op: PLOp) -> str:
    return torch_dtype(op.results[0].type.element_type)  # type: ignore[attr-defined]


def _atomic(a: ArgView) -> str:
    return str(a.attr("atomic") == AtomicType.Add)


def _ints(v: Sequence[int]) -> str:
    return "[" + ", ".join(str(int(x)) for x in v) + "]"


def _matmul(n: Names, op: PLOp, a: ArgView) -> str:
    trans = f", {bool(a.attr('a_trans'))}, {bool(a.attr('b_trans'))}" if "a_trans" in op.properties else ""
    return f"_matmul({n.v(a.value('lhs'))}, {n.v(a.value('rhs'))}, {_result_dtype(op)}{trans})"


def _matmul_acc(n: Names, op: PLOp, a: ArgView) -> str:
    trans = f", {bool(a.attr('a_trans'))}, {bool(a.attr('b_trans'))}" if "a_trans" in op.properties else ""
    return f"_matmul_acc({n.v(a.value('acc'))}, {n.v(a.value('lhs'))}, {n.v(a.value('rhs'))}{trans})"


def _cast(n: Names, op: PLOp, a: ArgView) -> str:
    return f"_cast({n.v(a.value('input'))}, {_result_dtype(op)}, {a.attr('mode')!r})"


def _full(n: Names, op: PLOp, a: ArgView) -> str:
    return f"torch.full({_ints(a.attr('shape'))}, {py_number(a.attr('value'))}, dtype={_result_dtype(op)})"


def _shape(n: Names, op: PLOp, a: ArgView) -> str:
    """The ``shape`` property as a list, a run-time extent (``DYN_SIZES``) as its value's name."""
    if not op.DYN_SIZES or not a.values(op.DYN_SIZES):
        return _ints(a.attr("shape"))
    sizes = iter(a.values(op.DYN_SIZES))
    return "[" + ", ".join(f"int({n.v(next(sizes))})" if d < 0 else str(int(d)) for d in a.attr("shape")) + "]"


def _zeros(n: Names, op: PLOp, a: ArgView) -> str:
    return f"torch.zeros({_shape(n, op, a)}, dtype={_result_dtype(op)})"


def _assemble(n: Names, op: PLOp, a: ArgView) -> str:
    copy = ", copy=True" if isinstance(op.results[0].type, TileType) else ""
    return (
        f"_assemble({n.v(a.value('target'))}, {n.v(a.value('source'))}, {n.vs(a.values('offset'))}, "
        f"{_atomic(a)}{copy})"
    )


def _slice(n: Names, op: PLOp, a: ArgView) -> str:
    valid = a.values("valid_shape")
    extra = f", {n.vs(valid)}" if valid else ""
    return f"_slice({n.v(a.value('input'))}, {_shape(n, op, a)}, {n.vs(a.values('offset'))}{extra})"


def _reshape(n: Names, op: PLOp, a: ArgView) -> str:
    return f"{n.v(a.value('input'))}.reshape({_ints(a.attr('shape'))})"


def _transpose(n: Names, op: PLOp, a: ArgView) -> str:
    return f"_transpose({n.v(a.value('input'))}, {int(a.attr('axis1'))}, {int(a.attr('axis2'))})"


def _dim(n: Names, op: PLOp, a: ArgView) -> str:
    return f"{n.v(a.value('input'))}.shape[{int(a.attr('axis'))}]"


def _read(n: Names, op: PLOp, a: ArgView) -> str:
    return f"_read({n.v(a.value('input'))}, {n.vs(a.values('indices'))})"


def _write(n: Names, op: PLOp, a: ArgView) -> str:
    return f"_write({n.v(a.value('target'))}, {n.vs(a.values('indices'))}, {n.v(a.value('value'))})"


def _load(n: Names, op: PLOp, a: ArgView) -> str:
    valid = a.values("valid_shapes")
    extra = f", {n.vs(valid)}" if valid else ""
    return f"_tile_load({n.v(a.value('tensor'))}, {n.vs(a.values('offsets'))}, {_ints(a.attr('shapes'))}{extra})"


def _store(n: Names, op: PLOp, a: ArgView) -> str:
    return f"_tile_store({n.v(a.value('tile'))}, {n.vs(a.values('offsets'))}, {n.v(a.value('output'))}, {_atomic(a)})"


def _template(n: Names, op: PLOp, a: ArgView) -> str:
    """The op class's ``TORCH`` expression with its value arguments filled in."""
    assert op.TORCH is not None
    values = {arg.name: n.v(a.value(arg.name)) for arg in op.DSL_ARGS if arg.kind is ArgKind.VALUE}
    return op.TORCH.format(**values)


BY_CLASS: tuple[tuple[type[PLOp], Lowering], ...] = (
    (F.MatmulOp, _matmul),
    (F.MatmulAccOp, _matmul_acc),
    (F.CastOp, _cast),
    (F.FullOp, _full),
    (F.AssembleOp, _assemble),
    (F.SliceOp, _slice),
    (F.ReshapeOp, _reshape),
    (F.TransposeOp, _transpose),
    (F.ReadOp, _read),
    (F.WriteOp, _write),
    (TileLoadOp, _load),
    (TileStoreOp, _store),
    (TensorCreateOp, _zeros),
    (TensorDimOp, _dim),
    (TileCreateOp, _zeros),  # uninitialised on chip; zeros here, for determinism
)
"""Lowerings of op classes (or families) whose torch meaning needs more than a ``TORCH`` expression."""


def _helper_call(n: Names, op: PLOp, a: ArgView) -> str:
    """A call of the op class's ``TORCH_CALL`` helper (the ``pld`` ops: a method of the rank's comm
    context) with its DSL arguments in order: values, value lists, and attributes (enums by name)."""
    parts = []
    skip = getattr(op, "TORCH_SKIP", ())  # arguments the helper does not take (a staging tile)
    for arg in op.DSL_ARGS:
        if arg.name in skip:
            continue
        if arg.kind is ArgKind.VALUE:
            parts.append(n.v(a.value(arg.name)))
        elif arg.kind is ArgKind.OPT_VALUE:
            v = a.opt_value(arg.name)
            parts.append("None" if v is None else n.v(v))
        elif arg.kind is ArgKind.VALUE_LIST:
            parts.append(n.vs(a.values(arg.name)))
        else:
            v = a.attr(arg.name)
            parts.append(repr(v.value if isinstance(v, Enum) else v))
    call = op.torch_call() if hasattr(op, "torch_call") else op.TORCH_CALL  # an op may pick its helper per use
    return f"{call}({', '.join(parts)})"


def class_lowering(cls: type[PLOp]) -> Lowering | None:
    """The lowering of a pl op class: its :data:`BY_CLASS` function, else its ``TORCH`` expression, else its
    ``TORCH_CALL`` helper; None if none."""
    fn = next((f for base, f in BY_CLASS if issubclass(cls, base)), None)
    if fn is None and cls.TORCH is not None:
        fn = _template
    if fn is None and getattr(cls, "TORCH_CALL", None) is not None:
        fn = _helper_call
    return fn


def lowering(op: PLOp) -> tuple[Lowering, bool] | None:
    """The lowering of a pl op and whether its result inherits the first operand's
    valid shape (tile and tensor ops whose class says ``KEEPS_VALID_SHAPE``: a tensor-level
    element-wise op of a ``pl.slice(..., valid_shape=)`` becomes a tile op of that valid
    shape in ConvertTensorToTileOps); None if unknown."""
    fn = class_lowering(type(op))
    if fn is None:
        return None
    return fn, getattr(op, "LAYER", None) in (F.TILE, F.TENSOR) and op.KEEPS_VALID_SHAPE
