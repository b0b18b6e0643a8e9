"""``.pto`` text: parse, verify and print in the PTOAS custom syntax.

- :func:`parse_pto` reads a ``.pto`` file's text (a ``module``, or bare
  ``func.func`` ops that get an implicit module) with the pto dialect loaded.
- :func:`verify_pto` runs the op verifiers plus the module-level rules of
  ptoas (a ``pto.entry`` function returns nothing) and raises
  :class:`PTOVerifyError`, whose message names the op and the operand and
  whose ``location`` is the op's ``loc(...)`` when it has one.
- :func:`print_pto` prints the custom syntax (``print_pto(parse_pto(t))`` is a
  fixed point after one round) or, with ``generic=True``, MLIR's generic form,
  which upstream MLIR parses with unregistered dialects allowed.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from io import StringIO
from typing import Any

from xdsl.dialects.builtin import FileLineColLoc, ModuleOp, UnitAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation
from xdsl.utils.exceptions import ParseError, VerifyException

from pypto.core.mlir_text import CheckedParser, UniqueNamePrinter
from pypto.core.op_verify import verify_alone, verify_tree
from pypto.utils.cli import cli_main, read_input_text
from pypto.utils.parse_errors import parse_error_message

from .context import make_pto_context


class PTOVerifyError(Exception):
    """A ``.pto`` module breaks a verifier rule. ``more``: the first failure of each later
    function, reported too (MLIR verifies each function on its own, as PTOAS reports them)."""

    def __init__(self, message: str, op: Operation | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.op = op
        self.more: list[PTOVerifyError] = []

    @property
    def location(self) -> FileLineColLoc | None:
        """The failing op's source location, if it carries one."""
        loc = getattr(self.op, "location", None)
        return loc if isinstance(loc, FileLineColLoc) else None


@dataclass
class SourceMap:
    """Where each parsed op starts in its ``.pto`` file (1-based line and column)."""

    filename: str
    positions: dict[Operation, tuple[int, int]] = field(default_factory=dict)

    def locate(self, op: Operation | None, in_file: bool = False) -> tuple[str, int, int] | None:
        """``(file, line, col)`` of an op: its ``loc(...)`` if any, else where it was parsed (``in_file``: where
        it was parsed first, for a ``.pto`` a user edits)."""
        if op is None:
            return None
        if in_file and op in self.positions:
            return (self.filename, *self.positions[op])
        if isinstance(op.location, FileLineColLoc):
            loc = op.location
            return loc.filename.data, loc.line.data, loc.column.data
        if op in self.positions:
            return (self.filename, *self.positions[op])
        return None


class _LocatingParser(CheckedParser):
    """A Parser that records where every operation starts."""

    def __init__(self, text: str, filename: str) -> None:
        super().__init__(make_pto_context(), text, filename)
        self.source_map = SourceMap(filename)
        self._text = self.lexer.input.content
        self._counted = (0, 1)  # a position and its 1-based line: newlines are counted on from there

    def parse_operation(self) -> Operation:
        """Parse one op and remember its start."""
        where = self._line_col(self.pos)
        op = super().parse_operation()
        self.source_map.positions[op] = where
        return op

    def _line_col(self, pos: int) -> tuple[int, int]:
        """``Span(pos, pos, input).get_location()``'s line and column, without counting the newlines from
        the start of the text for every op (quadratic in its length): ops start in increasing positions."""
        last, line = self._counted
        if pos < last:
            last, line = 0, 1
        line += self._text.count("\n", last, pos)
        self._counted = (pos, line)
        return line, pos - self._text.rfind("\n", 0, pos)


def parse_pto_with_source_map(text: str, filename: str = "<pto>") -> tuple[ModuleOp, SourceMap]:
    """Parse ``.pto`` text and record op positions (for ``file:line:col`` diagnostics)."""
    parser = _LocatingParser(text, filename)
    return parser.parse_module(), parser.source_map


def parse_pto(text: str, filename: str = "<pto>") -> ModuleOp:
    """Parse ``.pto`` text; raises xDSL's ParseError (located) on bad syntax."""
    return parse_pto_with_source_map(text, filename)[0]


def format_diagnostic(
    err: PTOVerifyError | ParseError, source_map: SourceMap | None = None, in_file: bool = False
) -> str:
    """``file:line:col: error: message`` (the first line of a ParseError's own report). An op is located at its
    ``loc(...)`` as MLIR does; ``in_file``: in the ``.pto`` text, its ``loc(...)`` named after the message."""
    if isinstance(err, ParseError):
        where = err.span.get_location()
        return f"{where.file}:{where.line}:{where.col}: error: {parse_error_message(err)}"
    located = source_map.locate(err.op, in_file) if source_map is not None else None
    message = err.message
    if in_file and located is not None and located[0] == source_map.filename and err.location is not None:
        loc = err.location
        message += f" (the op of {loc.filename.data}:{loc.line.data}:{loc.column.data})"
    if located is None:
        name = source_map.filename if source_map is not None else "<pto>"
        line = f"{name}: error: {message}"
    else:
        line = f"{located[0]}:{located[1]}:{located[2]}: error: {message}"
    return "\n".join([line, *(format_diagnostic(m, source_map, in_file) for m in err.more)])


def _first_failing_op(root: Operation) -> tuple[Operation, VerifyException] | None:
    """The first op (pre-order) whose own verification fails: its verifier, or xDSL's checks of the op
    in its block (``pto.tstore terminates block ... but is not a terminator``: a missing ``return``)."""
    for op in root.walk():
        try:
            op.verify_()
            verify_alone(op)
        except VerifyException as e:
            return op, e
    return None


