"""An MLIR parser that gives every op a source location, as ``mlir-opt`` does.

xDSL's :class:`~xdsl.parser.Parser` leaves ops without an explicit
``loc(...)`` at ``loc(unknown)``. :class:`LocatedParser` records where each op
starts in the input and gives it ``FileLineColLoc(<input name>, line, col)``
unless the text carried a location of its own, so diagnostics about parsed IR
(verifier failures, pass errors) point at input lines.

:func:`parse_error_diagnostic` turns an xDSL ``ParseError`` into a PyPTO
:class:`~pypto.diagnostics.Diagnostic`, so parse errors render like every other
error (``file:line:col: error: ...``, the line, a caret).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.context import Context
from xdsl.dialects.builtin import UNKNOWN_LOC, FileLineColLoc, IntAttr, ModuleOp, StringAttr
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.utils.exceptions import ParseError
from xdsl.utils.lexer import Span

from pypto.core.mlir_text import CheckedParser
from pypto.diagnostics import Diagnostic, Severity, SourceSpan
from pypto.utils.parse_errors import parse_error_message


class LocatedParser(CheckedParser):
    """A Parser that locates ops parsed without an explicit ``loc(...)``.

    The location is that of the op's first token (its result list, or its
    name): 1-based line and column in the input named ``name``, plus
    ``line_offset`` lines (for a chunk cut out of a larger file).
    """

    def __init__(self, ctx: Context, input: str | bytes, name: str = "<unknown>", line_offset: int = 0) -> None:
        super().__init__(ctx, input, name)
        self._name = name
        self._line_offset = line_offset
        # One frame per op being parsed: the location attributes parsed while
        # that op was the innermost one (its own ``loc(...)`` is among them).
        self._loc_frames: list[list[Attribute]] = []

    def parse_optional_location(self):  # type: ignore[override]
        """Parse ``loc(...)`` and remember it was written in the text."""
        loc = super().parse_optional_location()
        if loc is not None and self._loc_frames:
            self._loc_frames[-1].append(loc)
        return loc

    def _location_at(self, span: Span) -> FileLineColLoc:
        where = span.get_location()
        return FileLineColLoc(StringAttr(self._name), IntAttr(where.line + self._line_offset), IntAttr(where.col))

    def _register_ssa_definition(self, name: str, values: Sequence[SSAValue], span: Span) -> None:
        """Register a value name; block arguments without a ``loc(...)`` get
        the location of their name."""
        super()._register_ssa_definition(name, values, span)
        for value in values:
            if isinstance(value, BlockArgument) and value.location is UNKNOWN_LOC:
                value.location = self._location_at(span)

    def _get_op_by_name(self, name: str) -> type[Operation]:
        """Look an op up; an unknown op is reported at its name (xDSL points
        after it)."""
        try:
            return super()._get_op_by_name(name)
        except ParseError as e:
            content = self.lexer.input.content
            if isinstance(content, bytes):
                raise
            idx = content.rfind(name, 0, self._current_token.span.start)
            if idx < 0:
                raise
            end = idx + len(name)
            if idx > 0 and content[idx - 1] == '"' and content[end : end + 1] == '"':
                idx, end = idx - 1, end + 1
            raise ParseError(Span(idx, end, self.lexer.input), e.msg) from None

    def parse_operation(self) -> Operation:
        """Parse an op; locate it at its first token unless it has a ``loc``."""
        start = self._current_token.span
        self._loc_frames.append([])
        try:
            op = super().parse_operation()
        finally:
            explicit = self._loc_frames.pop()
        if not any(op.location is loc for loc in explicit):
            op.location = self._location_at(start)
        return op


def parse_located_module(
    ctx: Context, text: str, name: str, line_offset: int = 0, allow_implicit_module: bool = True
) -> ModuleOp:
    """Parse ``text`` (named ``name``) into a module whose ops carry their
    input locations; raises xDSL ``ParseError``."""
    return LocatedParser(ctx, text, name, line_offset).parse_module(allow_implicit_module)


def parse_error_diagnostic(error: ParseError, source_lines: list[str] | None = None) -> Diagnostic:
    """The PyPTO diagnostic of an xDSL ``ParseError``: its message, located at
    its span (with the span's width under the caret when on one line)."""
    span = error.span
    loc = span.get_location()
    text = span.input.content
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    end_col: int | None = None
    if span.end > span.start and "\n" not in text[span.start : span.end]:
        end_col = loc.col + (span.end - span.start)
    where = SourceSpan(loc.file, loc.line, loc.col, loc.line, end_col)
    if source_lines is None:
        source_lines = text.splitlines()
        # The span's line is counted from the start of this input; shift the
        # lines so line numbers including ``line_offset`` still index them.
        source_lines = [""] * span.line_offset + source_lines
    return Diagnostic(Severity.ERROR, parse_error_message(error), where, source_lines=source_lines)
