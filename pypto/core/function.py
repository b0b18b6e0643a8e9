"""``Function``: one function of a :class:`~pypto.core.program.Program`, as upstream's ``ir.Function``.

Upstream's Python IR API names a function ``fn.name`` and its kind ``fn.func_type``; here a function
is an xDSL ``func.func`` (whose ``name`` is the op name, ``"func.func"``), so ``Program.functions``
hands out this view of it: ``name``, ``func_type``, ``params``, ``return_types``, ``as_python()``.
Any other attribute is the ``func.func``'s (``body``, ``sym_name``, ``walk()``...); ``.op`` is the op.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Attribute

from pypto.dialects.enums import FunctionType
from pypto.dialects.program import function_type


@dataclass(frozen=True)
class Param:
    """A function parameter: its name and type."""

    name: str
    type: Attribute


class Function:
    """A view of one ``func.func`` with upstream's ``ir.Function`` attributes."""

    def __init__(self, op: func.FuncOp):
        self.op = op

    @property
    def name(self) -> str:
        """The function's symbol name."""
        return self.op.sym_name.data

    @property
    def func_type(self) -> FunctionType:
        """Orchestration, InCore, AIC, AIV, Group, ... (``pl.FunctionType``)."""
        return function_type(self.op)

    @property
    def params(self) -> list[Param]:
        """The parameters, in order."""
        block = self.op.body.blocks.first
        args = list(block.args) if block is not None else []
        return [Param(a.name_hint or f"arg{i}", a.type) for i, a in enumerate(args)]

    @property
    def return_types(self) -> list[Attribute]:
        """The result types."""
        return list(self.op.function_type.outputs.data)

    def as_python(self, *, concise: bool = False) -> str:
        """The ``pl`` DSL text of this function alone (as a one-function program)."""
        from .dsl_printer import print_program

        module = ModuleOp([self.op.clone()])
        module.sym_name = StringAttr(self.name)
        return print_program(module, concise=concise)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.op, attr)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Function) and other.op is self.op

    def __hash__(self) -> int:
        return id(self.op)

    def __repr__(self) -> str:
        return f"Function({self.name!r}, {self.func_type.value})"
