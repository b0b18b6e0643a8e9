"""Resume the pipeline from a pass dump, and replay a failure's reproducer.

**Resume.** Every dump is a resume point: :func:`resume` loads
``passes_dump/NN_after_X.py`` (or ``00_frontend.py``) with ``pl.loads`` and
runs passes ``NN+1..end`` of the strategy's pipeline (the same
``memory_planner`` as the compile); the result prints like the compile's last
dump. ``pypto-opt passes_dump/NN_after_X.py --resume`` is the command line.

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
:func:`run_reproducer` (``pypto-opt --run-reproducer FILE``) parses the IR and
runs that pipeline, which raises the same error.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pypto.diagnostics import Diagnostic, DiagnosticError, Severity, SourceSpan

from .passes.base import PyPTOPass
from .passes.registry import get_pass
from .pipeline import MemoryPlanner, OptimizationStrategy, PassManager, PipelineOptions
from .program import Program
from .verification import VerificationLevel, parse_verification_level

MAGIC = "# pypto reproducer v1"
IR_MARKER = "# ---- input IR ----"
_DUMP_NAME = re.compile(r"^(?P<n>\d+)_(?:after_(?P<pass>\w+)|frontend)\.py$")
_HEADER = re.compile(r"^# (?P<key>[a-z-]+): ?(?P<value>.*)$")


class ResumeError(DiagnosticError, ValueError):
    """A dump or reproducer that cannot be resumed or replayed: a user error,
    located at the file (line 1 unless given)."""

    def __init__(self, path: str | os.PathLike[str], message: str, line: int = 1):
        super().__init__(Diagnostic(Severity.ERROR, message, SourceSpan(os.fspath(path), line, 1)))


def parse_dump_name(path: str | os.PathLike[str]) -> tuple[int, str | None]:
    """``12_after_OptimizeOrchTensors.py`` -> ``(12, "OptimizeOrchTensors")``;
    ``00_frontend.py`` -> ``(0, None)``."""
    name = Path(path).name
    m = _DUMP_NAME.match(name)
    if m is None:
        raise ResumeError(path, f"{name!r} is not a pass dump name (NN_after_<Pass>.py or 00_frontend.py)")
    return int(m.group("n")), m.group("pass")


def resume_manager(
    path: str | os.PathLike[str],
    strategy: OptimizationStrategy = OptimizationStrategy.Default,
    memory_planner: MemoryPlanner | str | None = None,
    verification_level: VerificationLevel | int | str | None = None,
) -> PassManager:
    """The passes after the dump ``path`` (numbered as in the full pipeline)."""
    done, pass_name = parse_dump_name(path)
    full = PassManager.get_strategy(strategy, memory_planner, verification_level=verification_level)
    if done > len(full.passes):
        raise ResumeError(path, f"the pipeline has only {len(full.passes)} passes")
    if pass_name is not None and full.pass_names[done - 1] != pass_name:
        raise ResumeError(
            path,
            f"pass {done:02d} of the pipeline (memory_planner={full.memory_planner.value}) "
            f"is {full.pass_names[done - 1]}, not {pass_name}"
        )
    return full.tail(done)


def resume(
    path: str | os.PathLike[str],
    strategy: OptimizationStrategy = OptimizationStrategy.Default,
    memory_planner: MemoryPlanner | str | None = None,
    verification_level: VerificationLevel | int | str | None = None,
) -> Program:
    """Load a dump and run the rest of the pipeline; returns the final program."""
    from pypto.language import loads

    manager = resume_manager(path, strategy, memory_planner, verification_level)
    return manager.run(loads(path))


# ---- reproducers ------------------------------------------------------------------


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
    text = Path(path).read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\n") != MAGIC:
        raise ResumeError(path, f"not a pypto reproducer (first line must be {MAGIC!r})")
    fields: dict[str, str] = {}
    for i, line in enumerate(lines[1:], start=1):
        if line.rstrip("\n") == IR_MARKER:
            ir_start = i + 1
            break
        m = _HEADER.match(line.rstrip("\n"))
        if m is not None:
            fields[m.group("key")] = m.group("value")
    else:
        raise ResumeError(path, f"no {IR_MARKER!r} line")
    if "pipeline" not in fields:
        raise ResumeError(path, "no '# pipeline:' line")
    try:
        return Reproducer(
            pipeline=[p for p in fields["pipeline"].split(",") if p],
            ir_text="".join(lines[ir_start:]),
            first_index=int(fields.get("first-index", "1")),
            verification_level=parse_verification_level(fields.get("verification-level", "BASIC")),
            options=PipelineOptions.from_dict(json.loads(fields.get("options") or "{}")),
            failed_pass=fields.get("failed-pass"),
            error=fields.get("error"),
            ir_line=ir_start + 1,
        )
    except ValueError as e:  # a malformed header value (JSON, number, level)
        raise ResumeError(path, f"malformed reproducer header: {e}") from None


def run_reproducer(path: str | os.PathLike[str]) -> Program:
    """Replay a reproducer: parse its IR and run its pipeline (raises the
    recorded error when it still reproduces; returns the program otherwise).

    The IR is parsed with the file's real line numbers (the header lines are
    blanked), so locations point into the reproducer."""
    from pypto.language import parse

    repro = read_reproducer(path)
    try:
        passes = [get_pass(name) for name in repro.pipeline]
    except KeyError as e:
        raise ResumeError(path, str(e.args[0] if e.args else e)) from None
    program = parse("\n" * (repro.ir_line - 1) + repro.ir_text, filename=str(path))
    manager = PassManager(passes, verification_level=repro.verification_level, first_index=repro.first_index)  # type: ignore[arg-type]
    return manager.run(program, options=repro.options)
