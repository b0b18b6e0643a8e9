"""``Program``: a ``pl`` program held as an xDSL module, with its two text forms."""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr

if TYPE_CHECKING:
    from .dsl_printer import FunctionTextCache


class PassDumpLevel(IntEnum):
    """How much the DSL printer writes: NONE (no dumps), CONCISE, EXPLICIT views."""

    NONE = 0
    CONCISE = 1
    EXPLICIT = 2


class Program:
    """A named module of ``func.func`` functions (see docs/ir.md)."""

    def __init__(self, module: ModuleOp):
        self.module = module

    @property
    def name(self) -> str:
        return self.module.sym_name.data if self.module.sym_name else ""

    @name.setter
    def name(self, value: str) -> None:
        self.module.sym_name = StringAttr(value)

    @property
    def functions(self) -> dict[str, func.FuncOp]:
        """Functions by name, in the printed (sorted) order."""
        fs = {op.sym_name.data: op for op in self.module.ops if isinstance(op, func.FuncOp)}
        return dict(sorted(fs.items()))

    def clone(self) -> Program:
        return Program(self.module.clone())

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
