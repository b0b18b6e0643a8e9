"""Where kernel source came from: file name, lines, offsets; spans and errors."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr

from pypto.diagnostics import SourceSpan
from pypto.errors import ParserError


@dataclass
class Source:
    """A parsed source text. ``col_offset`` is added to every AST column
    (the indentation ``textwrap.dedent`` removed); line numbers in the AST are
    already those of the file."""

    filename: str
    lines: list[str]
    col_offset: int = 0
    globals: dict[str, object] = field(default_factory=dict)

    def span(self, node: ast.AST) -> SourceSpan:
        line = getattr(node, "lineno", 1)
        col = getattr(node, "col_offset", 0) + 1 + self.col_offset
        end_line = getattr(node, "end_lineno", None) or line
        end = getattr(node, "end_col_offset", None)
        end_col = end + 1 + self.col_offset if end is not None and end_line == line else None
        return SourceSpan(self.filename, line, col, end_line, end_col)

    def loc(self, node: ast.AST) -> FileLineColLoc:
        line = getattr(node, "lineno", 1)
        col = getattr(node, "col_offset", 0) + 1 + self.col_offset
        return FileLineColLoc(StringAttr(self.filename), IntAttr(line), IntAttr(col))

    def error(
        self, cls: type[ParserError], message: str, node: ast.AST, hint: str | None = None, note: str | None = None
    ) -> ParserError:
        """A located error of class ``cls`` (raise it)."""
        return cls(message, self.span(node), hint=hint, note=note, source_lines=self.lines)


def dotted(node: ast.AST) -> str | None:
    """``pl.tile.load`` for an attribute chain of names, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None
