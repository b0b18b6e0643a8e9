"""``Program``: a ``pl`` program held as an xDSL module, with its two text forms."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Attribute

from .function import Function, Param

if TYPE_CHECKING:
    from .dsl_printer import FunctionTextCache


class PassDumpLevel(IntEnum):
    """How much the DSL printer writes: NONE (no dumps), CONCISE, EXPLICIT views."""

    NONE = 0
    CONCISE = 1
    EXPLICIT = 2


@dataclass(frozen=True)
class HostFunction:
    """A HOST-level function of a ``@pl.program`` kept as Python (not in the IR module): a multi-chip
    orchestrator, or a ``SubWorker`` callback. ``requires_runtime_binding``: the body is ``...``, so
    ``prepare(callbacks={name: fn})`` must supply it (upstream's abstract SubWorker)."""

    name: str
    fn: Any
    requires_runtime_binding: bool = False
    role: str = "SubWorker"


class Program:
    """A named module of ``func.func`` functions (see docs/ir.md)."""

    def __init__(self, module: ModuleOp):
        self.module = module
        self.host_orchestrators: dict[str, Any] = {}
        """Multi-chip HOST orchestrators of a ``@pl.program`` class (Python functions run on the host at
        compile time, :mod:`pypto.driver.host_trace`), by name; not in ``module``."""
        self.sub_workers: dict[str, HostFunction] = {}
        """HOST ``SubWorker`` functions of a ``@pl.program`` class (Python callbacks run by the L3 worker), by
        name; not in ``module``."""
        self.host_functions: dict[str, Any] = {}
        """The Python functions of the class's other HOST orchestrators (single-chip ones, in ``module``): with
        ``distributed_config=`` such a program compiles as an L3 program (:func:`pypto.driver.compile.compile`)."""
        self.respecialize: Any = None
        """For a ``@pl.program`` class: ``(function name, {param: type}) -> Program``, the class parsed again
        with that function's ``pl.dynamic`` dimensions bound to the given types (:meth:`specialize`)."""
        self.source_defs: dict[str, Any] = {}
        """For a module-level ``@pl.function``: its DSL definition by name (the front end's own record),
        so a ``@pl.program`` whose functions call it by its plain name adds it to that program."""

    @property
    def name(self) -> str:
        return self.module.sym_name.data if self.module.sym_name else ""

    @name.setter
    def name(self, value: str) -> None:
        self.module.sym_name = StringAttr(value)

    @property
    def func_ops(self) -> dict[str, func.FuncOp]:
        """The ``func.func`` ops by name, in the printed (sorted) order."""
        fs = {op.sym_name.data: op for op in self.module.ops if isinstance(op, func.FuncOp)}
        return dict(sorted(fs.items()))

    @property
    def functions(self) -> dict[str, Function]:
        """Functions by name, in the printed (sorted) order, as upstream's ``ir.Function``
        (``fn.name``, ``fn.func_type``; other attributes are the ``func.func``'s)."""
        return {name: Function(op) for name, op in self.func_ops.items()}

    def get_function(self, name: str) -> Function | HostFunction | None:
        """The function ``name`` (upstream's ``Program.get_function``): an IR :class:`Function`, or a
        :class:`HostFunction` for a HOST orchestrator or ``SubWorker`` kept as Python; None if absent."""
        if name in self.sub_workers:
            return self.sub_workers[name]
        if name in self.host_orchestrators:
            return HostFunction(name, self.host_orchestrators[name], False, "Orchestrator")
        op = self.func_ops.get(name)
        return Function(op) if op is not None else None

    def _only(self, what: str) -> Function:
        fs = list(self.functions.values())
        if len(fs) != 1:
            raise ValueError(f"Program.{what}: the program has {len(fs)} functions; use program.functions[name].{what}")
        return fs[0]

    @property
    def params(self) -> list[Param]:
        """The parameters of a one-function program (what upstream's ``pl.parse`` of one
        ``@pl.function`` returns is that function)."""
        return self._only("params").params

    @property
    def return_types(self) -> list[Attribute]:
        """The result types of a one-function program."""
        return self._only("return_types").return_types

    def clone(self) -> Program:
        copy = Program(self.module.clone())
        copy.host_orchestrators = dict(self.host_orchestrators)
        copy.sub_workers = dict(self.sub_workers)
        copy.host_functions = dict(self.host_functions)
        return copy

    def verify(self) -> None:
        self.module.verify()

    def as_python(
        self,
        level: PassDumpLevel = PassDumpLevel.CONCISE,
        *,
        prefix: str = "pl",
        concise: bool = False,
        format: bool = True,  # noqa: A002 - upstream's keyword
    ) -> str:
        """The ``pl`` DSL text of this program (pl-dsl.md §4). ``concise=True`` (upstream's keyword)
        drops the type annotations of assignments; ``format`` is accepted (the text is always formatted)."""
        from .dsl_printer import print_program

        if prefix != "pl":
            raise ValueError(f"as_python(prefix={prefix!r}): only the prefix 'pl' (import pypto.language as pl)")
        del format
        return print_program(self.module, explicit=level == PassDumpLevel.EXPLICIT, concise=concise)

    def as_python_locs(
        self, level: PassDumpLevel = PassDumpLevel.CONCISE, cache: FunctionTextCache | None = None
    ) -> tuple[str, list[list[str]]]:
        """The ``pl`` DSL text and, per printed line, the DSL locations of its ops (``cache``: the
        text of functions unchanged since it printed them is reused)."""
        from .dsl_printer import print_program_locs

        return print_program_locs(self.module, explicit=level == PassDumpLevel.EXPLICIT, cache=cache)

    def as_mlir(self, generic: bool = False, debuginfo: bool = True) -> str:
        """MLIR text; ``generic=True`` gives the form upstream MLIR parses."""
        from .mlir_text import print_mlir

        return print_mlir(self.module, generic=generic, debuginfo=debuginfo)

    def __str__(self) -> str:
        return self.as_python()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Program) and self.as_mlir() == other.as_mlir()

    __hash__ = None  # type: ignore[assignment]