def _op_error(op: Operation, e: VerifyException) -> PTOVerifyError:
    message = str(e)
    if not message.startswith((f"'{op.name}'", f"Operation {op.name} ")):
        message = f"'{op.name}' op {message}"
    return PTOVerifyError(message, op)


def _later_function_errors(module: ModuleOp, first: Operation) -> list[PTOVerifyError]:
    """The first failing op of each function after the one holding ``first``."""
    out: list[PTOVerifyError] = []
    seen = False
    for func in (op for op in module.walk() if isinstance(op, FuncOp)):
        if not seen:
            seen = first is func or func.is_ancestor(first)
            continue
        found = _first_failing_op(func)
        if found is not None and found[0] is not func:
            out.append(_op_error(*found))
    return out


def verify_pto(module: ModuleOp) -> None:
    """Verify structure, every op and the ptoas module rules; raise PTOVerifyError."""
    try:
        verify_tree(module)
    except VerifyException as e:
        found = _first_failing_op(module)
        if found is None:
            raise PTOVerifyError(str(e).split("\n\n")[0]) from e
        err = _op_error(*found)
        err.more = _later_function_errors(module, found[0])
        raise err from e
    for op in _entry_functions(module):
        results = op.function_type.outputs.data
        if results:
            kinds = ", ".join(str(t) for t in results)
            raise PTOVerifyError(
                f"'func.func' op @{op.sym_name.data}: PTO entry functions must return void (returns {kinds})", op
            )


def _entry_functions(module: ModuleOp) -> list[FuncOp]:
    """PTOAS's entry functions: those marked ``pto.entry``, else the only definition if there is one."""
    funcs = [op for op in module.walk() if isinstance(op, FuncOp)]
    marked = [f for f in funcs if isinstance(f.attributes.get("pto.entry"), UnitAttr)]
    if marked:
        return marked
    defs = [f for f in funcs if f.body.blocks]
    return defs if len(defs) == 1 else []


def has_locations(module: ModuleOp) -> bool:
    """Whether any op carries a file location (then locations are printed)."""
    return any(isinstance(op.location, FileLineColLoc) for op in module.walk())


def print_pto(module: Operation, *, generic: bool = False, debuginfo: bool | None = None) -> str:
    """Print a module as ``.pto`` text; locations printed when present (or when ``debuginfo``)."""
    return _print(module, UniqueNamePrinter, generic, debuginfo)[0]


def print_pto_with_source_map(module: ModuleOp, filename: str = "<pto>") -> tuple[str, SourceMap]:
    """``print_pto(module)`` and where each of ``module``'s ops starts in that text: the positions
    :func:`parse_pto_with_source_map` of the text would give its parsed ops, without parsing it."""
    text, printer = _print(module, _LocatingPrinter, False, None)
    assert isinstance(printer, _LocatingPrinter)
    return text, SourceMap(filename, printer.positions)


def _print(
    module: Operation, printer_cls: type[UniqueNamePrinter], generic: bool, debuginfo: bool | None
) -> tuple[str, UniqueNamePrinter]:
    """:func:`print_pto`'s text and the printer that printed it."""
    if debuginfo is None:
        debuginfo = isinstance(module, ModuleOp) and has_locations(module)
    out = StringIO()
    printer = printer_cls(stream=out, print_generic_format=generic, print_debuginfo=debuginfo)
    printer.print_op(module)
    out.write("\n")
    text = out.getvalue()
    if debuginfo:  # as PyPTO writes .pto: an op or argument with no source position carries no loc
        text = text.replace(" loc(unknown)", "")
    return (text if generic else _MLIR_SHORT_NAMES.sub(r"\1", text)), printer


class _LocatingPrinter(UniqueNamePrinter):
    """A printer that records the 1-based line and column where it starts each op.

    The edits :func:`_print` makes to the printed text keep them: every op starts its own line, and a
    dropped ``loc(unknown)`` or a shortened op name (``_MLIR_SHORT_NAMES``) lies after an op's start on
    its line (``test_pto_source_map`` holds them to a parse of the text)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.positions: dict[Operation, tuple[int, int]] = {}

    def print_op(self, op: Operation) -> None:
        self.positions[op] = (self._current_line + 1, self._current_column + 1)
        super().print_op(op)


# MLIR elides ``builtin.`` and, inside a func, ``func.``: PTOAS files say ``module`` and ``return``.
_MLIR_SHORT_NAMES = re.compile(r"(?m)^(\s*)(?:builtin\.(?=module\b)|func\.(?=return\b))")


@cli_main("pto_text")
def main(argv: list[str] | None = None) -> int:
    """``python -m pypto.ptoas.pto_text FILE [--generic]``: verify and print, or report the error."""
    args = sys.argv[1:] if argv is None else argv
    generic = "--generic" in args
    paths = [a for a in args if not a.startswith("--")]
    if len(paths) != 1:
        print("usage: python -m pypto.ptoas.pto_text FILE.pto [--generic]", file=sys.stderr)
        return 2
    text = read_input_text(paths[0])
    source_map: SourceMap | None = None
    try:
        module, source_map = parse_pto_with_source_map(text, paths[0])
        verify_pto(module)
    except (ParseError, PTOVerifyError) as e:
        print(format_diagnostic(e, source_map), file=sys.stderr)
        return 1
    sys.stdout.write(print_pto(module, generic=generic))
    return 0


if __name__ == "__main__":
    sys.exit(main())
