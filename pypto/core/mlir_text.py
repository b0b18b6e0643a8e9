"""The MLIR text form: one printer and one parser for every tool.

The printer keeps DSL names (``%a__ssa_v0``) and makes every SSA name unique
in its function, so text printed from any IR parses back; locations
(``loc("kernel.py":3:5)``) are printed by default, as with
``mlir-opt --mlir-print-debuginfo``.
"""

from __future__ import annotations

from io import StringIO

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.parser import Parser
from xdsl.printer import Printer

from .context import make_context


class UniqueNamePrinter(Printer):
    """A Printer whose SSA names never collide (``%t``, ``%t_1``, ``%t_1_1``)."""

    def _taken(self) -> set[str]:
        """Every name given so far (``_ssa_values``' values, kept as a set: linear printing)."""
        taken: set[str] | None = self.__dict__.get("_taken_names")
        if taken is None:
            taken = self.__dict__["_taken_names"] = set(self._ssa_values.values())
        return taken

    def print_ssa_value(self, value: SSAValue) -> str:
        if value in self._ssa_values:
            name = self._ssa_values[value]
        elif value.name_hint:
            taken = self._taken()
            name = hint = value.name_hint
            if name in taken:
                # ``hint_1`` .. ``hint_{n-1}`` were taken when ``hint_n`` was given (names are never given
                # back), so the search goes on from there: linear in the values of one hint, not quadratic
                suffixes: dict[str, int] = self.__dict__.setdefault("_hint_suffixes", {})
                n = suffixes.get(hint, 0)
                while name in taken:
                    n += 1
                    name = f"{hint}_{n}"
                suffixes[hint] = n
            self._ssa_values[value] = name
            taken.add(name)
        else:
            name = super().print_ssa_value(value)
            self._taken().add(name)
            return name
        self.print_string(f"%{name}")
        return name

    def _get_new_valid_name_id(self) -> str:
        taken = self._taken()
        while True:
            name = super()._get_new_valid_name_id()
            if name not in taken:
                return name


def print_mlir(op: Operation, *, generic: bool = False, debuginfo: bool = True) -> str:
    """Print an op (normally the program's module) as MLIR text."""
    out = StringIO()
    printer = UniqueNamePrinter(stream=out, print_generic_format=generic, print_debuginfo=debuginfo)
    printer.print_op(op)
    out.write("\n")
    return out.getvalue()


def parse_mlir(text: str, filename: str = "<mlir>") -> ModuleOp:
    """Parse MLIR text with the PyPTO dialects loaded; raises xDSL ParseError."""
    return Parser(make_context(), text, filename).parse_module()
