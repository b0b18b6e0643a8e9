"""The torch lowering of each ``pl.tensor.*`` / ``pl.tile.*`` op.

Each entry maps an op's short name (``add`` for ``pl.tensor.add`` and
``pl.tile.add``) to a function returning the Python expression of its result,
built from the op's DSL arguments (``PLOp.arg_view()``). The helpers called
(``_tile_load``, ``_matmul``, ...) live in :mod:`pypto.debug.torch_runtime`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from xdsl.ir import Attribute, SSAValue

from pypto.dialects.dtypes import dtype_name, is_dtype
from pypto.dialects.enums import AtomicType
from pypto.dialects.op_base import ArgView, PLOp
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


def _binary(sym: str) -> Lowering:
    return lambda n, op, a: f"({n.v(a.value('lhs'))} {sym} {n.v(a.value('rhs'))})"


def _call(fn: str, *names: str) -> Lowering:
    return lambda n, op, a: f"{fn}({', '.join(n.v(a.value(x)) for x in names)})"


def _reduce(kind: str, dim: int) -> Lowering:
    return lambda n, op, a: f"_reduce({n.v(a.value('input'))}, {kind!r}, {dim})"


def _expand_op(sym: str, vec: str) -> Lowering:
    return lambda n, op, a: f"({n.v(a.value('input'))} {sym} {n.v(a.value(vec))})"


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


def _zeros(n: Names, op: PLOp, a: ArgView) -> str:
    return f"torch.zeros({_ints(a.attr('shape'))}, dtype={_result_dtype(op)})"


def _assemble(n: Names, op: PLOp, a: ArgView) -> str:
    copy = ", copy=True" if isinstance(op.results[0].type, TileType) else ""
    return (
        f"_assemble({n.v(a.value('target'))}, {n.v(a.value('source'))}, {n.vs(a.values('offset'))}, "
        f"{_atomic(a)}{copy})"
    )


def _slice(n: Names, op: PLOp, a: ArgView) -> str:
    valid = a.values("valid_shape")
    extra = f", {n.vs(valid)}" if valid else ""
    return f"_slice({n.v(a.value('input'))}, {_ints(a.attr('shape'))}, {n.vs(a.values('offset'))}{extra})"


def _reshape(n: Names, op: PLOp, a: ArgView) -> str:
    return f"{n.v(a.value('input'))}.reshape({_ints(a.attr('shape'))})"


def _concat(n: Names, op: PLOp, a: ArgView) -> str:
    return f"torch.cat([{n.v(a.value('lhs'))}, {n.v(a.value('rhs'))}], dim=-1)"


def _read(n: Names, op: PLOp, a: ArgView) -> str:
    return f"_read({n.v(a.value('input'))}, {n.vs(a.values('indices'))})"


def _load(n: Names, op: PLOp, a: ArgView) -> str:
    valid = a.values("valid_shapes")
    extra = f", {n.vs(valid)}" if valid else ""
    return f"_tile_load({n.v(a.value('tensor'))}, {n.vs(a.values('offsets'))}, {_ints(a.attr('shapes'))}{extra})"


def _store(n: Names, op: PLOp, a: ArgView) -> str:
    return f"_tile_store({n.v(a.value('tile'))}, {n.vs(a.values('offsets'))}, {n.v(a.value('output'))}, {_atomic(a)})"


COMMON: dict[str, Lowering] = {
    "add": _binary("+"),
    "sub": _binary("-"),
    "mul": _binary("*"),
    "div": _call("_div", "lhs", "rhs"),
    "adds": _binary("+"),
    "subs": _binary("-"),
    "muls": _binary("*"),
    "divs": _call("_div", "lhs", "rhs"),
    "exp": _call("torch.exp", "input"),
    "neg": _call("torch.neg", "input"),
    "relu": _call("torch.relu", "input"),
    "sqrt": _call("torch.sqrt", "input"),
    "rsqrt": _call("torch.rsqrt", "input"),
    "recip": _call("torch.reciprocal", "input"),
    "row_sum": _reduce("sum", -1),
    "row_max": _reduce("max", -1),
    "row_min": _reduce("min", -1),
    "col_sum": _reduce("sum", -2),
    "col_max": _reduce("max", -2),
    "row_expand": _call("_expand", "row_vec", "input"),
    "row_expand_sub": _expand_op("-", "row_vec"),
    "row_expand_div": _expand_op("/", "row_vec"),
    "row_expand_mul": _expand_op("*", "row_vec"),
    "col_expand": _call("_expand", "col_vec", "input"),
    "col_expand_mul": _expand_op("*", "col_vec"),
    "matmul": _matmul,
    "matmul_acc": _matmul_acc,
    "cast": _cast,
    "full": _full,
    "assemble": _assemble,
    "slice": _slice,
    "reshape": _reshape,
    "concat": _concat,
    "read": _read,
}
"""Ops with the same meaning on tensors and tiles."""

TENSOR_ONLY: dict[str, Lowering] = {"create": _zeros}

TILE_ONLY: dict[str, Lowering] = {
    "load": _load,
    "store": _store,
    "move": _call("_move", "tile"),
    "create": _zeros,  # uninitialised on chip; zeros here, for determinism
    "alloc": lambda n, op, a: "None",  # addresses play no part in the numerics
    "tpush_to_aiv": lambda n, op, a: f"_tpush('c2v', {n.v(a.value('tile'))})",
    "tpush_to_aic": lambda n, op, a: f"_tpush('v2c', {n.v(a.value('tile'))})",
    "tpop_from_aic": lambda n, op, a: "_tpop('c2v')",
    "tpop_from_aiv": lambda n, op, a: "_tpop('v2c')",
}

ELEMENTWISE = frozenset(
    {"add", "sub", "mul", "div", "adds", "subs", "muls", "divs", "exp", "neg", "relu", "sqrt", "rsqrt", "recip",
     "row_expand_sub", "row_expand_div", "row_expand_mul", "col_expand_mul"}
)  # fmt: skip
"""Tile ops whose result keeps the valid shape of their first operand."""


def lowering(op_name: str) -> tuple[Lowering, bool] | None:
    """The lowering of ``pl.tensor.<x>`` / ``pl.tile.<x>`` and whether its
    result inherits the first operand's valid shape; None if unknown."""
    layer, _, short = op_name.removeprefix("pl.").partition(".")
    table: dict[str, Any] = {"tensor": {**COMMON, **TENSOR_ONLY}, "tile": {**COMMON, **TILE_ONLY}}.get(layer, {})
    fn = table.get(short)
    if fn is None:
        return None
    return fn, layer == "tile" and short in ELEMENTWISE
