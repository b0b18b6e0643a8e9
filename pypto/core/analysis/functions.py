"""The functions of a ``pl`` module, by kind."""

from __future__ import annotations

from collections.abc import Collection, Iterator

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from pypto.dialects.enums import FunctionType
from pypto.dialects.program import function_type

INCORE_KINDS: tuple[FunctionType, ...] = (FunctionType.InCore, FunctionType.AIC, FunctionType.AIV)
"""Function kinds whose bodies hold tile code."""

KERNEL_KINDS: tuple[FunctionType, ...] = (*INCORE_KINDS, FunctionType.Group)
"""Function kinds that run on a core (a Group runs its AIC/AIV parts; upstream ``IsInCoreType``)."""


def functions(module: ModuleOp, kinds: Collection[FunctionType] | None = None) -> list[func.FuncOp]:
    """The ``func.func`` ops of ``module`` that have a body, in order; only
    those of ``kinds`` when given."""
    return [
        op
        for op in module.ops
        if isinstance(op, func.FuncOp)
        and op.body.blocks.first is not None
        and (kinds is None or function_type(op) in kinds)
    ]


def functions_by_name(module: ModuleOp) -> dict[str, func.FuncOp]:
    """:func:`functions` by symbol name."""
    return {f.sym_name.data: f for f in functions(module)}


def calls_in(f: func.FuncOp, callees: dict[str, func.FuncOp]) -> Iterator[tuple[func.CallOp, func.FuncOp]]:
    """The ``func.call`` ops of ``f`` (nested too, in program order) whose
    callee is one of ``callees``, each with that callee."""
    for op in f.body.walk():
        if isinstance(op, func.CallOp):
            callee = callees.get(op.callee.root_reference.data)
            if callee is not None:
                yield op, callee
