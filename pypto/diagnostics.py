"""One diagnostics path: located errors, warnings and remarks, rendered alike
in the Python API, the command-line tools and the pass ``.log`` files.

Rendering (the shape PyPTO's pass logs use)::

    kernel.py:5:13: error: unknown op 'pl.tile.foo'
     5 |         t = pl.tile.foo(x)
       |             ^~~~~~~~~~~
    hint: did you mean 'pl.tile.load'?
"""

from __future__ import annotations

import linecache
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

_IDENT = re.compile(r"[A-Za-z_]\w*")


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    REMARK = "remark"
    NOTE = "note"


@dataclass(frozen=True)
class SourceSpan:
    """A 1-based line/column range in a source file."""

    filename: str
    line: int
    col: int
    end_line: int | None = None
    end_col: int | None = None

    def as_dict(self) -> dict[str, object]:
        return {
            "filename": self.filename,
            "begin_line": self.line,
            "begin_column": self.col,
            "end_line": self.end_line or self.line,
            "end_column": self.end_col or self.col,
        }

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.col}"


@dataclass
class Diagnostic:
    severity: Severity
    message: str
    span: SourceSpan | None = None
    hint: str | None = None
    note: str | None = None
    rule: str | None = None
    source_lines: list[str] | None = field(default=None, repr=False)
    code: str | None = None
    """A perf-hint code (``PH001``); hints are remarks with a code."""
    pass_name: str | None = None
    """The pass that emitted it (stamped by the PassManager)."""

    def render(self, display: Callable[[str], str] | None = None) -> str:
        """``file:line:col: <severity>: <message> [<rule>]``, the source line
        with a caret, hint and note; ``display`` maps the file name (e.g. to a
        relative path). Without a source line: ``file: <severity>: ...``."""
        rule = f" [{self.rule}]" if self.rule else ""
        excerpt = source_excerpt(self.span, self.source_lines) if self.span is not None else []
        where = ""
        if self.span is not None:
            name = display(self.span.filename) if display else self.span.filename
            where = f"{name}:{self.span.line}:{self.span.col}: " if excerpt or display is None else f"{name}: "
        out = [f"{where}{self.severity.value}: {self.message}{rule}", *excerpt]
        if self.hint:
            out.append(f"hint: {self.hint}")
        if self.note:
            out.append(f"note: {self.note}")
        return "\n".join(out)


def source_excerpt(span: SourceSpan, lines: list[str] | None = None) -> list[str]:
    """The source line of a span with a caret under it (empty if unknown)."""
    if lines is not None and 0 < span.line <= len(lines):
        text = lines[span.line - 1]
    else:
        text = linecache.getline(span.filename, span.line)
    text = text.rstrip("\n")
    if not text:
        return []
    num = str(span.line)
    pad = " " * len(num)
    start = max(span.col - 1, 0)
    if span.end_line in (None, span.line) and span.end_col and span.end_col > span.col:
        width = span.end_col - span.col
    elif span.end_line not in (None, span.line):
        width = max(len(text) - start, 1)
    else:  # no end: underline the identifier at the column, if any
        m = _IDENT.match(text, start)
        width = m.end() - start if m else 1
    caret = "^" + "~" * (width - 1)
    lead = "".join("\t" if c == "\t" else " " for c in text[:start])  # a tab under a tab: the caret stays under
    return [f" {num} | {text}", f" {pad} | {lead}{caret}"]


def op_span(op: object) -> SourceSpan | None:
    """The DSL/MLIR source location of an xDSL op, if it has one."""
    from xdsl.dialects.builtin import FileLineColLoc

    loc = getattr(op, "location", None)
    if isinstance(loc, FileLineColLoc):
        return SourceSpan(loc.filename.data, loc.line.data, loc.column.data)
    return None


class DiagnosticError(Exception):
    """A user error found by a pass or a verifier, carrying its diagnostic."""

    def __init__(self, diagnostic: Diagnostic):
        self.diagnostic = diagnostic
        super().__init__(diagnostic.render())


class DiagnosticCollector:
    """Collects warnings and remarks emitted while passes run."""

    def __init__(self) -> None:
        self.items: list[Diagnostic] = []

    def emit(self, diagnostic: Diagnostic) -> None:
        self.items.append(diagnostic)


_collectors: list[DiagnosticCollector] = []


class collecting:
    """``with collecting() as c:`` -- diagnostics emitted inside land in ``c``."""

    def __enter__(self) -> DiagnosticCollector:
        c = DiagnosticCollector()
        _collectors.append(c)
        return c

    def __exit__(self, *exc: object) -> None:
        _collectors.pop()


def emit(diagnostic: Diagnostic) -> None:
    """Report a warning/remark to the innermost collector (stderr if none)."""
    if _collectors:
        _collectors[-1].emit(diagnostic)
    else:
        import sys

        print(diagnostic.render(), file=sys.stderr)


def emit_at(
    op: object, severity: Severity, message: str, rule: str | None = None, code: str | None = None
) -> None:
    """Emit a diagnostic located at ``op``; a perf hint passes its ``code``
    (``PH001``) and check name as ``rule`` (``TileInnermostDimGranularity``)."""
    emit(Diagnostic(severity, message, op_span(op), rule=rule, code=code))


def error_at(op: object, message: str, hint: str | None = None) -> DiagnosticError:
    """A DiagnosticError located at ``op`` (raise it)."""
    return DiagnosticError(Diagnostic(Severity.ERROR, message, op_span(op), hint=hint))
