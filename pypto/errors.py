"""PyPTO's error classes (pl-dsl.md §6).

User mistakes in DSL source raise a ``ParserError`` subclass that renders as a
located diagnostic (``file:line:col: error: ...``, the line, a caret, a hint).
Broken compiler invariants raise ``InternalError``.
"""

from __future__ import annotations

import os

from .diagnostics import Diagnostic, DiagnosticError, Severity, SourceSpan

BUG_NOTE = "this is a bug in PyPTO, not in your program; please report it"
"""The note an internal error carries (a pass's InternalError, a tool's exit 2)."""


class Error(Exception):
    """Base of PyPTO's user-facing errors (verification failures map here)."""


class InvalidArgumentError(Error, ValueError):
    """A public API argument with a value it cannot take (the message names it
    and what is expected); also a ``ValueError``."""


class ArgumentTypeError(Error, TypeError):
    """A public API argument of the wrong type; also a ``TypeError``."""


class InternalError(RuntimeError):
    """A broken compiler invariant: a bug in PyPTO, not in the user's code."""

    def __init__(self, message: str):
        super().__init__(f"Internal error: {message}")


class PartialCodegenError(RuntimeError):
    """Codegen failed for some units; the others were written.

    ``files`` (relative path -> text) are the files written before the error
    was raised; ``failures`` maps each failed unit to its first error line.
    """

    def __init__(self, message: str, files: dict[str, str] | None = None, failures: dict[str, str] | None = None):
        super().__init__(message)
        self.files: dict[str, str] = dict(files or {})
        self.failures: dict[str, str] = dict(failures or {})

    def write(self, root: str | os.PathLike[str]) -> None:
        """Write :attr:`files` under ``root`` (atomically, creating folders)."""
        from .utils.atomic import atomic_write_text

        for rel, text in sorted(self.files.items()):
            path = os.path.join(os.fspath(root), rel)
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            atomic_write_text(path, text)


class KernelCodegenError(DiagnosticError, PartialCodegenError):
    """A kernel no code can be generated for, found (and located) by a pass before codegen: a
    :class:`DiagnosticError` that is also upstream's :class:`PartialCodegenError` (which upstream raises
    for it later, at codegen)."""


class ParserError(Exception):
    """A mistake in DSL source, located at ``span``."""

    kind = "error"

    def __init__(
        self,
        message: str,
        span: SourceSpan | None = None,
        hint: str | None = None,
        note: str | None = None,
        source_lines: list[str] | None = None,
    ):
        self.message = message
        self._span = span
        self.hint = hint
        self.note = note
        self.source_lines = source_lines
        super().__init__(message)

    @property
    def span(self) -> dict[str, object] | None:
        return self._span.as_dict() if self._span else None

    @property
    def location(self) -> SourceSpan | None:
        return self._span

    def diagnostic(self) -> Diagnostic:
        return Diagnostic(Severity.ERROR, self.message, self._span, self.hint, self.note, source_lines=self.source_lines)

    def __str__(self) -> str:
        return self.diagnostic().render()


class ParserSyntaxError(ParserError):
    """Python syntax the DSL does not accept, or malformed DSL constructs."""


class ProgramCountError(ParserSyntaxError, ValueError):
    """A pl text without exactly one ``@pl.program`` / ``@pl.function``; also a ``ValueError``, what
    upstream's ``pl.parse`` raises for it."""


class PythonSyntaxError(ParserSyntaxError, SyntaxError):
    """Text that is not Python; also a ``SyntaxError``, as upstream's ``pl.parse`` raises."""


class ParserTypeError(ParserError):
    """Wrong types: dtype/shape/space mismatches, bad annotations."""


class UndefinedVariableError(ParserError):
    """A name that is not defined at its use."""


class SSAViolationError(ParserError):
    """A value used where SSA form forbids it (e.g. rebinding under strict_ssa)."""


class UnsupportedFeatureError(ParserError):
    """Valid Python the DSL does not support."""


class InvalidOperationError(ParserError):
    """An unknown op, or an op called with the wrong arguments."""


class ScopeIsolationError(ParserError):
    """An op used outside the scope it must live in (e.g. outside ``pl.at``)."""
