"""``--verify-diagnostics``: check produced diagnostics against annotations.

MLIR-style annotations in the input (``//`` in MLIR, ``#`` in DSL files)::

    %0 = "pl.tensor.add"(%a, %b) : ...  // expected-error {{do not broadcast}}
    // expected-error @+1 {{do not broadcast}}
    // expected-warning @-2 {{...}}
    // expected-remark @unknown {{...}}       (a diagnostic with no location)

``expected-error``, ``expected-warning``, ``expected-remark`` and
``expected-note`` are matched against diagnostics of that severity on that
line; the text between ``{{`` and ``}}`` must be a substring of the message.
Each annotation matches one diagnostic. A note attached to a diagnostic
(``Diagnostic.note``) may be matched by an ``expected-note`` on the
diagnostic's line, but need not be.

:func:`verify` returns the failures as :class:`~pypto.diagnostics.Diagnostic`
errors (``expected error "..." was not produced``, ``unexpected error: ...``),
rendered by the caller through the one diagnostics path.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from pypto.diagnostics import Diagnostic, Severity, SourceSpan

_ANNOTATION = re.compile(
    r"expected-(?P<sev>error|warning|remark|note)"
    r"(?:\s*@(?P<where>[+-]\d+|unknown))?"
    r"\s*\{\{(?P<msg>.*?)\}\}"
)
_MENTION = re.compile(r"expected-(?:error|warning|remark|note)\b")


@dataclass
class Expectation:
    """One ``expected-<severity>`` annotation."""

    severity: Severity
    message: str
    line: int | None
    """The line the diagnostic must be on (``None`` for ``@unknown``)."""
    span: SourceSpan
    """Where the annotation itself is written (failures point here)."""
    matched: bool = False


def parse_expectations(text: str, filename: str) -> tuple[list[Expectation], list[Diagnostic]]:
    """The annotations in ``text``, and errors for malformed ones."""
    expectations: list[Expectation] = []
    errors: list[Diagnostic] = []
    lines = text.splitlines()
    for lineno, line in enumerate(lines, start=1):
        found = False
        for m in _ANNOTATION.finditer(line):
            found = True
            where = m.group("where")
            target: int | None
            if where == "unknown":
                target = None
            elif where is not None:
                target = lineno + int(where)
            else:
                target = lineno
            span = SourceSpan(filename, lineno, m.start() + 1, lineno, m.end() + 1)
            expectations.append(Expectation(Severity(m.group("sev")), m.group("msg"), target, span))
        if not found and (mention := _MENTION.search(line)) is not None:
            span = SourceSpan(filename, lineno, mention.start() + 1, lineno, mention.end() + 1)
            errors.append(
                Diagnostic(
                    Severity.ERROR,
                    "malformed diagnostic annotation: expected '{{message}}' after it",
                    span,
                    source_lines=lines,
                )
            )
    return expectations, errors


def _same_file(a: str, b: str) -> bool:
    return a == b or os.path.realpath(a) == os.path.realpath(b)


def _claim(expectations: list[Expectation], severity: Severity, line: int | None, message: str) -> bool:
    for e in expectations:
        if not e.matched and e.severity is severity and e.line == line and e.message in message:
            e.matched = True
            return True
    return False


def verify(
    expectations: list[Expectation],
    produced: list[Diagnostic],
    filename: str,
    source_lines: list[str] | None = None,
) -> list[Diagnostic]:
    """Match produced diagnostics with the annotations of ``filename``.

    Returns the failures (empty when every annotation matched a diagnostic and
    every diagnostic matched an annotation).
    """
    failures: list[Diagnostic] = []
    for d in produced:
        if d.span is None:
            line: int | None = None
        elif _same_file(d.span.filename, filename):
            line = d.span.line
        else:
            line = -1  # in another file: no annotation can expect it
        if not _claim(expectations, d.severity, line, d.message):
            failures.append(
                Diagnostic(
                    Severity.ERROR,
                    f"unexpected {d.severity.value}: {d.message}",
                    d.span,
                    source_lines=d.source_lines if d.source_lines is not None else source_lines,
                )
            )
        if d.note:
            _claim(expectations, Severity.NOTE, line, d.note)
    for e in expectations:
        if not e.matched:
            failures.append(
                Diagnostic(
                    Severity.ERROR,
                    f'expected {e.severity.value} "{e.message}" was not produced',
                    e.span,
                    source_lines=source_lines,
                )
            )
    failures.sort(key=lambda f: (f.span.line if f.span else 0, f.span.col if f.span else 0))
    return failures
