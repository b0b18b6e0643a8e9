"""FlattenCallExpr: nested calls become named temporaries (three-address form).

Upstream's pass 07 hoists every call that is an argument of another call (or
an operand of an arithmetic expression, an ``if`` condition, a loop bound) into
its own assignment to a fresh ``t__tmp_v<N>``. In our IR a "nested call" is an
op result with no name hint that is used: the DSL printer prints it inline at
its use. So the pass names, in program order, every used, unnamed result of a
call -- a ``pl`` op or a ``func.call`` -- ``t__tmp_v<N>``, with ``N`` counting
from 0 per function (skipping names already in use). Arithmetic
(``i * 16``) and literals stay inline, as upstream prints them, and a call
whose result is unused stays a bare statement (``pl.tile.store(...)``).

Upstream 07 dumps: softmax_rows ``t__tmp_v0 = pl.tile.row_expand_sub(...)``,
``t__tmp_v1 = pl.tile.row_expand_div(...)``; matmul_k ``t__tmp_v0`` ..
``t__tmp_v3`` for the four ``pl.tensor.slice`` operands of the matmuls. Running
the pass again changes nothing (no unnamed nested call is left).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.ir import Operation

from pypto.dialects.op_base import PLOp
from pypto.dialects.tile_ops import TileAllocOp

from .base import DEFAULT_BASE, FunctionPass, function_names
from .registry import register_pass


def is_call(op: Operation) -> bool:
    """A call in upstream's sense: a ``pl`` op (not an allocation) or a ``func.call``."""
    return (isinstance(op, PLOp) and not isinstance(op, TileAllocOp)) or isinstance(op, func.CallOp)


def flatten_function(f: func.FuncOp) -> int:
    """Name the nested calls of one function; returns how many were named."""
    taken = function_names(f)
    n = 0
    named = 0
    for op in f.body.walk():
        if not is_call(op):
            continue
        for result in op.results:
            if result.name_hint or not result.uses:
                continue
            while f"{DEFAULT_BASE}__tmp_v{n}" in taken:
                n += 1
            name = f"{DEFAULT_BASE}__tmp_v{n}"
            taken.add(name)
            result.name_hint = name
            named += 1
    return named


@register_pass
@dataclass(frozen=True)
class FlattenCallExpr(FunctionPass):
    """Nested (unnamed, used) call results -> ``t__tmp_v<N>`` assignments."""

    def run_on_function(self, f: func.FuncOp, ctx: Context) -> None:
        flatten_function(f)
