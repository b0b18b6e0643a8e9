"""The reproducer file a failing pass leaves: its format, writer and reader.

**Reproducer.** When a pass fails during ``compile`` with dumps on,
``passes_dump/reproducer`` holds::

    # pypto reproducer v1
    # failed-pass: 03 CtrlFlowTransform
    # error: InternalError: Internal error: pass CtrlFlowTransform failed: ...
    # first-index: 3
    # pipeline: ctrl-flow-transform,convert-to-ssa,...
    # verification-level: BASIC
    # options: {"backend_type": "Ascend910B", ...}
    # ---- input IR ----
    <the failing pass's input, as DSL text>

The header lines are Python comments, so the whole file is also a DSL file.
``pipeline`` lists the remaining passes by ``pypto-opt`` name, starting with
the failing one; ``options`` are the compile's ``PipelineOptions``.
:func:`pypto.driver.resume.run_reproducer` (``pypto-opt --run-reproducer FILE``)
parses the IR and runs that pipeline, which raises the same error.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pypto.diagnostics import Diagnostic, DiagnosticError, Severity, SourceSpan
from pypto.passes.base import PyPTOPass

from .manager import PipelineOptions
from .verification import VerificationLevel, parse_verification_level

MAGIC = "# pypto reproducer v1"
IR_MARKER = "# ---- input IR ----"
_HEADER = re.compile(r"^# (?P<key>[a-z-]+): ?(?P<value>.*)$")


class ResumeError(DiagnosticError, ValueError):
    """A dump or reproducer that cannot be resumed or replayed: a user error,
    located at the file (line 1 unless given)."""

    def __init__(self, path: str | os.PathLike[str], message: str, line: int = 1):
        super().__init__(Diagnostic(Severity.ERROR, message, SourceSpan(os.fspath(path), line, 1)))


def _kebab_name(pass_cls: type[Any]) -> str:
    return str(getattr(pass_cls, "name", pass_cls.__name__))


def format_reproducer(
    ir_text: str,
    remaining: Sequence[type[PyPTOPass]],
    index: int,
    error: BaseException,
    options: dict[str, Any],
) -> str:
    """The reproducer text (see the module docstring)."""
    first = str(error).splitlines()[0] if str(error) else ""
    opts = dict(options)
    level = opts.pop("verification_level", VerificationLevel.BASIC)
    failing = str(getattr(remaining[0], "PASS_NAME", remaining[0].__name__)) if remaining else "?"
    header = [
        MAGIC,
        f"# failed-pass: {index:02d} {failing}",
        f"# error: {type(error).__name__}: {first}",
        f"# first-index: {index}",
        f"# pipeline: {','.join(_kebab_name(p) for p in remaining)}",
        f"# verification-level: {VerificationLevel(int(level)).name}",
        f"# options: {json.dumps(opts, sort_keys=True, default=str)}",
        IR_MARKER,
    ]
    return "\n".join(header) + "\n" + ir_text


@dataclass
class Reproducer:
    """A parsed reproducer file."""

    pipeline: list[str]
    ir_text: str
    first_index: int = 1
    verification_level: VerificationLevel = VerificationLevel.BASIC
    options: PipelineOptions = field(default_factory=PipelineOptions)
    failed_pass: str | None = None
    error: str | None = None
    ir_line: int = 1
    """The 1-based line of the file where the IR starts."""


def read_reproducer(path: str | os.PathLike[str]) -> Reproducer:
    """Parse a reproducer file (:class:`ResumeError` when it is not one)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ResumeError(path, f"not a pypto reproducer (not UTF-8 text at byte {e.start})") from None
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\n") != MAGIC:
        raise ResumeError(path, f"not a pypto reproducer (first line must be {MAGIC!r})")
    fields: dict[str, str] = {}
    field_line: dict[str, int] = {}
    for i, line in enumerate(lines[1:], start=1):
        if line.rstrip("\n") == IR_MARKER:
            ir_start = i + 1
            break
        m = _HEADER.match(line.rstrip("\n"))
        if m is not None:
            fields[m.group("key")] = m.group("value")
            field_line[m.group("key")] = i + 1
    else:
        raise ResumeError(path, f"no {IR_MARKER!r} line")
    if "pipeline" not in fields:
        raise ResumeError(path, "no '# pipeline:' line")

    def header(key: str, default: str, convert: Callable[[str], Any], expected: str) -> Any:
        raw = fields.get(key, default)
        try:
            return convert(raw)
        except (ValueError, TypeError, AttributeError) as e:
            raise ResumeError(
                path, f"malformed reproducer header '# {key}: {raw}': expected {expected} ({e})", field_line.get(key, 1)
            ) from None

    return Reproducer(
        pipeline=[p for p in fields["pipeline"].split(",") if p],
        ir_text="".join(lines[ir_start:]),
        first_index=header("first-index", "1", int, "a pass number"),
        verification_level=header("verification-level", "BASIC", parse_verification_level, "a verification level"),
        options=header("options", "{}", lambda raw: PipelineOptions.from_dict(json.loads(raw or "{}")), "a JSON object"),
        failed_pass=fields.get("failed-pass"),
        error=fields.get("error"),
        ir_line=ir_start + 1,
    )
